"""export-gradescope: the zip's contents, and its run_autograder actually run in a
temporary folder laid out as Gradescope lays out /autograder."""
import json
import os
import pathlib
import stat
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.exports import gradescope as gradescope_export  # noqa: E402

SEED = 31337
MODULES = ("amp_update", "loss_scaler", "amp_training_step")
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    destination = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    proc = subprocess.run([sys.executable, "-m", "autograder", "export-gradescope", str(destination)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return destination


def gradescope_tree(base, zip_path):
    """base/autograder/{source,submission,results} with the zip unpacked in source/."""
    tree = base / "autograder"
    for part in ("source", "submission", "results"):
        (tree / part).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(tree / "source")
        for info in archive.infolist():  # zipfile drops modes; Gradescope's unzip keeps them
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(tree / "source" / info.filename, mode)
    return tree


def run_autograder(tree):
    env = dict(os.environ, AUTOGRADER_ROOT=str(tree), AUTOGRADER_PYTHON=sys.executable,
               AUTOGRADER_SEED=str(SEED))
    env.pop("PYTHONPATH", None)  # the zip must be self-contained
    proc = subprocess.run([str(tree / "source" / "run_autograder")], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((tree / "results" / "results.json").read_text(encoding="utf-8")), proc.stdout


def single_grade(submission, tmp_path):
    results = tmp_path / "reference.json"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--submission", str(submission),
                           "--results", str(results), "--seed", str(SEED), "--quiet"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(results.read_text(encoding="utf-8"))


def test_zip_contents(exported):
    with zipfile.ZipFile(exported) as archive:
        names = archive.namelist()
        modes = {info.filename: (info.external_attr >> 16) & 0o777 for info in archive.infolist()}
        requirements = archive.read("requirements-grader.txt").decode()
        setup = archive.read("setup.sh").decode()
        info = json.loads(archive.read("export-info.json"))
    assert {"setup.sh", "run_autograder", "requirements-grader.txt"} <= set(names)
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    hidden = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "autograder" / "assignment" / "hidden").glob("test_*.py"))
    assert hidden and set(hidden) <= set(names) and info["hidden_tests"] == hidden
    assert "autograder/judging/engine.py" in names and "autograder/judging/suite.ini" in names
    assert "gpu_lab/amp_lab_layout.py" in names  # check-lab's record layout, read by every grade
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or n.startswith(("solutions/", "tests/"))]
    assert [line.split("==")[0] for line in requirements.split()] == ["torch", "pytest", "pytest-timeout"]
    assert all("==" in line for line in requirements.split())
    assert "download.pytorch.org/whl/cpu" in setup and "torch==" in setup


def test_scripts_are_valid_bash(exported, tmp_path):
    with zipfile.ZipFile(exported) as archive:
        archive.extract("setup.sh", tmp_path)
        archive.extract("run_autograder", tmp_path)
    for name in ("setup.sh", "run_autograder"):
        proc = subprocess.run(["bash", "-n", str(tmp_path / name)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


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


@pytest.mark.slow
def test_run_autograder_flat_upload_matches_grade(exported, tmp_path):
    """The three files uploaded as they are: same tests, same score as `grade`."""
    tree = gradescope_tree(tmp_path / "gs", exported)
    for module in MODULES:
        (tree / "submission" / f"{module}.py").write_bytes((ROOT / "solutions" / f"{module}.py").read_bytes())
    results, stdout = run_autograder(tree)
    reference = single_grade(ROOT / "solutions", tmp_path)
    assert results["score"] == reference["score"] and results["max_score"] == reference["max_score"]
    assert [(t["test_id"], t["status"]) for t in results["tests"]] == \
        [(t["test_id"], t["status"]) for t in reference["tests"]]
    assert results["extra_data"]["seed"] == SEED
    assert any(t["visibility"] == "hidden" for t in results["tests"])
    assert "grading" in stdout


@pytest.mark.slow
def test_run_autograder_repository_upload(exported, tmp_path):
    """A repository (inside one top folder, as a zip upload gives it) with one stub module."""
    tree = gradescope_tree(tmp_path / "gs", exported)
    exercises = tree / "submission" / "amp-backward-alice-main" / "exercises"
    exercises.mkdir(parents=True)
    for module in MODULES:
        source = ROOT / ("exercises" if module == "loss_scaler" else "solutions") / f"{module}.py"
        (exercises / f"{module}.py").write_bytes(source.read_bytes())
    (tree / "submission" / "amp-backward-alice-main" / "README.md").write_text("repo\n", encoding="utf-8")
    results, _ = run_autograder(tree)
    modules = results["extra_data"]["modules"]
    assert modules["loss_scaler"]["score"] == 0
    assert modules["amp_update"]["score"] == modules["amp_update"]["max_score"] > 0
    assert modules["amp_training_step"]["score"] == modules["amp_training_step"]["max_score"] > 0


def test_run_autograder_without_modules_still_writes_results(exported, tmp_path):
    tree = gradescope_tree(tmp_path / "gs", exported)
    (tree / "submission" / "notes.txt").write_text("oops\n", encoding="utf-8")
    results, _ = run_autograder(tree)
    assert results["score"] == 0 and "No exercise module was found" in results["output"]
