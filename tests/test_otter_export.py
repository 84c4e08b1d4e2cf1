"""export-otter: the exported files (always), the bridge run as otter would run it
(always, with a stand-in for otter's decorator), and the real otter-grader 7.0.0
(`otter generate` + `otter run`) when it is installed in its own venv.

otter is heavy (~550 MB) and kept out of the grader's environment: point
OTTER_BIN at its `otter` executable, or OTTER_VENV at a venv made with
`python3 -m venv DIR && DIR/bin/pip install "otter-grader[grading]==7.0.0"`
(default DIR: ~/.cache/amp-otter-venv; it needs no torch: the bridge grades with
this interpreter, passed as AMP_GRADER_PYTHON). Without it those tests are skipped.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.exports import otter as otter_export  # noqa: E402

SEED = 2718
MODULES = ("amp_update", "loss_scaler", "amp_training_step")
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def otter_bin():
    if os.environ.get("OTTER_BIN"):
        return os.environ["OTTER_BIN"]
    venv = pathlib.Path(os.environ.get("OTTER_VENV") or pathlib.Path.home() / ".cache" / "amp-otter-venv")
    candidate = venv / ("Scripts/otter.exe" if os.name == "nt" else "bin/otter")
    try:
        return str(candidate) if candidate.is_file() else None
    except OSError:  # e.g. another user's venv, named by an inherited OTTER_VENV
        return None


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    destination = tmp_path_factory.mktemp("otter") / "assignment"
    command = [sys.executable, "-m", "autograder", "export-otter", str(destination), "--seed", str(SEED)]
    if otter_bin():
        command += ["--otter-bin", otter_bin()]
    proc = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    support = next(destination.glob(f"{otter_export.SUPPORT_PREFIX}*")).name
    return destination, support


@pytest.fixture(scope="module")
def collected():
    return otter_export.collect_tests()


def test_layout(exported, collected):
    destination, support = exported
    assert sorted(p.name for p in (destination / "tests").iterdir()) == sorted(f"{m}.py" for m in MODULES)
    assert (destination / "grade_entry.py").is_file()
    assert (destination / "requirements.txt").read_text().startswith("torch==")
    hidden = sorted(p.name for p in (ROOT / "autograder" / "assignment" / "hidden").glob("test_*.py"))
    assert hidden and sorted(p.name for p in (destination / support / "autograder" / "assignment" / "hidden").glob("test_*.py")) == hidden
    assert json.loads((destination / support / "otter_settings.json").read_text())["seed"] == SEED
    assert not (destination / support / "solutions").exists()
    assert (destination / support / "gpu_lab" / "amp_lab_layout.py").is_file()  # the record layout the grader reads
    assert not list((destination / support).rglob("__pycache__"))
    readme = (destination / "README.md").read_text(encoding="utf-8")
    for limit in ("Timeouts", "BaseException", "Granularity"):
        assert limit in readme
    assert f"otter generate -t tests grade_entry.py {support}" in readme
    entry = (destination / "grade_entry.py").read_text(encoding="utf-8")
    assert "import exercises" not in entry and "from exercises" not in entry


def test_hidden_tests_are_not_copied_into_otter_files(exported):
    """One source of tests: the otter files only name our tests, they hold no checks."""
    destination, _ = exported
    for path in (destination / "tests").iterdir():
        text = path.read_text(encoding="utf-8")
        assert "import torch" not in text and "\n    assert " not in text
        assert text.count("_grader().check(") == text.count("@test_case(")


def _load_with_stand_in(path):
    """Execute an exported test file as otter does, with a stand-in `test_case`."""
    stand_in = textwrap.dedent("""
        class test_case:
            def __init__(self, name=None, points=None, hidden=False, success_message=None, failure_message=None):
                self.name, self.points, self.hidden = name, points, hidden
            def __call__(self, func):
                self.func = func
                return self
    """)
    source = path.read_text(encoding="utf-8").replace("from otter.test_files import test_case", stand_in)
    env = {}
    exec(compile(source, str(path), "exec"), env)
    return env, [value for value in env.values() if type(value).__name__ == "test_case"]


def test_cases_mirror_the_graders_tests(exported, collected):
    destination, _ = exported
    for module in MODULES:
        env, cases = _load_with_stand_in(destination / "tests" / f"{module}.py")
        ours = [t for t in collected if t["module"] == module]
        assert env["OK_FORMAT"] is False and env["name"] == module and env["all_or_nothing"] is False
        assert [c.name for c in cases] == [t["name"] for t in ours]
        assert [c.points for c in cases] == [t["points"] for t in ours]
        assert [c.hidden for c in cases] == [t["visibility"] == "hidden" for t in ours]
        assert env["points"] == sum(t["points"] for t in ours)
    assert any(t["visibility"] == "hidden" for t in collected)


BRIDGE_RUNNER = r"""
import json, pathlib, sys, textwrap
stand_in = '''
class test_case:
    def __init__(self, name=None, points=None, hidden=False, **_):
        self.name, self.points = name, points
    def __call__(self, func):
        self.func = func
        return self
'''
outcome = {}
for path in sorted(pathlib.Path("tests").glob("*.py")):
    env = {}
    exec(path.read_text().replace("from otter.test_files import test_case", stand_in), env)
    for case in [v for v in env.values() if type(v).__name__ == "test_case"]:
        try:
            case.func()
            outcome[case.name] = [True, ""]
        except Exception as exc:
            outcome[case.name] = [False, f"{type(exc).__name__}: {exc}"]
print(json.dumps(outcome))
"""


@pytest.mark.slow
def test_bridge_grades_once_and_reports_our_feedback(exported, tmp_path):
    """As otter runs it: cwd = the submission with the support files and tests/ copied
    in; a case passes exactly when our test of that name passed."""
    destination, support = exported
    submission = tmp_path / "submission"
    (submission / "exercises").mkdir(parents=True)
    for module in MODULES:
        source = ROOT / ("exercises" if module == "amp_update" else "solutions") / f"{module}.py"
        shutil.copy(source, submission / "exercises" / f"{module}.py")
    shutil.copytree(destination / support, submission / support)
    shutil.copy(destination / "grade_entry.py", submission)
    shutil.copytree(destination / "tests", submission / "tests")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-c", BRIDGE_RUNNER], cwd=submission, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout.strip().splitlines()[-1])
    failed = {name for name, (passed, _) in outcome.items() if not passed}
    assert failed and all(name.startswith("amp_update:") for name in failed)
    assert len(failed) == sum(1 for name in outcome if name.startswith("amp_update:"))
    message = outcome["amp_update: unscale_gradients restores the real scale and leaves its input alone"][1]
    assert message.startswith("AssertionError: TODO 1") and f"(seed {SEED})" in message


def _zip_repo(tmp_path, name, sources):
    folder = tmp_path / name
    (folder / "exercises").mkdir(parents=True)
    for module, source in sources.items():
        shutil.copy(source, folder / "exercises" / f"{module}.py")
    (folder / "README.md").write_text("student repo\n", encoding="utf-8")
    archive = tmp_path / f"{name}.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, path.relative_to(folder).as_posix())
    return archive


def _otter_run(zip_path, submission, out):
    out.mkdir()
    env = dict(os.environ, AMP_GRADER_PYTHON=sys.executable)  # otter's venv needs no torch
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([otter_bin(), "run", "-a", str(zip_path), "-o", str(out), "--no-logo", str(submission)],
                          capture_output=True, text=True, timeout=900, cwd=out, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]  # rc 0 whatever the score
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {t["name"]: (t.get("score"), t.get("max_score")) for t in results["tests"] if t["name"] in MODULES}


@pytest.mark.slow
@pytest.mark.skipif(otter_bin() is None, reason="otter-grader[grading]==7.0.0 is not installed in its own venv "
                                                "(set OTTER_BIN or OTTER_VENV; see this file's docstring)")
def test_otter_run_full_marks_and_expected_loss(exported, collected, tmp_path):
    destination, _ = exported
    zip_path = destination / "autograder.zip"
    assert zip_path.is_file()
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
    assert sorted(n for n in names if n.startswith("tests/")) == sorted(f"tests/{m}.py" for m in MODULES)
    assert "files/grade_entry.py" in names
    points = {m: sum(t["points"] for t in collected if t["module"] == m) for m in MODULES}

    good = _zip_repo(tmp_path, "good", {m: ROOT / "solutions" / f"{m}.py" for m in MODULES})
    scores = _otter_run(zip_path, good, tmp_path / "out-good")
    assert scores == {m: (points[m], points[m]) for m in MODULES}

    bad = _zip_repo(tmp_path, "bad", {m: ROOT / ("exercises" if m == "loss_scaler" else "solutions") / f"{m}.py"
                                      for m in MODULES})
    scores = _otter_run(zip_path, bad, tmp_path / "out-bad")
    assert scores["loss_scaler"] == (0, points["loss_scaler"])
    assert scores["amp_update"] == (points["amp_update"], points["amp_update"])
    assert scores["amp_training_step"] == (points["amp_training_step"], points["amp_training_step"])
