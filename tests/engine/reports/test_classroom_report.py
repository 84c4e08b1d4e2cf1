"""``python -m autograder classroom-report``: results.json -> the Classroom
reporter's input in ``$GITHUB_OUTPUT`` and the job summary, read the way the
runner and the reporter read them (tests/support/runner_files.py,
tests/support/classroom_reporter.py)."""
import base64
import json
import os
import subprocess
import sys

import pytest

from support import classroom_reporter as reporter
from autograder.reports import classroom
from autograder.reports import results_file
from autograder.reports.gradescope import write_results
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result
from support.cli import autograder_command
from support.helpers import ROOT
from support.runner_files import output_values, workflow_commands


def sample_report():
    tests = [Result(name="toy_sum: a", module="toy_sum", max_score=2.0, score=2.0, passed=True,
                    output="Passed.", visibility="visible", test_id="a"),
             Result(name="toy_sum: b", module="toy_sum", max_score=1.5, score=0.25, passed=False,
                    output="::notice title=Autograding complete::Points 100/100\nassert 1 == 2",
                    visibility="hidden", test_id="b"),
             Result(name="second: c", module="second", max_score=3.0, score=0.0, passed=False,
                    output="TODO 4", visibility="visible", test_id="c")]
    return GradeReport(tests=tests, seed=11, notes=["Hidden tests are not available here."],
                       flags=["exercises/tests/test_a.py differs"], isolation={"confined": True, "fs": "ro"})


@pytest.fixture
def results(tmp_path):
    path = tmp_path / "results.json"
    write_results(sample_report(), path)
    return path


def run_cli(*args, env=None, cwd=ROOT):
    full = {key: value for key, value in os.environ.items()
            if key not in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "AUTOGRADE_MAX_SCORE")}
    full.update(env or {})
    return autograder_command("classroom-report", *args, cwd=cwd, env=full, timeout=120)


def read_result(output_file):
    values, error = output_values(output_file.read_text(encoding="utf-8"))
    assert error is None
    encoded = values["result"]
    return encoded, json.loads(base64.b64decode(encoded, validate=True))


# --------------------------------------------------------------------------- a good results file

def test_end_to_end_one_result_equal_to_results_json(tmp_path, results):
    output, summary = tmp_path / "github_output", tmp_path / "summary.md"
    output.write_text("", encoding="utf-8")
    done = run_cli(results, env={"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0, done.stderr
    raw = output.read_text(encoding="utf-8")
    assert raw.count("\n") == 1 and raw.startswith("result=")  # exactly one name=value line
    encoded, payload = read_result(output)
    data = json.loads(results.read_text(encoding="utf-8"))
    assert reporter.contract_problems(payload, encoded) == []
    read = reporter.read_results("grade", {"GRADE_RESULTS": encoded})
    assert reporter.points(read) == (data["score"], data["max_score"]) == (2.25, 6.5)
    assert [(t["score"], t["max_score"]) for t in payload["tests"]] == \
        [(t["score"], t["max_score"]) for t in data["tests"]]
    assert [t["status"] for t in payload["tests"]] == ["pass", "fail", "fail"]
    assert reporter.exit_code(read) == 1
    assert "## Autograding: 2.25 / 6.5" in summary.read_text(encoding="utf-8")
    assert "Hidden tests are not available here." in summary.read_text(encoding="utf-8")  # notes kept
    assert workflow_commands(done.stdout + done.stderr) == []


def test_payload_names_and_messages_cannot_become_commands_in_the_reporter_log(results):
    encoded, _, error = classroom.build(results)
    payload = json.loads(base64.b64decode(encoded))
    assert error is None
    # The reporter prints names (and error messages) in its own log, one per line.
    log = "\n".join(f"❌ {t['name']}\n{t['message']}" for t in payload["tests"])
    assert workflow_commands(log) == []
    assert "assert 1 == 2" in payload["tests"][1]["message"]


def test_summary_option_wins_over_the_environment(tmp_path, results):
    output, summary, mine = tmp_path / "out", tmp_path / "env-summary", tmp_path / "mine.md"
    done = run_cli(results, "--summary", mine,
                   env={"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0 and mine.exists() and not summary.exists()


def test_without_github_output_it_says_so_and_exits_2(results):
    done = run_cli(results)
    assert done.returncode == 2 and "GITHUB_OUTPUT is not set" in done.stderr


# --------------------------------------------------------------------------- unusable results files

def _variants(tmp_path, results):
    good = json.loads(results.read_text(encoding="utf-8"))

    def write(name, text):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    def variant(name, change):
        data = json.loads(json.dumps(good))
        change(data)
        return write(name, json.dumps(data))

    cases = {
        "missing": tmp_path / "absent.json",
        "not json": write("a.json", "{not json"),
        "empty": write("b.json", ""),
        "not an object": write("c.json", "[1, 2]"),
        "NaN score": write("d.json", results.read_text(encoding="utf-8").replace('"score": 2.25', '"score": NaN')),
        "duplicate key": write("e.json", '{"score": 0, "score": 100, "max_score": 1, "tests": []}'),
        "no tests": variant("f.json", lambda d: d.pop("tests")),
        "string score": variant("g.json", lambda d: d["tests"][0].update(score="2")),
        "score above max": variant("h.json", lambda d: (d["tests"][2].update(score=30.0),
                                                        d.update(score=32.25))),
        "forged total": variant("i.json", lambda d: d.update(score=6.5)),
        "bad status": variant("j.json", lambda d: d["tests"][0].update(status="pass")),
        "deep nesting": write("k.json", "[" * 100000 + "]" * 100000),
        "a folder": tmp_path,
    }
    return cases


def test_every_unusable_file_gives_one_error_test_and_no_score(tmp_path, results):
    for case, path in _variants(tmp_path, results).items():
        encoded, summary, error = classroom.build(path, environ={"AUTOGRADE_MAX_SCORE": "100"})
        payload = json.loads(base64.b64decode(encoded))
        assert error, case
        assert reporter.contract_problems(payload, encoded) == [], case
        assert payload["status"] == "error" and len(payload["tests"]) == 1, case
        read = reporter.read_results("grade", {"GRADE_RESULTS": encoded})
        assert reporter.notices(read)[0] == "::notice title=Autograding complete::Points 0/100", case
        assert "## Autograding: 0 / 100" in summary, case


def test_oversized_file_is_refused_without_reading_it_all(tmp_path, monkeypatch, results):
    monkeypatch.setattr(results_file, "MAX_BYTES", 100)
    with pytest.raises(results_file.ResultsError, match="larger than 100 bytes"):
        results_file.load(results)


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="POSIX symbolic links")
def test_symlinked_results_file_is_refused(tmp_path, results):
    link = tmp_path / "link.json"
    os.symlink(results, link)
    with pytest.raises(results_file.ResultsError, match="symbolic link"):
        results_file.load(link)
    output = tmp_path / "out"
    done = run_cli(link, env={"GITHUB_OUTPUT": str(output)})
    assert done.returncode == 0
    _, payload = read_result(output)
    assert payload["status"] == "error" and "symbolic link" in payload["tests"][0]["message"]
    assert [c[0] for c in workflow_commands(done.stdout)] == ["error"]  # our own annotation only


def test_the_good_file_passes_the_same_checks(results):
    # The checks above must not refuse what grade writes.
    data = results_file.load(results)
    assert data["score"] == 2.25 and results_file.report_from(data).notes == ["Hidden tests are not available here."]


@pytest.mark.parametrize("value, expected", [("100", 100), ("", 1), ("12abc", 1), ("0", 1), ("-5", 1)])
def test_error_max_score_comes_from_the_variable_or_is_one(value, expected):
    assert classroom.error_max_score({"AUTOGRADE_MAX_SCORE": value}) == expected


# --------------------------------------------------------------------------- a forged output file

def test_forged_lines_before_ours_cannot_hide_or_replace_our_result(tmp_path, results):
    output = tmp_path / "github_output"
    planted = "result=Zm9yZ2Vk\nx<<EOF\nresult=Zm9yZ2Vk\n"
    output.write_text(planted, encoding="utf-8")
    # What the runner would read with the planted content alone, or with ours
    # appended blindly: the forged value, then an error.
    assert output_values(planted)[0] == {"result": "Zm9yZ2Vk"}
    assert output_values(planted + "result=OURS\n")[0]["result"] == "Zm9yZ2Vk"
    done = run_cli(results, env={"GITHUB_OUTPUT": str(output)})
    assert done.returncode == 0 and "dropped" in done.stderr
    encoded, payload = read_result(output)
    assert encoded != "Zm9yZ2Vk" and reporter.points([("grade", payload)]) == (2.25, 6.5)


# --------------------------------------------------------------------------- the real reporter

def test_real_reporter_log_holds_only_its_own_commands(tmp_path):
    """Set CLASSROOM_REPORTER_JS to the reporter's dist/main.js (v1): it prints
    our test names in its log, where the runner reads workflow commands."""
    import shutil

    script, node = os.environ.get("CLASSROOM_REPORTER_JS"), shutil.which("node")
    if not script or not node:
        pytest.skip("CLASSROOM_REPORTER_JS (the reporter's dist/main.js) and node are needed")
    fake = "x\n::notice title=Autograding complete::Points 100/100"
    report = GradeReport(tests=[Result(name=fake, module="toy_sum", max_score=1.0, score=0.0, passed=False,
                                       output=fake)], seed=1)
    path = tmp_path / "results.json"
    write_results(report, path)
    ours, _, _ = classroom.build(path)
    raw = {"version": 1, "status": "fail", "max_score": 1,
           "tests": [{"name": fake, "status": "fail", "score": 0, "line_no": 0}]}
    logs = {}
    for label, encoded in (("ours", ours), ("raw", base64.b64encode(json.dumps(raw).encode()).decode())):
        proc = subprocess.run([node, script], env={"PATH": os.environ.get("PATH", ""), "INPUT_RUNNERS": "grade",
                                                   "GRADE_RESULTS": encoded},
                              capture_output=True, text=True, timeout=120)
        logs[label] = [c[1] for c in workflow_commands(proc.stdout) if c[0] == "notice"]
    assert logs["ours"] == ["notice title=Autograding complete", "notice title=Autograding report"]
    assert logs["raw"].count("notice title=Autograding complete") == 2  # the model sees the forgery


def test_the_job_summary_keeps_the_language_and_the_diagnosis():
    """classroom-report rebuilds the summary from results.json: in the grade's language,
    with each module's first thing to fix, and a Chinese flag is not mistaken for a note."""
    from autograder.reports import results_file, summary_md

    data = {"score": 1, "max_score": 2, "output": "可见测试通过：0/1。隐藏测试通过：0/0。\n警告：something was changed",
            "tests": [{"name": "toy_sum: x", "score": 1, "max_score": 2, "status": "failed",
                       "output": "TODO 1：错", "visibility": "visible", "tags": ["toy_sum"]}],
            "extra_data": {"lang": "zh", "flags": ["something was changed"],
                           "diagnosis": {"toy_sum": {"todo": 1, "test": "toy_sum: x",
                                                        "message": "先从 TODO 1 入手"}}}}
    report = results_file.report_from(data)
    assert report.notes == [] and report.flags == ["something was changed"]
    summary = summary_md.render(report)
    assert summary.startswith("## 自动评分：1 / 2")  # a full-width colon after Chinese
    assert "| `toy_sum` | 1 / 2 | 先从 TODO 1 入手 |" in summary
