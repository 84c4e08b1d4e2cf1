"""export-gradescope: the zip's contents, its setup.sh building the grader's environment
from the zip's own files in a fresh venv, and its run_autograder grading in that
environment, in a temporary folder laid out as Gradescope lays out /autograder
(source/, submission/, results/, and the venv setup.sh made).

Nothing of the development venv is used to grade: the environment is what setup.sh
installs from the zip's requirements.txt (tests/support/export_envs.py keeps it between
sessions under a key of exactly those files)."""
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import zipfile

import pytest
from support.cli import autograder_command
from support.helpers import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from support import export_envs  # noqa: E402

from autograder.exports import gradescope as gradescope_export  # noqa: E402
from autograder.exports import runtime  # noqa: E402

SEED = 31337
MODULES = ("amp_update", "loss_scaler", "amp_training_step")
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def export(destination, *options):
    proc = autograder_command("export-gradescope", destination, *options, env=ENV, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return destination


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """lang -> zip: the course's default (no --lang), and each language asked for."""
    folder = tmp_path_factory.mktemp("gradescope")
    return {"default": export(folder / "default.zip"),
            "zh": export(folder / "zh.zip", "--lang", "zh"),
            "en": export(folder / "en.zip", "--lang", "en")}


def unpack(zip_path, folder):
    """The zip as Gradescope unpacks it into /autograder/source (modes kept)."""
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(folder)
        for info in archive.infolist():  # zipfile drops modes; Gradescope's unzip keeps them
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(folder / info.filename, mode)
    return folder


@pytest.fixture(scope="module")
def environment(exported):
    """The folder whose venv/ the zip's setup.sh built (AUTOGRADER_ROOT=that folder) in a
    fresh venv of the machine's python3, from the zip's files only."""
    if not export_envs.LINUX:
        pytest.skip(export_envs.NOT_LINUX)
    python = export_envs.base_python()
    if python is None:
        pytest.skip("no python3 outside this venv to build a fresh environment with")
    with zipfile.ZipFile(exported["zh"]) as archive:
        files = {f"source/{name}": archive.read(name) for name in ("setup.sh", "requirements.txt")}

    def build(folder):
        unpack(exported["zh"], folder / "source")
        export_envs.run_logged(["bash", str(folder / "source" / "setup.sh")], folder / "setup.log",
                               env=export_envs.clean_environ(AUTOGRADER_ROOT=str(folder), AUTOGRADER_NO_APT="1"),
                               timeout=1800)

    return export_envs.cached("gradescope", files, build, python)


def gradescope_tree(base, zip_path, environment=None):
    """base/autograder/{source,submission,results} with the zip unpacked in source/ and,
    given ``environment``, the venv its setup.sh built as base/autograder/venv."""
    tree = base / "autograder"
    unpack(zip_path, tree / "source")
    for part in ("submission", "results"):
        (tree / part).mkdir(parents=True)
    if environment is not None:
        (tree / "venv").symlink_to(environment / "venv", target_is_directory=True)
    return tree


def run_autograder(tree):
    env = export_envs.clean_environ(AUTOGRADER_ROOT=str(tree), AUTOGRADER_SEED=str(SEED))
    proc = subprocess.run([str(tree / "source" / "run_autograder")], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((tree / "results" / "results.json").read_text(encoding="utf-8")), proc.stdout


def single_grade(grade_dir):
    """The solutions graded in this process (the engine `grade` runs), in English: the results' dict."""
    return grade_dir(seed=SEED, lang="en").to_gradescope()


def test_zip_contents(exported):
    with zipfile.ZipFile(exported["zh"]) as archive:
        names = archive.namelist()
        modes = {info.filename: (info.external_attr >> 16) & 0o777 for info in archive.infolist()}
        requirements = archive.read("requirements.txt").decode()
        setup = archive.read("setup.sh").decode()
        run = archive.read("run_autograder").decode()
        info = json.loads(archive.read("export-info.json"))
    assert {"setup.sh", "run_autograder", "requirements.txt"} <= set(names)
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    hidden = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "autograder" / "assignment" / "hidden").glob("test_*.py"))
    assert hidden and set(hidden) <= set(names) and info["hidden_tests"] == hidden
    assert "autograder/judging/engine.py" in names and "autograder/judging/suite.ini" in names
    assert "gpu_lab/amp_lab_layout.py" in names  # check-lab's record layout, read by every grade
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or n.startswith(("solutions/", "tests/"))]
    # One source of truth: the repository's requirements.txt, every line of it.
    lines = [line for line in requirements.splitlines() if line and not line.startswith("#")]
    assert lines == runtime.requirement_lines()
    assert {runtime.requirement_name(line) for line in lines} >= {"torch", "pytest", "pytest-timeout", "babel",
                                                                 "rich", "pyseccomp"}
    assert "download.pytorch.org/whl/cpu" in setup and 'TORCH="torch==2.13.0"' in setup
    assert 'MIN_PYTHON="3.10"' in setup and "@" not in setup.replace("$@", "")
    # The interpreter is the venv setup.sh made, never one handed in from outside.
    assert "AUTOGRADER_PYTHON" not in run and 'PYTHON="$ROOT/venv/bin/python"' in run


NEEDS_BASH = pytest.mark.skipif(os.name == "nt", reason="the zip's scripts are bash, run on Gradescope's Linux")


@NEEDS_BASH
def test_scripts_are_valid_bash(exported, tmp_path):
    with zipfile.ZipFile(exported["zh"]) as archive:
        archive.extract("setup.sh", tmp_path)
        archive.extract("run_autograder", tmp_path)
    for name in ("setup.sh", "run_autograder"):
        proc = subprocess.run(["bash", "-n", str(tmp_path / name)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        if shutil.which("shellcheck"):
            proc = subprocess.run(["shellcheck", str(tmp_path / name)], capture_output=True, text=True)
            assert proc.returncode == 0, proc.stdout


def test_feedback_language_is_the_courses_unless_asked(exported):
    def lang_of(zip_path):
        with zipfile.ZipFile(zip_path) as archive:
            run = archive.read("run_autograder").decode()
            info = json.loads(archive.read("export-info.json"))
        assert f'--lang "{info["lang"]}"' in run
        return info["lang"]

    assert lang_of(exported["default"]) == runtime.course_language() == "zh"
    assert lang_of(exported["zh"]) == "zh" and lang_of(exported["en"]) == "en"


def fake_bin(folder, python_version, apt_log=None):
    """A PATH holding only a python3 of ``python_version`` (without venv), id, and an
    apt-get that records its arguments and installs nothing."""
    folder.mkdir()
    (folder / "python3").write_text(f"#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Python {python_version}'; "
                                    "exit 0; fi\nexit 1\n")
    tools = ["id", "cat", "rm"]
    if apt_log is not None:
        (folder / "apt-get").write_text(f"#!/bin/sh\necho \"$@\" >> {apt_log}\n")
    for tool in tools:
        (folder / tool).symlink_to(shutil.which(tool))
    for path in folder.iterdir():
        if not path.is_symlink():
            path.chmod(0o755)
    return folder


@NEEDS_BASH
@pytest.mark.parametrize("with_apt, no_apt", [(False, False), (True, False), (True, True)])
def test_setup_stops_with_a_clear_error_on_an_image_without_a_usable_python(exported, tmp_path, with_apt, no_apt):
    """An image whose python3 is 3.8 (Ubuntu 20.04): apt is tried where there is one (as root,
    unless AUTOGRADER_NO_APT), then setup.sh fails the build naming the Python it needs and the
    base image to pick."""
    source = unpack(exported["zh"], tmp_path / "autograder" / "source")
    apt_log = tmp_path / "apt.log" if with_apt else None
    bin_dir = fake_bin(tmp_path / "bin", "3.8.10", apt_log)
    env = dict(export_envs.clean_environ(AUTOGRADER_ROOT=str(tmp_path / "autograder")), PATH=str(bin_dir))
    if no_apt:
        env["AUTOGRADER_NO_APT"] = "1"
    proc = subprocess.run(["/bin/bash", str(source / "setup.sh")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0
    assert "needs a Python 3.10 to 3.14" in proc.stderr and "Python 3.8.10" in proc.stderr
    assert "Ubuntu 22.04" in proc.stderr and "docs/ta-guide.md" in proc.stderr
    assert not (tmp_path / "autograder" / "venv").exists()
    if with_apt and os.getuid() == 0 and not no_apt:
        assert "python3-venv" in apt_log.read_text()
    elif with_apt:
        assert not apt_log.exists()


def test_find_modules_folder(tmp_path):
    find = gradescope_export.find_modules_folder
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "loss_scaler.py").write_text("", encoding="utf-8")
    assert find(flat) == flat
    repo = tmp_path / "repo"
    (repo / "exercises").mkdir(parents=True)
    (repo / "exercises" / "amp_update.py").write_text("", encoding="utf-8")
    (repo / "solutions_elsewhere").mkdir()
    assert find(repo) == repo / "exercises"
    zipped = tmp_path / "zipped"
    (zipped / "my-repo-main" / "exercises").mkdir(parents=True)
    (zipped / "my-repo-main" / "exercises" / "amp_training_step.py").write_text("", encoding="utf-8")
    (zipped / "__MACOSX").mkdir()
    assert find(zipped) == zipped / "my-repo-main" / "exercises"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert find(empty) is None and find(tmp_path / "missing") is None


@NEEDS_BASH
@pytest.mark.parametrize("lang, words", [("zh", "评分器无法启动（退出码 127）"),
                                         ("en", "could not start (exit code 127)")])
def test_run_autograder_without_its_environment_still_writes_results(exported, tmp_path, lang, words):
    """No venv (setup.sh never ran): Gradescope still gets a result, in the export's language."""
    tree = gradescope_tree(tmp_path / "gs", exported[lang])
    (tree / "submission" / "loss_scaler.py").write_text("", encoding="utf-8")
    results, _ = run_autograder(tree)
    assert results["score"] == 0 and words in results["output"]


@pytest.mark.slow
def test_setup_builds_the_environment_from_the_zip_alone(environment):
    python = environment / "venv" / "bin" / "python"
    probe = ("import sys, torch, babel, rich, pytest, pytest_timeout, pyseccomp; "
             "print(sys.prefix); print(torch.__version__); print(sys.path)")
    proc = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=120,
                          env=export_envs.clean_environ(), cwd="/")
    assert proc.returncode == 0, proc.stderr
    prefix, torch_version, path = proc.stdout.splitlines()
    assert pathlib.Path(prefix) == environment / "venv"
    assert torch_version.startswith("2.13.0") and "+cu" not in torch_version
    assert str(pathlib.Path(sys.prefix).resolve()) not in path and str(ROOT) not in path
    assert "the sandbox's syscall filter is available" in (environment / "setup.log").read_text()


@pytest.mark.slow
def test_run_autograder_flat_upload_full_marks_in_chinese(exported, environment, tmp_path, grade_dir):
    """The three solution files uploaded as they are: full marks, the same tests and
    statuses as `grade`, feedback in the course's language, confined with every layer."""
    tree = gradescope_tree(tmp_path / "gs", exported["default"], environment)
    for module in MODULES:
        (tree / "submission" / f"{module}.py").write_bytes((ROOT / "solutions" / f"{module}.py").read_bytes())
    results, stdout = run_autograder(tree)
    assert results["max_score"] > 0 and results["score"] == results["max_score"], \
        [(t["name"], t.get("output", "")[:400]) for t in results["tests"] if t["status"] != "passed"]
    reference = single_grade(grade_dir)
    assert results["max_score"] == reference["max_score"]
    assert [(t["test_id"], t["status"]) for t in results["tests"]] == \
        [(t["test_id"], t["status"]) for t in reference["tests"]]
    assert results["extra_data"]["seed"] == SEED and results["extra_data"]["lang"] == "zh"
    assert any(t["visibility"] == "hidden" for t in results["tests"])
    assert any("\u4e00" <= char <= "\u9fff" for char in results["tests"][0]["name"])
    isolation = results["extra_data"]["isolation"]
    if sys.platform.startswith("linux") and isolation.get("confined"):
        assert "syscall filter" not in isolation["missing_layers"] and isolation["syscalls"].startswith("seccomp")
    assert "grading" in stdout


@pytest.mark.slow
def test_run_autograder_repository_upload_expected_loss_in_english(exported, environment, tmp_path):
    """A repository (inside one top folder, as a zip upload gives it) with one module left a stub:
    exactly that module's points lost."""
    tree = gradescope_tree(tmp_path / "gs", exported["en"], environment)
    exercises = tree / "submission" / "amp-backward-alice-main" / "exercises"
    exercises.mkdir(parents=True)
    for module in MODULES:
        source = ROOT / ("exercises" if module == "loss_scaler" else "solutions") / f"{module}.py"
        (exercises / f"{module}.py").write_bytes(source.read_bytes())
    (tree / "submission" / "amp-backward-alice-main" / "README.md").write_text("repo\n", encoding="utf-8")
    results, _ = run_autograder(tree)
    modules = results["extra_data"]["modules"]
    assert modules["loss_scaler"]["score"] == 0 < modules["loss_scaler"]["max_score"]
    assert modules["amp_update"]["score"] == modules["amp_update"]["max_score"] > 0
    assert modules["amp_training_step"]["score"] == modules["amp_training_step"]["max_score"] > 0
    assert results["score"] == results["max_score"] - modules["loss_scaler"]["max_score"]
    assert results["extra_data"]["lang"] == "en"
    assert any(t["status"] == "failed" and "TODO" in t["output"] for t in results["tests"])


@pytest.mark.slow
@pytest.mark.parametrize("lang, words", [("zh", "没有找到练习模块"), ("en", "No exercise module was found")])
def test_run_autograder_without_modules_says_so(exported, environment, tmp_path, lang, words):
    tree = gradescope_tree(tmp_path / "gs", exported[lang], environment)
    (tree / "submission" / "notes.txt").write_text("oops\n", encoding="utf-8")
    results, _ = run_autograder(tree)
    assert results["score"] == 0 and words in results["output"]
