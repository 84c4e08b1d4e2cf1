"""``python -m autograder export-template``: what a student receives, the
manifest and the tamper flags, the private bundle (mode a), the feedback
language of a fresh export, and the README's commands run in a fresh export."""
import base64
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from support import classroom_reporter as reporter  # noqa: E402
from support import export_envs, student_venv
from autograder import i18n  # noqa: E402
from autograder.intake import integrity
from support.helpers import ROOT

# The slow tier (docs/maintaining.md): nearly every test reads a template exported by a
# `python -m autograder export-template` subprocess (~6 s), several grade it again.
pytestmark = pytest.mark.slow

MODULES = ("amp_update", "loss_scaler", "amp_training_step")


def run(args, cwd, timeout=600, env=None):
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def clean_env(**extra):
    env = dict(os.environ, **extra)
    for name in ("CLASSROOM_MANIFEST", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "AMP_EXERCISES_DIR",
                 i18n.ENV_VAR):
        if name not in extra:
            env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(template, bundle or None, the export's process)."""
    base = tmp_path_factory.mktemp("export")
    template, bundle = base / "template", base / "bundle"
    has_hidden = any((ROOT / "autograder" / "assignment" / "hidden").glob("test_hidden_*.py"))
    extra = ["--hidden-bundle", str(bundle)] if has_hidden else []
    proc = run(["-m", "autograder", "export-template", str(template), *extra], cwd=ROOT, env=clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return template, bundle if has_hidden else None, proc


@pytest.fixture(scope="module")
def export(exported):
    """(template, bundle); bundle is None where no hidden tests are installed."""
    return exported[:2]


@pytest.fixture
def bundle(export):
    if export[1] is None:
        pytest.skip("autograder/assignment/hidden/ holds no hidden tests to bundle")
    return export[1]


@pytest.fixture
def student_repo(export, tmp_path):
    """A private copy of the template to tamper with."""
    return pathlib.Path(shutil.copytree(export[0], tmp_path / "student"))


def files(root):
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


# --------------------------------------------------------------------------- contents

def test_the_export_prints_its_result_and_no_warning(exported):
    """Nothing but what was written: no extraction warning of the catalogs' tool (Babel's), no other."""
    template, bundle, proc = exported
    assert proc.stderr == ""
    expected = [rf"student template written to {re.escape(str(template))} \(\d+ protected files\)"]
    if bundle is not None:
        expected.append(rf"private tests bundle written to {re.escape(str(bundle))}: test_hidden_\S+")
    lines = proc.stdout.splitlines()
    assert len(lines) == len(expected) and all(re.match(pattern, line) for pattern, line in zip(expected, lines)), \
        proc.stdout


# Before the seam (autograder/staff_side.py) the template held 219 files, 26,988 lines of Python;
# after it 167 files, 19,716 lines. The bounds leave the student's side room to grow, not the staff's
# side (52 files, 7,272 lines) room to come back.
MAX_FILES, MAX_PYTHON_LINES = 185, 22_000


def test_template_holds_the_students_side_only(exported):
    """No file of the staff's side (class grading, class reports, similarity, exports, their commands
    and catalogs), and no more than a student's side's size."""
    from autograder import staff_side

    template, bundle, _proc = exported
    present = sorted(files(template))
    staff = [path for path in present if staff_side.is_staff(path)]
    assert not staff, staff
    for folder in ("batch", "class_reports", "similarity", "exports"):
        assert not (template / "autograder" / folder).exists(), folder
    python_lines = sum(len((template / path).read_text(encoding="utf-8").splitlines())
                       for path in present if path.endswith(".py"))
    assert len(present) <= MAX_FILES and python_lines <= MAX_PYTHON_LINES, (len(present), python_lines)
    for kept in ("autograder/cli/grade.py", "autograder/cli/watch.py", "autograder/judging/judge.py",
                 "autograder/sandbox/box.py", "autograder/assignment/conformance/cli.py"):
        assert kept in present, kept
    if bundle is not None:  # the private bundle grades too (mode a): the student's side and the hidden tests
        assert not [path for path in files(bundle) if staff_side.is_staff(path)]


def test_template_has_what_a_student_needs(export):
    template, _ = export
    present = files(template)
    for needed in ["README.md", "requirements.txt", "pyproject.toml", ".gitignore",
                   ".github/workflows/classroom.yml", ".github/classroom-manifest.json",
                   "autograder/__main__.py", "autograder/assignment/hidden/README.md", "gpu_lab/amp_backward_lab.py",
                   "gpu_lab/amp_lab_layout.py", "benchmarks/results/train_mixed_precision_backward/.gitkeep"]:
        assert needed in present, needed
    for module in MODULES:
        assert f"exercises/{module}.py" in present
    public = {p.relative_to(ROOT).as_posix() for p in (ROOT / "exercises" / "tests").rglob("*.py")}
    assert public and public <= present
    assert (template / ".github/workflows/classroom.yml").read_bytes() == \
        (ROOT / ".github/workflows/classroom.yml").read_bytes()


def test_template_leaks_no_solution_and_no_hidden_test(export):
    template, _ = export
    present = files(template)
    for forbidden in ("solutions/", "tests/", "tools/", ".github/template/", ".github/workflows/ci.yml",
                      "autograder/assignment/hidden/test_", "autograder/assignment/similarity_calibration.json"):
        assert not any(path.startswith(forbidden) for path in present), forbidden
    assert not any("__pycache__" in path or path.endswith(".pyc") for path in present)
    assert [p for p in present if p.startswith("autograder/assignment/hidden/")] == ["autograder/assignment/hidden/README.md"]
    for module in MODULES:  # the stubs, byte for byte, not the solutions
        shipped = (template / "exercises" / f"{module}.py").read_bytes()
        assert shipped == (ROOT / "exercises" / f"{module}.py").read_bytes()
        assert shipped != (ROOT / "solutions" / f"{module}.py").read_bytes()
    # No hidden test file's distinctive code anywhere in the template.
    shipped_text = "\n".join((template / p).read_text(encoding="utf-8", errors="replace") for p in present)
    for hidden in (ROOT / "autograder" / "assignment" / "hidden").glob("test_*.py"):
        for line in hidden.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line.startswith("def test_"):
                assert line not in shipped_text, f"{hidden.name}: {line}"


def test_template_catalogs_hold_only_what_the_template_says(export):
    """The catalogs translate the hidden suites too; the template's keep only the ids its own code
    uses: no hidden test's title, hint or message, every visible one."""
    from autograder.i18n import catalog_tools

    template, _ = export
    hidden_dir = ROOT / "autograder" / "assignment" / "hidden"
    visible_dir = ROOT / "autograder" / "assignment" / "visible"
    shipped = {msgid for path in (template / "autograder").rglob("*.py") for _line, msgid in catalog_tools._ids_of(path)}
    hidden_only = {msgid for path in hidden_dir.glob("*.py") for _line, msgid in catalog_tools._ids_of(path)} - shipped
    assert len(hidden_only) > 50  # titles, hints and messages of the hidden suites
    catalogs = {message.id: message.string for path in (template / "autograder").rglob("locale/zh/*.po")
                for message in catalog_tools.read_catalog(path) if message.id}
    leaked = sorted(hidden_only & set(catalogs))
    assert not leaked, leaked[:5]
    for path in visible_dir.glob("test_*.py"):
        for _line, msgid in catalog_tools._ids_of(path):
            assert catalogs.get(msgid), f"{path.name}: {msgid!r} is not translated in the template"
    assert "update_scale grows the scale exactly every growth_interval clean iterations" not in \
        (template / "autograder/assignment/locale/zh/loss_scaler.po").read_text(encoding="utf-8")


# What a student reads: the README, the lab's guide, the hidden folder's note, the
# stubs and public tests, requirements.txt and pyproject.toml.
STUDENT_TEXTS = ("README.md", "requirements.txt", "pyproject.toml", "gpu_lab/README.md",
                 "autograder/assignment/hidden/README.md")
REPO_PATH = re.compile(r"(?<![\w./-])((?:\.ci|\.github|docs|solutions|tests|tools|benchmarks|gpu_lab|autograder|"
                       r"exercises)/[A-Za-z0-9_./-]*[A-Za-z0-9_/])")


def student_texts(template):
    paths = [template / name for name in STUDENT_TEXTS if (template / name).is_file()]
    paths += sorted((template / "exercises").rglob("*.py"))
    return {p.relative_to(template).as_posix(): p.read_text(encoding="utf-8") for p in paths}


def test_template_ships_no_staff_notes(export):
    template, _ = export
    assert (ROOT / "gpu_lab" / "STAFF.md").is_file(), "the course repository keeps the staff notes"
    assert not (template / "gpu_lab" / "STAFF.md").exists()
    # Every text outside the grader's own source (which exports the template, so names what it leaves out).
    texts = dict(student_texts(template))
    texts.update({p.relative_to(template).as_posix(): p.read_text(encoding="utf-8") for p in template.rglob("*")
                  if p.is_file() and p.suffix in (".md", ".py", ".txt", ".toml", ".sh", ".yml")
                  and not p.relative_to(template).as_posix().startswith("autograder/")})
    linked = [name for name, text in texts.items() if "STAFF.md" in text]
    assert not linked, f"links to the staff notes: {linked}"
    assert "[English](#english)" in (template / "gpu_lab" / "README.md").read_text(encoding="utf-8")


def test_student_files_name_only_what_the_template_has(export):
    """Every repository path a student-facing text names exists in the template
    (no `.ci/run`, no docs/ or tests/ the template does not carry)."""
    template, _ = export
    missing = []
    for name, text in student_texts(template).items():
        for path in REPO_PATH.findall(text):
            if "<" in path or "*" in path or path.endswith(".json") and "train-amp-backward_" in path:
                continue  # a placeholder, or a lab record the student's own run writes
            if not (template / path.rstrip("/")).exists():
                missing.append(f"{name}: {path}")
    assert not missing, "\n".join(missing)


def test_template_has_no_development_leftovers(export):
    from autograder.toml_reader import tomllib

    template, _ = export
    config = tomllib.loads((template / "pyproject.toml").read_text(encoding="utf-8"))
    markers = [m.split(":")[0] for m in config["tool"]["pytest"]["ini_options"].get("markers", [])]
    assert "hostile" not in markers
    requirements = (template / "requirements.txt").read_text(encoding="utf-8")
    assert ".ci/" not in requirements and "torch==" in requirements
    def pins(text):
        return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]

    assert pins(requirements) == pins((ROOT / "requirements.txt").read_text(encoding="utf-8"))


CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def test_the_cpu_wheel_index_is_named_one_way_everywhere(export):
    """The CPU build comes from PyTorch's index alone (`--index-url`, torch only,
    then the rest from PyPI): never `--extra-index-url`, which lets pip pick
    either index for every package."""
    texts = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8"),
             "template README.md": (export[0] / "README.md").read_text(encoding="utf-8")}
    texts.update({p.name: p.read_text(encoding="utf-8") for p in (ROOT / ".github" / "workflows").glob("*.yml")})
    for name, text in texts.items():
        assert "--extra-index-url" not in text, name
        for line in text.splitlines():
            if CPU_INDEX in line and "pip install" in line:
                assert re.search(r"--index-url\s+" + re.escape(CPU_INDEX), line), f"{name}: {line}"
    assert any(CPU_INDEX in line and "--index-url" in line for line in texts["README.md"].splitlines())


def test_readme_says_where_to_grade_from_and_that_stays_true(export, tmp_path):
    """From inside exercises/ Python cannot find the grader: both READMEs say so
    (with the error a student sees) and tell them to grade from the root."""
    template = pathlib.Path(shutil.copytree(export[0], tmp_path / "fresh"))
    proc = run(["-m", "autograder", "grade", "--quiet"], cwd=template / "exercises", env=clean_env())
    assert proc.returncode != 0 and "No module named autograder" in proc.stderr
    for readme in (ROOT / "README.md", template / "README.md"):
        text = readme.read_text(encoding="utf-8")
        assert "works too" not in text, readme
        assert text.count("No module named autograder") >= (2 if readme.parent == template else 1), readme


def test_bare_pytest_runs_the_public_tests(export):
    from autograder.toml_reader import tomllib

    config = tomllib.loads((export[0] / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["pytest"]["ini_options"]["testpaths"] == ["exercises/tests"]


def test_manifest_covers_the_protected_files_and_matches_them(export):
    template, _ = export
    manifest = json.loads((template / ".github/classroom-manifest.json").read_text(encoding="utf-8"))
    protected = manifest["files"]
    for needed in [".github/workflows/classroom.yml", "requirements.txt", "pyproject.toml",
                   "autograder/cli/grade.py", "autograder/intake/integrity.py", "autograder/assignment/hidden/README.md",
                   "autograder/assignment/visible/test_visible_amp_update.py", "exercises/tests/conftest.py",
                   "gpu_lab/amp_backward_lab.py", "gpu_lab/amp_lab_layout.py", "gpu_lab/amp_lab_measure.py"]:
        assert needed in protected, needed
    assert not any(path.startswith("exercises/") and not path.startswith("exercises/tests/")
                   for path in protected), "students edit the exercise modules"
    for path, digest in protected.items():
        assert integrity.normalised_sha256(template / path) == digest, path
    assert integrity.tamper_flags(template) == []


def export_in_process(monkeypatch, *args):
    """``export-template ARGS`` by the command line's ``main`` in this process (as from the
    repository root, in clean_env's environment): its exit code. The export fixture and the
    --git test run the real command line."""
    from support.cli import main_in_process

    monkeypatch.chdir(ROOT)
    for name in os.environ.keys() - clean_env().keys():
        monkeypatch.delenv(name)
    return main_in_process("export-template", *args)


def test_manifest_only_writes_the_templates_manifest(export, tmp_path, monkeypatch):
    target = tmp_path / "manifest.json"
    assert export_in_process(monkeypatch, "--manifest-only", target) == 0
    shipped = json.loads((export[0] / ".github/classroom-manifest.json").read_text(encoding="utf-8"))
    assert json.loads(target.read_text(encoding="utf-8"))["files"] == shipped["files"]


def test_export_refuses_to_overwrite_anything_but_an_earlier_export(export, tmp_path, monkeypatch):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine", encoding="utf-8")
    for extra in ([], ["--force"]):
        assert export_in_process(monkeypatch, occupied, *extra) == 2 and (occupied / "notes.txt").exists()
    again = shutil.copytree(export[0], tmp_path / "again")
    assert export_in_process(monkeypatch, again) == 2
    assert export_in_process(monkeypatch, again, "--force") == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_option_commits_every_file_of_the_template(tmp_path):
    dest = tmp_path / "repo"
    proc = run(["-m", "autograder", "export-template", str(dest), "--git"], cwd=ROOT, env=clean_env())
    assert proc.returncode == 0, proc.stderr
    tracked = subprocess.run(["git", "ls-files"], cwd=dest, capture_output=True, text=True).stdout.split()
    assert set(tracked) == {p for p in files(dest) if not p.startswith(".git/")}
    status = subprocess.run(["git", "status", "--porcelain"], cwd=dest, capture_output=True, text=True)
    assert status.stdout == ""


# --------------------------------------------------------------------------- tamper flags

def test_edited_workflow_and_public_test_are_flagged(student_repo):
    workflow = student_repo / ".github/workflows/classroom.yml"
    workflow.write_text(workflow.read_text(encoding="utf-8").replace("timeout-minutes: 15", "timeout-minutes: 90"),
                        encoding="utf-8")
    public = sorted((student_repo / "exercises/tests").glob("test_*.py"))[0]
    public.write_text(public.read_text(encoding="utf-8") + "\nassert True\n", encoding="utf-8")
    flags = integrity.tamper_flags(student_repo)
    assert any(".github/workflows/classroom.yml" in flag and "differs" in flag for flag in flags)
    assert any(f"exercises/tests/{public.name}" in flag for flag in flags)
    assert len(flags) == 2


def test_an_edited_lab_layout_is_flagged(student_repo):
    """The grader executes gpu_lab/amp_lab_layout.py (the record layout it shares with the lab)."""
    layout = student_repo / "gpu_lab/amp_lab_layout.py"
    layout.write_text(layout.read_text(encoding="utf-8").replace('"repeats": 20', '"repeats": 2'), encoding="utf-8")
    assert integrity.tamper_flags(student_repo) == ["protected file gpu_lab/amp_lab_layout.py differs from the template"]


def test_removed_added_and_shadowing_files_are_flagged(student_repo):
    (student_repo / "autograder/assignment/visible/test_visible_loss_scaler.py").unlink()
    (student_repo / "autograder/assignment/hidden/test_hidden_free_points.py").write_text("", encoding="utf-8")
    (student_repo / ".github/workflows/extra.yml").write_text("", encoding="utf-8")
    (student_repo / "conftest.py").write_text("", encoding="utf-8")
    (student_repo / "exercises/sitecustomize.py").write_text("", encoding="utf-8")
    (student_repo / "exercises/tests/test_my_own.py").write_text("", encoding="utf-8")  # allowed
    (student_repo / "exercises/amp_update.py").write_text("# my work\n", encoding="utf-8")  # allowed
    flags = "\n".join(integrity.tamper_flags(student_repo))
    for expected in ["test_visible_loss_scaler.py is missing", "autograder/assignment/hidden/test_hidden_free_points.py",
                     ".github/workflows/extra.yml", "conftest.py shadows", "exercises/sitecustomize.py"]:
        assert expected in flags, expected
    assert "test_my_own" not in flags and "amp_update.py" not in flags


def test_windows_line_endings_are_not_flagged(student_repo):
    for relative in json.loads((student_repo / ".github/classroom-manifest.json").read_text())["files"]:
        path = student_repo / relative
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert integrity.tamper_flags(student_repo) == []


def test_missing_manifest_is_flagged_but_not_in_the_course_repository(student_repo, tmp_path):
    (student_repo / ".github/classroom-manifest.json").unlink()
    assert any("manifest.json is missing" in flag for flag in integrity.tamper_flags(student_repo))
    assert integrity.tamper_flags(ROOT) == []           # the development repository
    bare = tmp_path / "bare"
    (bare / "exercises").mkdir(parents=True)
    assert integrity.tamper_flags(bare) == []           # a plain submission folder


def test_trusted_manifest_overrides_the_students_copy(student_repo, export, monkeypatch):
    trusted = export[0] / ".github/classroom-manifest.json"   # as the bundle carries it
    own = student_repo / ".github/classroom-manifest.json"
    workflow = student_repo / ".github/workflows/classroom.yml"
    workflow.write_text(workflow.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    data = json.loads(own.read_text(encoding="utf-8"))
    data["files"][".github/workflows/classroom.yml"] = integrity.normalised_sha256(workflow)
    own.write_text(json.dumps(data), encoding="utf-8")
    assert integrity.tamper_flags(student_repo) == []   # fooled: the student controls this copy
    monkeypatch.setenv("CLASSROOM_MANIFEST", str(trusted))
    flags = integrity.tamper_flags(student_repo)
    assert any("classroom-manifest.json differs" in flag for flag in flags)
    assert any(".github/workflows/classroom.yml differs" in flag for flag in flags)


def test_integrity_check_stays_light():
    # It runs before every grade: no torch import.
    code = "import sys, autograder.intake.integrity as i; i.tamper_flags('.'); print('torch' in sys.modules)"
    proc = run(["-c", code], cwd=ROOT, env=clean_env())
    assert proc.stdout.strip() == "False", proc.stderr


# --------------------------------------------------------------------------- private bundle

def test_bundle_is_a_complete_trusted_grader(export, bundle):
    template = export[0]
    hidden = sorted(p.name for p in (ROOT / "autograder" / "assignment" / "hidden").glob("test_hidden_*.py"))
    assert hidden and sorted(p.name for p in (bundle / "autograder/assignment/hidden").glob("test_hidden_*.py")) == hidden
    assert (bundle / "classroom-manifest.json").read_bytes() == \
        (template / ".github/classroom-manifest.json").read_bytes()
    assert (bundle / "requirements.txt").is_file() and (bundle / "README.md").is_file()
    assert not (bundle / "solutions").exists()
    # what the grader reads outside its package: the lab's record layout, and nothing else of the lab
    assert (bundle / "gpu_lab/amp_lab_layout.py").read_bytes() == (ROOT / "gpu_lab/amp_lab_layout.py").read_bytes()
    assert [path.name for path in (bundle / "gpu_lab").iterdir()] == ["amp_lab_layout.py"]


@pytest.mark.slow
def test_mode_a_grade_from_the_bundle_reports_hidden_points_and_flags(export, bundle, tmp_path):
    """The workflow's mode (a): the trusted copy grades the student's exercises,
    the reporter announces what results.json says, edits are flagged."""
    template = export[0]
    student = pathlib.Path(shutil.copytree(template, tmp_path / "student"))
    shutil.copyfile(ROOT / "solutions" / "amp_update.py", student / "exercises" / "amp_update.py")
    public = sorted((student / "exercises/tests").glob("test_*.py"))[0]
    public.write_text(public.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    output, results = tmp_path / "github_output", tmp_path / "results.json"
    output.write_text("", encoding="utf-8")
    env = clean_env(GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
                    CLASSROOM_MANIFEST=str(bundle / "classroom-manifest.json"))
    proc = run(["-m", "autograder", "grade", "--classroom", "--quiet", "--seed", "11",
                "--submission", str(student / "exercises"), "--results", str(results)], cwd=bundle, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(results.read_text(encoding="utf-8"))
    assert any(t["visibility"] == "hidden" for t in data["tests"]), "hidden tests ran"
    assert data["extra_data"]["flags"] == [f"protected file exercises/tests/{public.name} differs from the template"]
    (encoded,) = reporter.read_github_output(output)
    read = reporter.read_results("grade", {"GRADE_RESULTS": encoded})
    assert reporter.contract_problems(read[0][1], encoded) == []
    assert reporter.points(read) == (data["score"], data["max_score"]) and data["score"] > 0
    assert "test_code" not in base64.b64decode(encoded).decode()


# --------------------------------------------------------------------------- feedback language

HIDDEN_NOTE = ("Hidden tests are not available here: only the visible tests were run. "
               "Your final grade also includes hidden tests.")
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_template_and_bundle_set_chinese_feedback(export):
    from autograder.toml_reader import tomllib

    template, bundle = export
    config = tomllib.loads((template / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["autograder"]["lang"] == "zh"
    assert i18n.configured_language(str(template)) == "zh"
    if bundle is not None:  # mode (a) grades from the bundle's folder: same language there
        assert i18n.configured_language(str(bundle)) == "zh"


@pytest.fixture(scope="module")
def language_runs(readme_runs):
    """The stubs of a fresh export graded three ways: {name: (stdout, results)}: the README's own
    `grade` and `grade --lang en`, and `grade` with AUTOGRADER_LANG=en (all run by readme_runs)."""
    runs = {}
    for name, command in [("default", "python -m autograder grade"), ("--lang en", "python -m autograder grade --lang en"),
                          ("AUTOGRADER_LANG=en", ENGLISH_BY_ENVIRONMENT)]:
        proc, results = readme_runs[command]
        assert proc.returncode == 0, f"{name}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        runs[name] = (proc.stdout, results)
    return runs


def test_fresh_export_grades_in_chinese_unless_asked_for_english(language_runs):
    stdout, data = language_runs["default"]
    assert data["extra_data"]["lang"] == "zh" and data["score"] < data["max_score"]
    assert "TODO" in stdout  # the diagnosis names a TODO in either language
    for name in ("--lang en", "AUTOGRADER_LANG=en"):
        stdout, data = language_runs[name]
        assert data["extra_data"]["lang"] == "en", name
        lines = stdout.splitlines()
        assert any(line.startswith("TOTAL") for line in lines), name
        assert "First thing to fix" in stdout and "TODO" in stdout, name  # beside the scores or under them


def test_fresh_export_feedback_is_written_in_chinese(language_runs):
    """The Chinese rendering itself: needs the lead's translation of grader.po."""
    translated = i18n.text("TOTAL", "zh")
    if translated == "TOTAL":
        pytest.xfail("LEAD: autograder/locale/zh/grader.po does not translate 'TOTAL' yet (expected '总分'); "
                     "this test checks the Chinese table once it does")
    assert translated == "总分"
    stdout, _ = language_runs["default"]
    lines = stdout.splitlines()
    assert any(line.startswith("总分") for line in lines)
    assert not any(line.startswith("TOTAL") for line in lines)
    assert CJK.search(stdout) and "TODO" in stdout


# --------------------------------------------------------------------------- README commands

def readme_commands(readme):
    """Command lines of the README's ```bash blocks, without trailing comments."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", readme, flags=re.S):
        for line in re.sub(r"\\\n\s*", "", block).splitlines():  # a line continued with \ is one command
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


SETUP_PREFIXES = ("python -m venv", "python3 -m venv", "source ", "pip install", "pip config", "uv pip ")


def argv(command, cwd=None):
    words = shlex.split(command)
    if cwd is not None:  # the shell's globs, as bash expands them in the folder
        words = [found for word in words for found in
                 (sorted(str(path.relative_to(cwd)) for path in pathlib.Path(cwd).glob(word)) or [word]
                  if "*" in word else [word])]
    if words[0] == "pytest":
        return [sys.executable, "-m", "pytest", *words[1:]]
    assert words[0] in ("python", "python3"), f"README command not covered by this test: {command}"
    return [sys.executable, *words[1:]]


def expected_status(command, solved):
    """What each README command must return in a fresh template."""
    if command.startswith("pytest"):
        return {0} if solved else {1}   # stubs: tests fail -- never usage errors or "no tests"
    if " check-lab " in f" {command} ":
        return {1}                       # a CPU smoke record: valid, but no GPU credit
    if " conformance" in f" {command} ":
        return {0} if solved else {1}    # stubs: checks fail (never a usage error)
    return {0}


def readme_halves(readme):
    """(Chinese part, English part) of the bilingual README, Chinese first."""
    chinese, english = readme.index("\n## 中文"), readme.index("\n## English")
    assert chinese < english, "the Chinese part comes first"
    return readme[chinese:english], readme[english:]


def test_readme_is_bilingual_with_the_same_commands(export):
    chinese, english = readme_halves((export[0] / "README.md").read_text(encoding="utf-8"))
    assert CJK.search(chinese) and not CJK.search(english)
    assert readme_commands(chinese) == readme_commands(english)
    powershell = [re.findall(r"```powershell\n(.*?)```", half, flags=re.S) for half in (chinese, english)]
    assert powershell[0] and [[line.split("#")[0].strip() for line in block.splitlines()] for block in powershell[0]] \
        == [[line.split("#")[0].strip() for line in block.splitlines()] for block in powershell[1]]
    for half in (chinese, english):
        for needed in ("pytest exercises/tests", "python -m autograder grade --module loss_scaler",
                       "python -m autograder grade --verbose", "python -m autograder grade --quiet",
                       "python -m autograder grade --lang en", "AUTOGRADER_LANG", "autograder/assignment/visible",
                       "pypi.tuna.tsinghua.edu.cn", "--model-path", "HF_ENDPOINT",
                       "python -m autograder conformance", "check_amp_framework_conformance", "256 KiB"):
            assert needed in half, needed


def test_readme_setup_installs_the_cpu_build_of_torch(export):
    commands = readme_commands((export[0] / "README.md").read_text(encoding="utf-8"))
    installs = [c for c in commands if c.startswith("pip install")]
    assert any("download.pytorch.org/whl/cpu" in c and "torch==" in c for c in installs)
    assert "pip install -r requirements.txt" in installs
    assert installs.index("pip install -r requirements.txt") > 0  # torch first


ENGLISH_BY_ENVIRONMENT = "AUTOGRADER_LANG=en python -m autograder grade --seed 7"
SOLVED = "solved"


@pytest.fixture(scope="module")
def fresh_venv(export):
    """The venv the template's README set-up makes from the template's own requirements.txt
    (tests/support/student_venv.py; cached between sessions)."""
    if not export_envs.LINUX:
        pytest.skip(export_envs.NOT_LINUX)
    if student_venv.python() is None:
        pytest.skip("no python outside this venv to build a fresh environment with")
    return student_venv.build(export[0])


def fresh_env(**extra):
    """clean_env() without anything of the development venv (its PATH entries, VIRTUAL_ENV)."""
    env = export_envs.clean_environ(**extra)
    return {name: value for name, value in env.items() if name in clean_env(**extra)}


@pytest.fixture(scope="module")
def readme_runs(export, fresh_venv, tmp_path_factory):
    """Every command line of the README (setup and GPU-only ones aside) run verbatim in a fresh
    export with the stubs, in the venv its own set-up made (``fresh_venv``): {command: (process,
    results.json or None)}, the folder under None.
    Both halves of the README list the same commands (test_readme_is_bilingual_with_the_same_commands):
    each distinct line runs once. The grades (each writes results.json) run one after another in
    the README's order, beside the other commands in theirs (one process each: two cores). The
    grader's files are compiled first, as the first command a student runs compiles them: a grade
    flags a grader file (a new cache among them) that appears while it runs.
    Beside them, each in a fresh export of its own: a grade with AUTOGRADER_LANG=en
    (ENGLISH_BY_ENVIRONMENT), and under SOLVED the public tests and the grade of the reference
    solutions: (pytest's process, grade's process, results)."""
    from concurrent.futures import ThreadPoolExecutor

    base = tmp_path_factory.mktemp("readme")

    def fresh_copy(name):
        return student_venv.link(pathlib.Path(shutil.copytree(export[0], base / name)), fresh_venv)

    template = fresh_copy("fresh")
    commands = readme_commands((template / "README.md").read_text(encoding="utf-8"))
    runnable = list(dict.fromkeys(c for c in commands if not c.startswith(SETUP_PREFIXES) and "real_gpu" not in c))
    runs = {None: template}
    env = fresh_env()
    compiled = student_venv.run("python -m compileall -q autograder gpu_lab", template, env)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr

    def run_in(folder, command, environment):
        """``command`` run in ``folder``: (its process, the results.json a grade wrote, or None).
        Only a grade reads results.json: the other lane's grade may be writing it meanwhile."""
        grades = "python -m autograder grade" in command
        results = folder / "results.json"
        if grades:
            results.unlink(missing_ok=True)  # never an earlier grade's
        proc = student_venv.run(command, folder, environment)
        return proc, json.loads(results.read_text(encoding="utf-8")) if grades and results.is_file() else None

    def lane(lines):
        for command in lines:
            runs[command] = run_in(template, command, env)

    def english_by_environment():
        runs[ENGLISH_BY_ENVIRONMENT] = run_in(fresh_copy("english"), ENGLISH_BY_ENVIRONMENT, env)

    def solved():
        folder = fresh_copy("solved")
        for module in MODULES:
            shutil.copyfile(ROOT / "solutions" / f"{module}.py", folder / "exercises" / f"{module}.py")
        public, _none = run_in(folder, "pytest", env)
        runs[SOLVED] = (public, *run_in(folder, "python -m autograder grade", env))

    grades = [c for c in runnable if c.startswith("python -m autograder grade")]
    others = [c for c in runnable if c not in grades]
    with ThreadPoolExecutor(2) as pool:  # the longest first; the solved export takes the first free lane
        for done in [pool.submit(lane, grades), pool.submit(lambda: (lane(others), english_by_environment())),
                     pool.submit(solved)]:
            done.result()
    return {None: template, **{command: runs[command] for command in runnable},
            ENGLISH_BY_ENVIRONMENT: runs[ENGLISH_BY_ENVIRONMENT], SOLVED: runs[SOLVED]}


@pytest.mark.slow
def test_readme_commands_succeed_in_a_fresh_export(readme_runs):
    commands = [command for command in readme_runs if command not in (None, ENGLISH_BY_ENVIRONMENT, SOLVED)]
    assert any(c.startswith("pytest") for c in commands)
    assert "python -m autograder grade" in commands
    for command in commands:
        proc, data = readme_runs[command]
        assert proc.returncode in expected_status(command, solved=False), \
            f"{command}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        if command == "python -m autograder grade":
            assert data["score"] == 0 and data["max_score"] > 0 and data["extra_data"]["flags"] == []
            note = i18n.text(HIDDEN_NOTE, data["extra_data"]["lang"])  # the template grades in Chinese
            assert note in data["extra_data"]["notes"]
            assert re.sub(r"\s+", "", note) in re.sub(r"\s+", "", proc.stdout)  # wrapped lines joined
        if "check-lab" in command:  # check-lab speaks the template's language too
            verdict = i18n.text("valid record, no GPU credit: {summary}", "zh", summary="")
            assert verdict in proc.stdout

    # A fresh template with the reference solutions: public tests and grade all green.
    public, proc, data = readme_runs[SOLVED]
    assert public.returncode == 0, public.stdout[-3000:]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    graded = [t for t in data["tests"] if t["tags"][0] in MODULES]
    assert graded and all(t["status"] == "passed" for t in graded)
    assert data["extra_data"]["flags"] == []


IMPORT_EVERY_MODULE = ("import importlib, pkgutil, autograder\n"
                       "for found in pkgutil.walk_packages(autograder.__path__, 'autograder.'):\n"
                       "    importlib.import_module(found.name)\n")


def test_template_modules_import_and_its_help_lists_what_works_there(export, fresh_venv, tmp_path):
    """In the template's own venv every module of its grader imports (none needs the staff's side);
    ``--help`` lists, in either language, exactly the student's commands, each of which answers
    ``--help``; a staff command typed there gets one line in the run's language, no traceback."""
    from autograder import __main__ as command_line, staff_side

    template = student_venv.link(pathlib.Path(shutil.copytree(export[0], tmp_path / "t")), fresh_venv)
    env = fresh_env(COLUMNS="80")
    (template / "import_all.py").write_text(IMPORT_EVERY_MODULE, encoding="utf-8")
    imported = student_venv.run("python import_all.py", template, env)
    assert imported.returncode == 0, imported.stderr[-3000:]
    commands = command_line.commands()
    student = {name for name, module in commands.items() if not staff_side.is_staff(module.replace(".", "/") + ".py")}
    assert {"grade", "watch", "classroom-report", "conformance"} <= student
    for lang in ("zh", "en"):
        shown = student_venv.run(f"python -m autograder --help --lang {lang}", template, env)
        assert shown.returncode == 0, shown.stderr[-3000:]
        assert set(re.findall(r"^    (\S+)", shown.stdout, re.M)) == student, shown.stdout
        for name in sorted(student):
            helped = student_venv.run(f"python -m autograder {name} --help --lang {lang}", template, env)
            assert helped.returncode == 0 and helped.stderr == "", f"{name}: {helped.stderr[-3000:]}"
        for name in sorted(set(commands) - student):
            refused = student_venv.run(f"python -m autograder {name} --lang {lang}", template, env)
            said = i18n.text("{command} is a course staff command, not part of the student repository.", lang,
                             command=name)
            assert (refused.returncode, refused.stdout, refused.stderr) == (2, "", said + "\n"), refused.stderr


def test_replaced_visible_test_is_flagged_and_grading_completes(student_repo):
    """A student replaces a graded test file with a trivial one (no module, no
    points marker): the grade completes, the edit is a flag, and the extra test
    is shown under the grader, never counted for a module."""
    for module in MODULES:
        shutil.copyfile(ROOT / "solutions" / f"{module}.py", student_repo / "exercises" / f"{module}.py")
    (student_repo / "autograder" / "assignment" / "visible" / "test_visible_amp_update.py").write_text(
        "def test_everything_passes():\n    pass\n", encoding="utf-8")
    proc = subprocess.run(argv("python -m autograder grade --seed 3"), cwd=student_repo, capture_output=True,
                          text=True, timeout=600, env=clean_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((student_repo / "results.json").read_text(encoding="utf-8"))
    assert any("autograder/assignment/visible/test_visible_amp_update.py" in flag and "differs" in flag
               for flag in data["extra_data"]["flags"])
    trivial = [t for t in data["tests"] if "everything passes" in t["name"]]
    assert trivial and all(t["tags"] == ["grader"] for t in trivial)
    # the replaced tests are gone (in the template only visible tests grade amp_update)
    assert data["extra_data"]["modules"].get("amp_update", {"max_score": 0})["max_score"] < 31


# --------------------------------------------------------------------------- the local grade is honest

TWO_AMP_UPDATE_BUGS = [  # squares summed in FP16, and a finite check that misses NaN
    ("squared_sum = squared_sum + gradient.float().square().sum()",
     "squared_sum = squared_sum + gradient.square().sum().float()"),
    ("bool(torch.isfinite(gradient).all())", "bool((~torch.isinf(gradient)).all())"),
]


def with_amp_update_bugs(student):
    from support.helpers import mutate

    for module in MODULES:
        shutil.copyfile(ROOT / "solutions" / f"{module}.py", student / "exercises" / f"{module}.py")
    (student / "exercises" / "amp_update.py").write_text(mutate("amp_update", *TWO_AMP_UPDATE_BUGS),
                                                         encoding="utf-8")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_local_grade_without_hidden_tests_never_claims_a_module_is_done(student_repo, tmp_path, lang):
    """In the template every module's hidden points are unknown here: each line says
    how many were not run, and neither the terminal nor the job summary shows a
    check mark, not even for the module with two real bugs or the correct ones."""
    from autograder.assignment.description import HIDDEN_POINTS

    with_amp_update_bugs(student_repo)
    summary = tmp_path / "summary.md"
    proc = run(["-m", "autograder", "grade", "--seed", "5", "--summary", str(summary), "--lang", lang],
               cwd=student_repo, env=clean_env(COLUMNS="80"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((student_repo / "results.json").read_text(encoding="utf-8"))
    assert data["extra_data"]["hidden_not_run"] == HIDDEN_POINTS
    assert not any(t["visibility"] == "hidden" for t in data["tests"])
    stdout = proc.stdout
    assert "✓" not in stdout and "✅" not in stdout
    start = stdout.index(i18n.text("Module", lang) + " ")  # the table comes last, after the failed tests
    table = stdout[start:stdout.index("\n\n", start)]
    for module in MODULES:
        (row,) = [line for line in table.splitlines() if line.startswith(module + " ")]
        points = i18n.text("{points} hidden points", lang, points=str(HIDDEN_POINTS[module]))
        assert points in row, row
    assert all(len(line) <= 80 for line in stdout.splitlines())
    markdown = summary.read_text(encoding="utf-8")
    rows = {module: next(line for line in markdown.splitlines() if line.startswith(f"| `{module}` |"))
            for module in MODULES}
    for module, row in rows.items():
        assert "✅" not in row, row
        assert i18n.text("{score:g} / {maximum:g} visible · {points:g} hidden points not run", lang, score=0,
                         maximum=0, points=HIDDEN_POINTS[module]).split("·")[1].strip() in row
    heading = markdown.splitlines()[0]
    assert heading.startswith("## " + i18n.text("Autograding, visible tests only: {score:g} / {maximum:g}", lang,
                                                score=data["score"], maximum=data["max_score"]))


def test_template_readme_does_not_say_the_local_grade_is_githubs(export):
    """The local grade runs the visible tests only: neither half of the README
    says it grades "as GitHub does"."""
    chinese, english = readme_halves((export[0] / "README.md").read_text(encoding="utf-8"))
    assert "和 GitHub 上一样" not in chinese and "as GitHub grades" not in english
    assert "隐藏测试" in chinese.split("python -m autograder grade ", 1)[1].splitlines()[0]
    assert "hidden" in english.split("python -m autograder grade ", 1)[1].splitlines()[0]
