"""A student whose grade holds tests the grader failed to check (docs/sandbox.md, *Whose
failure*) is flagged to the TA in every class output: report.html's flags (high, with each
type and place), report.md's flags section and scores.csv's flags column."""
import csv
import io
import json

from autograder.class_reports import class_report, csv_files, markdown
from autograder.class_reports.flags import HIGH, row_flags
from autograder.i18n import render
from autograder.judging import results
from autograder.reports.gradescope import write_results

FAULT = {"type": "TypeError", "where": "autograder/sandbox/wire.py:132", "message": "takes no keyword arguments",
         "points": 3.0}


def row_of(tmp_path, faults):
    tests = [results.TestResult(name="amp_update: a", module="amp_update", max_score=2.0, score=2.0, passed=True, output="")]
    tests += [results.TestResult(name=f"amp_update: faulted {index}", module="amp_update", max_score=0.0, score=0.0,
                         passed=False, output="", test_id=f"test_{index}", fault=dict(FAULT))
              for index in range(faults)]
    path = write_results(results.GradeReport(tests=tests, seed=1), tmp_path / f"results{faults}.json")
    return class_report.Row("王小明", {"status": "ok"}, json.loads(path.read_text(encoding="utf-8")))


def test_the_class_report_flags_a_student_the_grader_failed(tmp_path):
    row = row_of(tmp_path, 2)
    assert row.grader_faults == ["TypeError at autograder/sandbox/wire.py:132"] * 2
    flag = next(flag for flag in row_flags(row) if render(flag.what, "en") == "the grader failed")
    assert flag.severity == HIGH and flag.detail == "TypeError at autograder/sandbox/wire.py:132"
    assert "2 test(s)" in render(flag.action, "en") and "评分器" in render(flag.action, "zh")
    section = "\n".join(markdown._flags([row], "en"))
    assert "the grader failed in 2 test(s), not graded: TypeError at autograder/sandbox/wire.py:132" in section
    cells = next(csv.DictReader(io.StringIO(csv_files.render_csv([row], class_report.test_columns([row])))))
    assert "the grader failed (not graded): TypeError at autograder/sandbox/wire.py:132" in cells["flags"]


def test_a_student_the_grader_did_not_fail_has_no_such_flag(tmp_path):
    row = row_of(tmp_path, 0)
    assert row.grader_faults == []
    assert not any(render(flag.what, "en") == "the grader failed" for flag in row_flags(row))
    assert "None." in "\n".join(markdown._flags([row], "en"))
