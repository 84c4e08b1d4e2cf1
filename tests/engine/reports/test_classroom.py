"""``grade --classroom`` against the Classroom reporter's reading rules, and the
workflow steps: the grade that runs without the runner's file-command
variables, the report step that turns its results.json into the reporter's
input, and the fallback that makes sure the reporter always gets a result.

One real grade (a subprocess, as in the workflow) is shared by the module: a
partial submission of the toy assignment (tests/toy_assignment) -- TODO 1 solved,
TODO 2 the stub's -- so a passing visible test and a failing hidden one reach the
payload. The payload is the engine's; any assignment's grade shows it.
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

from support import classroom_reporter as reporter  # noqa: E402
from support import toy  # noqa: E402
from support.cli import autograder_command  # noqa: E402
from support.helpers import ROOT  # noqa: E402
from support.language_check import english_runs  # noqa: E402
from support.runner_files import output_values, workflow_commands  # noqa: E402

WORKFLOW = ROOT / ".github" / "workflows" / "classroom.yml"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Run ``python -m autograder grade --classroom`` once, the way the workflow does."""
    work = tmp_path_factory.mktemp("classroom")
    submission = toy.submission(work / "exercises", toy.HALF_DONE)
    output, summary, results = work / "github_output", work / "step_summary", work / "results.json"
    output.write_text("", encoding="utf-8")
    env = toy.env(dict(os.environ, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary)))
    env.pop("CLASSROOM_MANIFEST", None)
    proc = autograder_command("grade", "--classroom", "--quiet", "--submission", submission, "--results", results,
                              "--seed", "7", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    raw = output.read_text(encoding="utf-8")
    values = reporter.read_github_output(output)
    assert len(values) == 1, raw[:500]
    payload = json.loads(base64.b64decode(values[0], validate=True))
    return {"raw": raw, "encoded": values[0], "payload": payload,
            "results": json.loads(results.read_text(encoding="utf-8")),
            "summary": summary.read_text(encoding="utf-8"), "stdout": proc.stdout}


@pytest.mark.slow
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
    assert all(mine["name"] and theirs["name"].startswith(mine["name"].removesuffix("…"))
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
    hidden = sorted((toy.FOLDER / "hidden").glob("test_*.py"))
    assert hidden and any(t["visibility"] == "hidden" and t["status"] == "failed" for t in graded["results"]["tests"])
    # No line of hidden test code (long enough to be distinctive) reaches the student.
    for path in hidden:
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            # String-literal lines (titles, hints) are feedback by design; code is not.
            if len(line) >= 40 and not line.startswith(('"', "'", 'f"', "#", "@")):
                assert line not in text, f"{path.name}: {line!r}"


def test_job_summary_has_module_and_visible_test_tables(graded):
    from autograder.reports.safe_text import markdown_text

    summary = graded["summary"]
    assert f"| `{toy.MODULE}` |" in summary
    visible = [t for t in graded["results"]["tests"] if t["visibility"] == "visible"]
    assert visible
    for test in visible:
        assert f"| {markdown_text(test['name'], limit=200)} |" in summary


def test_printed_table_starts_no_workflow_command(graded):
    assert "TOTAL" in graded["stdout"] and workflow_commands(graded["stdout"]) == []


def test_classroom_report_sends_exactly_what_grade_classroom_sent(graded, tmp_path):
    """The same code builds the payload in both: from results.json."""
    results, output = tmp_path / "results.json", tmp_path / "out"
    results.write_text(json.dumps(graded["results"]), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "AUTOGRADE_MAX_SCORE")}
    proc = autograder_command("classroom-report", results, env=dict(env, GITHUB_OUTPUT=str(output)), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert output_values(output.read_text(encoding="utf-8")) == ({"result": graded["encoded"]}, None)


def test_oversized_feedback_is_trimmed_below_the_environment_limit():
    from autograder.reports import classroom
    from autograder.judging.results import GradeReport, TestResult

    tests = [TestResult(name=f"toy_sum: case {i} " + "x" * 200, module="toy_sum",
                        max_score=1.0, score=float(i % 2), passed=bool(i % 2),
                        output="feedback " * 2000) for i in range(400)]
    report = GradeReport(tests=tests, seed=1)
    encoded = classroom.encode_results(report.to_gradescope())
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
    for path in (output, summary, github_env, tmp_path / "path", tmp_path / "state"):
        path.write_text("", encoding="utf-8")
    full_env = dict(os.environ, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary),
                    GITHUB_ENV=str(github_env), GITHUB_PATH=str(tmp_path / "path"),
                    GITHUB_STATE=str(tmp_path / "state"), GITHUB_WORKSPACE=str(cwd or tmp_path),
                    GITHUB_ACTIONS="true", RUNNER_TEMP=str(tmp_path / "runner-temp"))
    full_env.pop("AUTOGRADE_MAX_SCORE", None)
    full_env.update(env)
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


def test_reporter_gets_the_report_result_or_the_fallback():
    reporter_step = next(s for s in yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
                         ["jobs"]["run-autograding-tests"]["steps"]
                         if str(s.get("uses", "")).startswith("classroom-resources/autograding-grading-reporter"))
    value = reporter_step["env"]["GRADE_RESULTS"]
    assert "steps.report.outputs.result" in value and "steps.fallback.outputs.result" in value
    assert value.index("steps.report.") < value.index("steps.fallback.")
    assert "steps.grade.outputs" not in WORKFLOW.read_text(encoding="utf-8")  # grade has no outputs now
    fallback = _step("fallback")
    assert "always()" in fallback["if"] and "steps.report.outputs.result == ''" in fallback["if"]
    assert _step("report")["if"] == "always()"


FILE_COMMANDS = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE")


def _fake_tools(tmp_path, sudo_works):
    """A ``python`` that records how it was started, and a ``sudo`` that either
    fails (no passwordless sudo) or, like sudo's env_reset, starts its command
    from an empty environment."""
    tools, record = tmp_path / "fake-bin", tmp_path / "record"
    tools.mkdir()
    record.mkdir()
    (tools / "python").write_text(f"#!/bin/sh\nenv > '{record}/env'\nprintf '%s\\n' \"$@\" > '{record}/args'\n",
                                  encoding="utf-8")
    sudo = (f"#!/bin/sh\n[ \"$1\" = -n ] || exit 1\nshift\necho \"$@\" >> '{record}/sudo'\n"
            "case \"$1\" in true|chmod) exit 0 ;; esac\nexec env -i \"$@\"\n") if sudo_works else "#!/bin/sh\nexit 1\n"
    (tools / "sudo").write_text(sudo, encoding="utf-8")
    for name in ("python", "sudo"):
        (tools / name).chmod(0o755)
    return tools, record


@pytest.mark.parametrize("sudo_works", [False, True])
def test_grade_step_runs_the_grader_without_file_command_variables(tmp_path, sudo_works):
    tools, record = _fake_tools(tmp_path, sudo_works)
    python_home = tmp_path / "opt" / "hostedtoolcache" / "Python" / "3.12.9" / "x64"
    env = {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "SUBMISSION": "/ws/exercises",
           "pythonLocation": str(python_home), "CLASSROOM_MANIFEST": "/trusted/manifest.json"}
    _run_step("grade", tmp_path, env)
    seen = dict(line.split("=", 1) for line in (record / "env").read_text().splitlines() if "=" in line)
    args = (record / "args").read_text().splitlines()
    assert args == ["-m", "autograder", "grade", "--submission", "/ws/exercises",
                    "--results", str(tmp_path / "runner-temp" / "results.json")]
    assert not set(FILE_COMMANDS) & set(seen), sorted(set(FILE_COMMANDS) & set(seen))
    assert seen["GITHUB_ACTIONS"] == "true" and seen["CLASSROOM_MANIFEST"] == "/trusted/manifest.json"
    assert seen["PATH"].startswith(str(tools))  # the same python, also under sudo
    if sudo_works:
        assert "SUBMISSION" not in seen  # a clean environment, as sudo gives
        calls = (record / "sudo").read_text().splitlines()
        assert calls[0] == "true"
        assert f"chmod -R go-w {python_home}" in calls
        assert f"chmod go-w {tmp_path / 'opt'}" in calls  # every folder above it too
        assert calls[-1].startswith("env -u GITHUB_OUTPUT")
    else:
        assert seen["SUBMISSION"] == "/ws/exercises"


def test_report_step_turns_results_into_one_result_line(tmp_path):
    python_dir = os.path.dirname(sys.executable)
    env = {"PATH": f"{python_dir}{os.pathsep}{os.environ['PATH']}"}
    (tmp_path / "runner-temp").mkdir()
    from autograder.reports.gradescope import write_results
    from autograder.judging.results import GradeReport
    from autograder.judging.results import TestResult as Result

    write_results(GradeReport(tests=[Result(name="t", module="toy_sum", max_score=4.0, score=3.0,
                                            passed=False, output="::add-mask::x")], seed=1),
                  tmp_path / "runner-temp" / "results.json")
    output, summary, _ = _run_step("report", tmp_path, env, cwd=ROOT)
    values, error = output_values(output.read_text(encoding="utf-8"))
    assert error is None and list(values) == ["result"]
    read = reporter.read_results("grade", {"GRADE_RESULTS": values["result"]})
    assert reporter.points(read) == (3, 4)
    assert "## Autograding: 3 / 4" in summary


def test_report_step_without_results_reports_an_error_not_a_score(tmp_path):
    python_dir = os.path.dirname(sys.executable)
    output, summary, _ = _run_step("report", tmp_path, {"PATH": f"{python_dir}{os.pathsep}{os.environ['PATH']}",
                                                        "AUTOGRADE_MAX_SCORE": "100"}, cwd=ROOT)
    values, error = output_values(output.read_text(encoding="utf-8"))
    assert error is None and list(values) == ["result"]
    read = reporter.read_results("grade", {"GRADE_RESULTS": values["result"]})
    assert read[0][1]["status"] == "error" and "no such file" in read[0][1]["tests"][0]["message"]
    assert reporter.notices(read)[0] == "::notice title=Autograding complete::Points 0/100"
    assert "## Autograding: 0 / 100" in summary


@pytest.mark.parametrize("has_token, repo, hidden", [
    ("true", "course/hidden-tests", "true"), ("false", "course/hidden-tests", "false"),
    ("true", "", "false")])
def test_mode_step_needs_both_the_secret_and_the_variable(tmp_path, has_token, repo, hidden):
    output, summary, _ = _run_step("mode", tmp_path, {"HAS_TOKEN": has_token, "HIDDEN_TESTS_REPO": repo})
    assert output.read_text(encoding="utf-8") == f"lang=en\nhidden={hidden}\n"
    # Without hidden tests the job summary says so before the grade's own table.
    assert ("visible tests only" in summary) == (hidden == "false")


def test_the_notes_the_job_writes_itself_are_in_the_courses_language(tmp_path):
    """A Chinese course (the template's [tool.autograder] lang) reads Chinese notes."""
    (tmp_path / "pyproject.toml").write_text('[tool.autograder]\nlang = "zh"\n', encoding="utf-8")
    output, summary, _ = _run_step("mode", tmp_path, {"HAS_TOKEN": "false", "HIDDEN_TESTS_REPO": ""})
    assert output.read_text(encoding="utf-8") == "lang=zh\nhidden=false\n"
    assert summary.startswith("> 这个仓库没有配置隐藏测试") and not english_runs(summary, 2)
    output, summary, _ = _run_step("fallback", tmp_path,
                                   {"MAX_SCORE": "36", "GRADE_OUTCOME": "failure", "COURSE_LANG": "zh"})
    values = reporter.read_github_output(output)
    payload = reporter.read_results("grade", {"GRADE_RESULTS": values[0]})[0][1]
    assert reporter.contract_problems(payload, values[0]) == []
    assert payload["tests"][0]["name"] == "评分器没有运行完" and "failure" in payload["tests"][0]["message"]
    assert summary.startswith("## 自动评分：0 / 36") and english_runs(summary, 2) == []


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
