"""export-otter: the exported files (always), the bridge run as otter would run it
(with a stand-in for otter's decorator), and the real otter-grader 7.0.0 in an
environment made from the export's own files only: a fresh venv of the machine's
python3 with ``otter-grader[grading]==7.0.0`` and the export's requirements.txt
(what its README tells a TA to install, and what `otter generate` writes into
Gradescope's environment.yml), then `otter generate` and `otter run` with it.

That venv is built once and kept under a key of exactly those files
(tests/support/export_envs.py); the test is skipped where otter-grader cannot be
downloaded at all. Nothing of the development venv grades there: the bridge
grades with otter's own interpreter.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest
from support.helpers import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from support import export_envs  # noqa: E402
from support.cli import main_in_process  # noqa: E402

from autograder.exports import otter as otter_export  # noqa: E402
from autograder.exports import runtime  # noqa: E402

SEED = 2718
MODULES = ("amp_update", "loss_scaler", "amp_training_step")
OTTER = "otter-grader[grading]==7.0.0"
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def export(destination, *options, in_process=False):
    """``export-otter DEST --seed SEED OPTIONS`` by the command line, or by its ``main`` in this
    process (torch is imported here already)."""
    arguments = ["export-otter", str(destination), "--seed", str(SEED), *options]
    if in_process:
        assert main_in_process(*arguments) == 0
    else:
        proc = subprocess.run([sys.executable, "-m", "autograder", *arguments], cwd=ROOT, env=ENV,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    support = next(destination.glob(f"{otter_export.SUPPORT_PREFIX}*")).name
    return destination, support


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """lang -> (folder, support folder name): the course's default (no --lang, by the command
    line) and English."""
    base = tmp_path_factory.mktemp("otter")
    return {"zh": export(base / "zh"), "en": export(base / "en", "--lang", "en", in_process=True)}


@pytest.fixture(scope="module")
def collected():
    return {lang: otter_export.collect_tests(lang=lang) for lang in ("zh", "en")}


@pytest.mark.slow
def test_layout(exported, collected):
    destination, support = exported["zh"]
    assert sorted(p.name for p in (destination / "tests").iterdir()) == sorted(f"{m}.py" for m in MODULES)
    assert (destination / "grade_entry.py").is_file()
    hidden = sorted(p.name for p in (ROOT / "autograder" / "assignment" / "hidden").glob("test_*.py"))
    assert hidden and sorted(p.name for p in (destination / support / "autograder" / "assignment" / "hidden").glob("test_*.py")) == hidden
    settings = json.loads((destination / support / "otter_settings.json").read_text())
    assert settings["seed"] == SEED and settings["lang"] == "zh"
    assert json.loads((exported["en"][0] / exported["en"][1] / "otter_settings.json").read_text())["lang"] == "en"
    assert not (destination / support / "solutions").exists()
    assert (destination / support / "gpu_lab" / "amp_lab_layout.py").is_file()  # the record layout the grader reads
    assert not list((destination / support).rglob("__pycache__"))
    readme = (destination / "README.md").read_text(encoding="utf-8")
    for limit in ("Timeouts", "BaseException", "Granularity"):
        assert limit in readme
    assert f"otter generate -t tests grade_entry.py {support}" in readme
    assert f'pip install "{OTTER}" -r requirements.txt' in readme and "AMP_GRADER_PYTHON" not in readme
    entry = (destination / "grade_entry.py").read_text(encoding="utf-8")
    assert "import exercises" not in entry and "from exercises" not in entry


def test_requirements_are_the_graders_own(exported):
    """One source of truth: every line of the repository's requirements.txt, torch's CPU
    build preferred through PyTorch's index."""
    lines = [line for line in (exported["zh"][0] / "requirements.txt").read_text(encoding="utf-8").splitlines()
             if line and not line.startswith("#")]
    assert lines[0] == f"--extra-index-url {runtime.TORCH_CPU_INDEX}"
    assert lines[1:] == runtime.requirement_lines()
    assert {runtime.requirement_name(line) for line in lines[1:]} >= {"torch", "babel", "rich", "pyseccomp"}


def test_hidden_tests_are_not_copied_into_otter_files(exported):
    """One source of tests: the otter files only name our tests, they hold no checks."""
    destination, _ = exported["zh"]
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


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_cases_mirror_the_graders_tests(exported, collected, lang):
    destination, _ = exported[lang]
    for module in MODULES:
        env, cases = _load_with_stand_in(destination / "tests" / f"{module}.py")
        ours = [t for t in collected[lang] if t["module"] == module]
        assert env["OK_FORMAT"] is False and env["name"] == module and env["all_or_nothing"] is False
        assert [c.name for c in cases] == [t["name"] for t in ours]
        assert [c.points for c in cases] == [t["points"] for t in ours]
        assert [c.hidden for c in cases] == [t["visibility"] == "hidden" for t in ours]
        assert env["points"] == sum(t["points"] for t in ours)
    assert any(t["visibility"] == "hidden" for t in collected[lang])
    chinese = [any("\u4e00" <= char <= "\u9fff" for char in t["name"]) for t in collected[lang]]
    assert all(chinese) if lang == "zh" else not any(chinese)


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
    """The bridge's logic, as otter runs it (cwd = the submission with the support files and
    tests/ copied in), in this interpreter: a case passes exactly when our test of that
    name passed. (The export's own environment is tested with the real otter below.)"""
    destination, support = exported["en"]
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


# -- the real otter, in an environment made from the export's files ---------------------------
@pytest.fixture(scope="module")
def otter_env(exported, tmp_path_factory):
    """The ``otter`` of a fresh venv holding otter-grader and the export's requirements.txt."""
    if not export_envs.LINUX:
        pytest.skip(export_envs.NOT_LINUX)
    python = export_envs.base_python()
    if python is None:
        pytest.skip("no python3 outside this venv to build a fresh environment with")
    files = {"requirements.txt": (exported["zh"][0] / "requirements.txt").read_bytes(),
             "otter.txt": f"{OTTER}\n".encode()}
    built = export_envs.cache_root() / export_envs.key_of("otter", files, python) / export_envs.DONE
    if not built.is_file():
        probe = subprocess.run([python, "-m", "pip", "download", "--no-deps", "--dest",
                                str(tmp_path_factory.mktemp("probe")), "otter-grader==7.0.0"],
                               capture_output=True, text=True, env=export_envs.clean_environ(), timeout=300)
        if probe.returncode != 0:
            pytest.skip(f"otter-grader 7.0.0 cannot be downloaded here: {probe.stdout[-300:]}{probe.stderr[-300:]}")

    def build(folder):
        env = export_envs.clean_environ()
        export_envs.run_logged([python, "-m", "venv", str(folder / "venv")], folder / "venv.log", env=env)
        export_envs.run_logged([str(folder / "venv" / "bin" / "python"), "-m", "pip", "install",
                                "-r", str(folder / "otter.txt"), "-r", str(folder / "requirements.txt")],
                               folder / "pip.log", env=env, timeout=3600)

    return export_envs.cached("otter", files, build, python) / "venv" / "bin" / "otter"


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


def _generate(otter, exported, tmp_path):
    """`otter generate` in a copy of the export, as its README says; returns the zip."""
    destination, support = exported
    work = tmp_path / "assignment"
    shutil.copytree(destination, work)
    env = export_envs.clean_environ(JUPYTER_DATA_DIR=str(tmp_path / "jupyter"))
    proc = subprocess.run([str(otter), "generate", "-t", "tests", "-o", "autograder.zip", otter_export.ENTRY,
                           support], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return work / "autograder.zip"


def _otter_run(otter, zip_path, submission, out):
    out.mkdir()
    env = export_envs.clean_environ(JUPYTER_DATA_DIR=str(out / "jupyter"))
    proc = subprocess.run([str(otter), "run", "-a", str(zip_path), "-o", str(out), "--no-logo", str(submission)],
                          capture_output=True, text=True, timeout=900, cwd=out, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]  # rc 0 whatever the score
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {t["name"]: t for t in results["tests"] if t["name"] in MODULES}


def _one_stub_left(otter, zip_path, stub, points, tmp_path):
    """`otter run` of the solutions with ``stub``'s module left as the stub: exactly that module's
    points lost, every other module's earned; the stub's feedback."""
    submission = _zip_repo(tmp_path, f"no-{stub}", {m: ROOT / ("exercises" if m == stub else "solutions") / f"{m}.py"
                                                     for m in MODULES})
    scores = _otter_run(otter, zip_path, submission, tmp_path / f"out-no-{stub}")
    assert {m: (t["score"], t["max_score"]) for m, t in scores.items()} == \
        {m: (0 if m == stub else points[m], points[m]) for m in MODULES}, \
        {m: t.get("output", "")[:600] for m, t in scores.items()}
    assert "TODO" in scores[stub]["output"]
    return scores[stub]["output"]


@pytest.mark.slow
def test_otter_run_full_marks_and_expected_loss(otter_env, exported, collected, tmp_path):
    zip_path = _generate(otter_env, exported["zh"], tmp_path / "zh")
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
        environment = archive.read("environment.yml").decode()
    assert sorted(n for n in names if n.startswith("tests/")) == sorted(f"tests/{m}.py" for m in MODULES)
    assert "files/grade_entry.py" in names
    # Gradescope's otter image installs the same lines (otter generate copies them into environment.yml).
    for line in [f"--extra-index-url {runtime.TORCH_CPU_INDEX}"] + runtime.requirement_lines():
        assert line in environment, line
    points = {m: sum(t["points"] for t in collected["zh"] if t["module"] == m) for m in MODULES}

    # Two submissions, each with one module left as the stub: every module earns its full
    # points in one of them and loses them in the other (a run costs an otter start and a grade).
    output = _one_stub_left(otter_env, zip_path, "loss_scaler", points, tmp_path)
    assert f"（种子 {SEED}）" in output

    zip_en = _generate(otter_env, exported["en"], tmp_path / "en")
    output = _one_stub_left(otter_env, zip_en, "amp_update", points, tmp_path)
    assert f"(seed {SEED})" in output and not any("\u4e00" <= char <= "\u9fff" for char in output)
