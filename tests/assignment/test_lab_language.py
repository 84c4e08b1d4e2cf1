"""The lab speaks the grader's language: --lang, AUTOGRADER_LANG or pyproject.toml's
[tool.autograder] lang; and it says what to install when transformers is missing."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from support.language_check import english_runs
from support.torch_threads import one_torch_thread  # noqa: F401 - the lab's small steps, run here
from support.lab_script import LAB_SCRIPT, lab

CJK = "\u4e00"


def has_chinese(text):
    return any(ch >= CJK for ch in text)


def run_lab(*args, cwd, env_lang=None, timeout=180):
    import os

    env = {key: value for key, value in os.environ.items() if key != "AUTOGRADER_LANG"}
    if env_lang:
        env["AUTOGRADER_LANG"] = env_lang
    return subprocess.run([sys.executable, str(LAB_SCRIPT), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_cpu_smoke_prints_chinese_with_lang_zh(tmp_path, monkeypatch, capsys):
    """In this process (test_gpu_lab.py runs cpu_smoke as a command): the lab's main from the run's folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AUTOGRADER_LANG", raising=False)
    code = lab.main(["--run-mode", "cpu_smoke", "--output-dir", "out", "--lang", "zh", "--seq-len", "16",
                     "--repeats", "2"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert has_chinese(printed.out) and "记录已写入" in printed.out
    assert english_runs(printed.out) == [], printed.out
    # The record is data for staff and the checker: English keys and values whatever the language.
    assert not has_chinese((tmp_path / "out" / "train-amp-backward_cpu_smoke.json").read_text(encoding="utf-8"))


def test_dry_run_and_errors_follow_the_environment_and_pyproject(tmp_path):
    plan = run_lab(cwd=tmp_path, env_lang="zh")
    assert plan.returncode == 0 and has_chinese(plan.stdout)
    assert english_runs(plan.stdout) == [], plan.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.autograder]\nlang = "zh"\n', encoding="utf-8")
    error = run_lab("--run-mode", "cpu_smoke", "--run-label", "../x", cwd=tmp_path)
    assert error.returncode == 2 and has_chinese(error.stderr)
    assert english_runs(error.stderr) == [], error.stderr
    english = run_lab("--lang", "en", cwd=tmp_path, env_lang="zh")  # the option beats both
    assert "dry run" in english.stdout and not has_chinese(english.stdout)


def test_every_message_exists_in_both_languages_with_the_same_placeholders():
    import string

    text = sys.modules["amp_lab_text"]
    for key, (en, zh) in text.MESSAGES.items():
        fields = [{name for _, name, _, _ in string.Formatter().parse(s) if name} for s in (en, zh)]
        assert fields[0] == fields[1], key
        assert has_chinese(zh) or key == "error_prefix", key
        assert english_runs(zh) == [], (key, zh)


@pytest.mark.parametrize("lang, expected", [("en", "pip install -r gpu_lab/requirements.txt"),
                                            ("zh", "请安装实验自己的依赖")])
def test_missing_transformers_says_what_to_install(lang, expected, monkeypatch, tmp_path, capsys):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "transformers" else real_find_spec(name, *a))
    assert lab.main(["--run-mode", "cpu_smoke", "--output-dir", str(tmp_path), "--lang", lang]) == 2
    error = capsys.readouterr().err
    assert expected in error and "gpu_lab/requirements.txt" in error and "Traceback" not in error
    assert list(tmp_path.iterdir()) == []
