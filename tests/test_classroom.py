"""``grade --classroom`` against the Classroom reporter's reading rules, and the
workflow steps that make sure the reporter always gets a result.

One real grade (a subprocess, as in the workflow) is shared by the module: a
partial submission -- Module 1 solved, the other two stubs -- so both passing and
failing tests reach the payload.
"""
import base64
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import classroom_reporter as reporter  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "classroom.yml"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Run ``python -m autograder grade --classroom`` once, the way the workflow does."""
    work = tmp_path_factory.mktemp("classroom")
    submission = work / "exercises"
    submission.mkdir()
    shutil.copyfile(ROOT / "solutions" / "amp_update.py", submission / "amp_update.py")
    for module in ("loss_scaler", "amp_training_step"):
        shutil.copyfile(ROOT / "exercises" / f"{module}.py", submission / f"{module}.py")
    output, summary, results = work / "github_output", work / "step_summary", work / "results.json"
    output.write_text("", encoding="utf-8")
    env = dict(os.environ, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary))
    env.pop("CLASSROOM_MANIFEST", None)
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--classroom", "--quiet",
                           "--submission", str(submission), "--results", str(results), "--seed", "7"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    raw = output.read_text(encoding="utf-8")
    values = reporter.read_github_output(output)
    assert len(values) == 1, raw[:500]
    payload = json.loads(base64.b64decode(values[0], validate=True))
    return {"raw": raw, "encoded": values[0], "payload": payload,
            "results": json.loads(results.read_text(encoding="utf-8")),
            "summary": summary.read_text(encoding="utf-8"), "stdout": proc.stdout}


def test_exactly_one_unwrapped_result_line(graded):
    lines = graded["raw"].splitlines()
    assert len(lines) == 1 and lines[0].startswith("result=")
    assert "\n" not in graded["encoded"] and graded["raw"].endswith("\n")


def test_payload_meets_the_reporter_contract(graded):
    assert reporter.contract_problems(graded["payload"], graded["encoded"]) == []
    assert graded["payload"]["version"] == 1


def test_reporter_announces_the_points_of_results_json(graded):
    results = graded["results"]
    read = reporter.read_results("grade", {"GRADE_RESULTS": graded["encoded"]})
    assert reporter.points(read) == (results["score"], results["max_score"])
    score, maximum = results["score"], results["max_score"]
    assert reporter.notices(read) == [
        f"::notice title=Autograding complete::Points {score}/{maximum}",
        f'::notice title=Autograding report::{{"totalPoints":{score},"maxPoints":{maximum}}}',
    ]
    assert 0 < score < maximum  # the partial submission earns some points, not all


def test_tests_map_one_to_one_onto_results_json(graded):
    tests, results = graded["payload"]["tests"], graded["results"]["tests"]
    assert len(tests) == len(results)
    assert all(mine["name"] and theirs["name"].startswith(mine["name"])
               for mine, theirs in zip(tests, results))
    assert [t["status"] for t in tests] == ["pass" if t["status"] == "passed" else "fail"
                                            for t in results]
    assert [t["score"] for t in tests] == [t["score"] for t in results]


def test_failing_submission_turns_the_run_red_but_keeps_its_points(graded):
    read = reporter.read_results("grade", {"GRADE_RESULTS": graded["encoded"]})
    assert graded["payload"]["status"] == "fail"
    assert reporter.exit_code(read) == 1
    assert reporter.points(read)[0] > 0


def test_no_hidden_test_source_in_the_payload(graded):
    text = base64.b64decode(graded["encoded"]).decode("utf-8")
    assert "test_code" not in text
    hidden = sorted((ROOT / "autograder" / "hidden").glob("test_*.py"))
    if not hidden:
        pytest.skip("no hidden tests installed")
    # No line of hidden test code (long enough to be distinctive) reaches the student.
    for path in hidden:
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            # String-literal lines (titles, hints) are feedback by design; code is not.
            if len(line) >= 40 and not line.startswith(('"', "'", 'f"', "#", "@")):
                assert line not in text, f"{path.name}: {line!r}"


def test_job_summary_has_module_and_visible_test_tables(graded):
    summary = graded["summary"]
    for module in ("amp_update", "loss_scaler", "amp_training_step"):
        assert f"| `{module}` |" in summary
    visible = [t for t in graded["results"]["tests"] if t["visibility"] == "visible"]
    assert visible
    for test in visible:
        assert test["name"].replace("|", "\\|") in summary


def test_oversized_feedback_is_trimmed_below_the_environment_limit():
    from autograder.reports import classroom
    from autograder.results import GradeReport, TestResult

    tests = [TestResult(name=f"amp_update: case {i} " + "x" * 200, module="amp_update",
                        max_score=1.0, score=float(i % 2), passed=bool(i % 2),
                        output="feedback " * 2000) for i in range(400)]
    report = GradeReport(tests=tests, seed=1)
    encoded = classroom.encode_payload(report)
    payload = json.loads(base64.b64decode(encoded))
    assert reporter.contract_problems(payload, encoded) == []
    read = reporter.read_results("grade", {"GRADE_RESULTS": encoded})
    assert reporter.points(read) == (200, 400)


def test_model_rejects_what_the_reporter_mishandles():
    # The model must be able to fail: each of these breaks the real reporter.
    good = {"version": 1, "status": "pass", "max_score": 2,
            "tests": [{"name": "a", "status": "pass", "score": 2, "line_no": 0}]}
    assert reporter.contract_problems(good) == []
    assert reporter.contract_problems(dict(good, max_score="2"))
    assert reporter.contract_problems(dict(good, tests=[]))
    assert reporter.contract_problems(dict(good, tests=[dict(good["tests"][0], score=None)]))
    assert reporter.contract_problems(dict(good, tests=[dict(good["tests"][0], test_code="x")]))
    plain_json = json.dumps(good)
    with pytest.raises(reporter.ReporterError):
        reporter.read_results("grade", {"GRADE_RESULTS": plain_json})
    with pytest.raises(reporter.ReporterError, match="comma-separated"):
        reporter.read_results("my-grade", {})  # hyphenated ids: the misleading message
    encoded = base64.b64encode(json.dumps(good).encode()).decode()
    assert reporter.read_results("grade", {"GRADE_RESULTS": encoded})[0][1] == good
    with pytest.raises(reporter.ReporterError):  # looked up as GRADE_RESULTS, not Grade_RESULTS
        reporter.read_results("grade", {"Grade_RESULTS": encoded})


# --------------------------------------------------------------------------- the real reporter

def test_real_reporter_bundle_if_available(graded, tmp_path):
    """Set CLASSROOM_REPORTER_JS to the reporter's dist/main.js (v1) to run it for real."""
    script = os.environ.get("CLASSROOM_REPORTER_JS")
    node = shutil.which("node")
    if not script or not node:
        pytest.skip("CLASSROOM_REPORTER_JS (the reporter's dist/main.js) and node are needed")
    env = {"PATH": os.environ.get("PATH", ""), "INPUT_RUNNERS": "grade",
           "GRADE_RESULTS": graded["encoded"]}
    proc = subprocess.run([node, script], env=env, capture_output=True, text=True, timeout=120)
    notices = [line for line in proc.stdout.splitlines() if line.startswith("::notice")]
    read = reporter.read_results("grade", {"GRADE_RESULTS": graded["encoded"]})
    assert notices == reporter.notices(read)
    assert proc.returncode == reporter.exit_code(read)
    totals = [line for line in proc.stdout.splitlines()
              if line.startswith(("::notice", "Total points for")) or "Grand total" in line]
    assert len(totals) == 4 and not any("NaN" in line for line in totals), totals
    assert "undefined" not in proc.stdout


# --------------------------------------------------------------------------- workflow steps

def _step(step_id):
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["run-autograding-tests"]["steps"]
    return next(step for step in steps if step.get("id") == step_id)


def _bash_with_base64():
    bash = shutil.which("bash")
    if bash is None or sys.platform == "win32":
        pytest.skip("needs bash (the workflow runs on ubuntu-latest)")
    probe = subprocess.run([bash, "-c", "printf x | base64 -w0"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("this base64 has no -w0 (GNU coreutils, as on ubuntu-latest)")
    return bash


def _run_step(step_id, tmp_path, env, cwd=None):
    bash = _bash_with_base64()
    output, summary, github_env = tmp_path / "out", tmp_path / "summary", tmp_path / "env"
    for path in (output, summary, github_env):
        path.write_text("", encoding="utf-8")
    full_env = dict(os.environ, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary),
                    GITHUB_ENV=str(github_env), GITHUB_WORKSPACE=str(cwd or tmp_path),
                    RUNNER_TEMP=str(tmp_path / "runner-temp"), **env)
    (tmp_path / "runner-temp").mkdir(exist_ok=True)
    proc = subprocess.run([bash, "-eo", "pipefail", "-c", _step(step_id)["run"]], env=full_env,
                          cwd=cwd or tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return output, summary.read_text(encoding="utf-8"), github_env.read_text(encoding="utf-8")


@pytest.mark.parametrize("max_score, outcome, expected_max", [
    ("", "failure", 1), ("100", "cancelled", 100), ("12abc", "", 1)])
def test_fallback_step_gives_the_reporter_an_error_result(tmp_path, max_score, outcome, expected_max):
    output, summary, _ = _run_step("fallback", tmp_path,
                                   {"MAX_SCORE": max_score, "GRADE_OUTCOME": outcome})
    values = reporter.read_github_output(output)
    assert len(values) == 1
    read = reporter.read_results("grade", {"GRADE_RESULTS": values[0]})
    payload = read[0][1]
    assert reporter.contract_problems(payload, values[0]) == []
    assert payload["status"] == "error" and payload["tests"][0]["status"] == "error"
    assert reporter.notices(read)[0] == f"::notice title=Autograding complete::Points 0/{expected_max}"
    assert reporter.exit_code(read) == 1
    assert (outcome or "not run") in payload["tests"][0]["message"]
    assert "did not finish" in summary


def test_reporter_gets_the_grade_result_or_the_fallback():
    reporter_step = next(s for s in yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
                         ["jobs"]["run-autograding-tests"]["steps"]
                         if str(s.get("uses", "")).startswith("classroom-resources/autograding-grading-reporter"))
    value = reporter_step["env"]["GRADE_RESULTS"]
    assert "steps.grade.outputs.result" in value and "steps.fallback.outputs.result" in value
    assert value.index("steps.grade.") < value.index("steps.fallback.")
    fallback = _step("fallback")
    assert "always()" in fallback["if"] and "steps.grade.outputs.result == ''" in fallback["if"]


@pytest.mark.parametrize("has_token, repo, hidden", [
    ("true", "course/hidden-tests", "true"), ("false", "course/hidden-tests", "false"),
    ("true", "", "false")])
def test_mode_step_needs_both_the_secret_and_the_variable(tmp_path, has_token, repo, hidden):
    output, summary, _ = _run_step("mode", tmp_path, {"HAS_TOKEN": has_token, "HIDDEN_TESTS_REPO": repo})
    assert output.read_text(encoding="utf-8") == f"hidden={hidden}\n"
    # Without hidden tests the job summary says so before the grade's own table.
    assert ("visible tests only" in summary) == (hidden == "false")


def test_prepare_step_grades_with_the_trusted_copy_in_mode_a(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / ".course-grader" / "autograder").mkdir(parents=True)
    (workspace / "exercises").mkdir()
    output, _, github_env = _run_step("prepare", tmp_path, {"HIDDEN": "true"}, cwd=workspace)
    values = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines())
    grader = pathlib.Path(values["grader"])
    assert grader == tmp_path / "runner-temp" / "course-grader" and (grader / "autograder").is_dir()
    assert not (workspace / ".course-grader").exists()  # moved out of the student's tree
    assert values["submission"] == str(workspace / "exercises")
    assert github_env == f"CLASSROOM_MANIFEST={grader}/classroom-manifest.json\n"


@pytest.mark.parametrize("has_manifest, expected", [(False, "solutions"), (True, "exercises")])
def test_prepare_step_self_tests_only_in_the_development_repository(tmp_path, has_manifest, expected):
    workspace = tmp_path / "ws"
    (workspace / "solutions").mkdir(parents=True)
    (workspace / "exercises").mkdir()
    if has_manifest:
        (workspace / ".github").mkdir()
        (workspace / ".github" / "classroom-manifest.json").write_text("{}", encoding="utf-8")
    output, _, github_env = _run_step("prepare", tmp_path, {"HIDDEN": "false"}, cwd=workspace)
    values = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines())
    assert values == {"grader": str(workspace), "submission": str(workspace / expected)}
    assert github_env == ""
