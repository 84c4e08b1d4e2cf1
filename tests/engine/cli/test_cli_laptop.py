"""The grade command on a student's laptop: it finds exercises/ from where it is
run, never writes into exercises/, says what to do when the environment is not
set up, and gives "push again" advice only inside GitHub Actions."""
import json
import re

import pytest
import os
import pathlib
import subprocess
import sys

from support.cli import autograder_command
from support.helpers import ROOT, make_submission

from autograder import locations
from autograder.cli import common
from autograder.judge_process import grading, preflight
from autograder.reports import safe_text


def test_default_submission_from_the_root_inside_exercises_and_elsewhere(tmp_path):
    (tmp_path / "exercises").mkdir()
    assert preflight.default_submission(tmp_path) == "exercises"
    make_submission(tmp_path / "exercises")
    assert preflight.default_submission(tmp_path / "exercises") == str(tmp_path / "exercises")
    assert preflight.default_submission(tmp_path / "elsewhere") == str(locations.REPO_ROOT / "exercises")


def test_results_are_never_written_into_the_submission(tmp_path):
    folder = tmp_path / "exercises"
    (folder / "sub").mkdir(parents=True)
    assert preflight.default_results(folder, cwd=folder) == str(tmp_path / "results.json")
    assert preflight.default_results(folder, cwd=folder / "sub") == str(tmp_path / "results.json")
    assert preflight.default_results(folder, cwd=tmp_path) == "results.json"


def test_missing_folder_says_where_to_run_from(tmp_path):
    message = preflight.usage_problem(tmp_path / "nope", "en")
    assert "no such folder" in message and "repository root" in message
    assert "仓库根目录" in preflight.usage_problem(tmp_path / "nope", "zh")


def test_missing_packages_say_to_activate_the_venv(tmp_path, monkeypatch):
    monkeypatch.setattr(preflight, "missing_requirements", lambda: ["torch"])
    message = preflight.usage_problem(tmp_path, "en")
    assert "Not installed in this Python" in message and ": torch." in message  # both languages, no catalog
    assert "没有安装：torch。" in message and "source .venv/bin/activate" in message
    assert "--index-url https://download.pytorch.org/whl/cpu" in message and "pip install -r requirements.txt" in message


def test_push_again_only_inside_actions(monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    laptop = grading.crash_report("exercises", 1, "boom").tests[0].output
    assert "push again" not in laptop and "grade again" in laptop
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert "push again" in grading.crash_report("exercises", 1, "boom").tests[0].output


@pytest.mark.slow
def test_grading_from_inside_exercises_writes_nothing_there(tmp_path):
    repo = tmp_path / "repo"
    make_submission(repo / "exercises")
    before = sorted(os.listdir(repo / "exercises"))
    done = autograder_command("grade", "--quiet", "--module", "amp_update", "--lang", "en", cwd=repo / "exercises",
                              env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(os.listdir(repo / "exercises")) == before
    results = json.loads((repo / "results.json").read_text())
    assert {tag for test in results["tests"] for tag in test["tags"]} == {"amp_update"}
    assert results["score"] == results["max_score"] > 0
    assert "PASS" not in done.stdout and "TOTAL" in done.stdout, "--quiet prints only the totals"
    assert str(pathlib.Path("..") / "results.json") in done.stdout or str(repo / "results.json") in done.stdout


def test_without_the_venv_it_says_what_to_do(tmp_path):
    """`python -S` sees no site-packages: no torch, no rich, no babel -- as on a laptop
    where the venv was not activated. The grade still writes its results and says why."""
    done = subprocess.run([sys.executable, "-S", "-m", "autograder", "grade", "--submission",
                           str(ROOT / "exercises"), "--lang", "en"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "activate" in done.stderr and "torch" in done.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["score"] == 0 and "pip install -r requirements.txt" in results["tests"][0]["output"]


def _unconfined_report(platform, monkeypatch, tmp_path):
    """A grade whose boxes got what the spawned workers of ``platform`` get."""
    from autograder.judging.results import GradeReport, TestResult
    from autograder.sandbox import isolation
    from autograder.sandbox.client import Limits
    from autograder.sandbox.confine.box_config import for_module
    from autograder.sandbox.confine import platforms

    monkeypatch.setattr(platforms.sys, "platform", platform)
    monkeypatch.setattr(platforms.os, "name", "nt" if platform == "win32" else "posix")
    monkeypatch.setattr(platforms.shutil, "which", lambda name: None)
    monkeypatch.setattr(platforms.os.path, "exists", lambda path: platform == "darwin")
    config = for_module({"submission": str(tmp_path), "scratch": str(tmp_path), "log": str(tmp_path / "log")},
                        "toy_sum", Limits().for_box())
    report = isolation.combine([platforms.wrap_command(["python"], config)[1]])
    monkeypatch.undo()
    assert report["confined"] is False
    test = TestResult(name="toy_sum: a test", module="toy_sum", max_score=1.0, score=1.0, passed=True,
                      output="", visibility="visible")
    return GradeReport(tests=[test], seed=1, isolation=report, lang="zh")


def test_a_students_own_grade_on_macos_or_windows_says_what_that_means_in_their_language(monkeypatch, tmp_path):
    from autograder.reports import terminal

    for platform in ("darwin", "win32"):
        report = _unconfined_report(platform, monkeypatch, tmp_path)
        student = terminal.render(report, lang="zh", width=80, audience="student")
        assert "你的代码在这里没有运行在沙箱中" in student and "分数的计算方式与 GitHub 上完全相同" in student
        assert "警告" not in student and "人工核查" not in student
        assert not re.search(r"macOS:|Windows:|no process namespace|confinement exists", student)
        english = terminal.render(report, lang="en", width=80, audience="student")
        assert "your score is computed exactly as on GitHub" in english.replace("\n", " ")
        staff = terminal.render(report, lang="zh", width=80)  # grade-many, --submission, --classroom
        assert "警告" in staff and "人工核查" in staff and ("macOS:" in staff or "Windows:" in staff)


def test_only_a_students_own_grade_is_read_as_theirs():
    args = type("Args", (), {"submission": None, "classroom": False})
    assert common.audience(args) == "student"
    args.submission = "path/to/exercises"
    assert common.audience(args) == "staff"
    args.submission, args.classroom = None, True
    assert common.audience(args) == "staff"


WITHOUT_NUMPY = '''
import sys
class _NoNumpy:  # a student's environment: requirements.txt brings no numpy
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "numpy":
            raise ModuleNotFoundError("No module named 'numpy'", name="numpy")
sys.meta_path.insert(0, _NoNumpy())
'''


@pytest.mark.slow
def test_no_numpy_warning_where_numpy_is_not_installed(tmp_path):
    """torch warns on import without numpy; neither the public tests nor conformance show it."""
    from concurrent.futures import ThreadPoolExecutor

    (tmp_path / "sitecustomize.py").write_text(WITHOUT_NUMPY)
    env = dict(os.environ, PYTHONPATH=str(tmp_path), AMP_EXERCISES_DIR=str(ROOT / "solutions"))
    with ThreadPoolExecutor(2) as pool:  # three fresh interpreters, two at a time
        torch_alone = pool.submit(subprocess.run, [sys.executable, "-c", "import torch"], env=env,
                                  capture_output=True, text=True)
        public = pool.submit(subprocess.run, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                              str(ROOT / "exercises" / "tests" / "test_amp_update.py")],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        conformance = pool.submit(autograder_command, "conformance", "--submission", ROOT / "solutions", "--lang",
                                  "en", env=env, timeout=300)
    torch_alone, public, conformance = torch_alone.result(), public.result(), conformance.result()
    assert "Failed to initialize NumPy" in torch_alone.stderr  # the simulation holds
    assert public.returncode == 0, public.stdout[-2000:]
    assert "NumPy" not in public.stdout + public.stderr
    assert conformance.returncode == 0, conformance.stdout + conformance.stderr
    assert "NumPy" not in conformance.stdout + conformance.stderr


def test_argparse_speaks_the_students_language(capsys):
    import argparse

    import pytest

    from autograder.__main__ import main

    with pytest.raises(SystemExit) as stopped:
        main(["grade", "--lang", "zh", "--module", "nope"])
    error = capsys.readouterr().err
    assert stopped.value.code == 2
    assert error.startswith("用法：python -m autograder grade")
    assert "python -m autograder grade：错误：参数 --module：无效的选项值 'nope'（可选：'amp_update'" in \
        error.replace("\n", "")
    assert "usage:" not in error and "invalid choice" not in error
    with pytest.raises(SystemExit):
        main(["watch", "--help", "--lang=zh"])
    shown = capsys.readouterr().out
    assert "显示本帮助并退出" in shown and "选项" in shown and "保存" in shown and "show this help" not in shown
    with pytest.raises(SystemExit):
        main(["grade", "--lang", "en", "--seed", "x"])
    error = capsys.readouterr().err
    assert error.startswith("usage: ") and "error: argument --seed: invalid int value: 'x'" in " ".join(error.split())
    assert argparse._("usage: ") == "usage: "  # argparse is itself again afterwards


def test_a_warning_wraps_at_the_terminals_width(capsys, monkeypatch):
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", "80")
    problem = preflight.usage_problem(pathlib.Path("no/such/folder/anywhere"), "zh")
    safe_text.warn(problem)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) > 1 and all(cell_len(line) <= 80 for line in lines), lines
    assert "".join(lines).replace(" ", "") == problem.replace(" ", "")


@pytest.mark.parametrize("argv", [["grade", "--help"], ["watch", "--help"], ["grade", "--module", "nope"],
                                  ["nope"], ["grade", "--quiet", "--verbose"]])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_argparse_output_wraps_at_80_columns_between_words(capsys, monkeypatch, argv, lang):
    from rich.cells import cell_len

    from autograder.__main__ import main

    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main([*argv, "--lang", lang])
    shown = capsys.readouterr()
    lines = (shown.out + shown.err).splitlines()
    assert lines and all(cell_len(line) <= 80 for line in lines), "\n".join(lines)
    text = "\n".join(lines)
    for name in ("amp_update", "loss_scaler", "amp_training_step"):  # never "amp" / "_update"
        assert text.count(name) == " ".join(text.split()).count(name)
    assert "{amp_update," not in text  # --module MODULE: the choices are listed in its help
