"""When grade-many's judge process (B) ends without answering, the command line
(A) says what happened to each student from the files alone
(autograder/batch/clean_process.py): a grade is a grade, a zero report B wrote
keeps its status and reason, and a results.json left by an earlier run into the
same folder never reads as this run's grade."""
import json
import os
import sys

import pytest

from autograder.batch import clean_process, jobs
from autograder.judge_process import launcher
from autograder.batch.progress import Progress
from autograder.i18n import render_data
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result

SETTINGS = {"jobs": 1, "include_hidden": False, "progress": False, "guard_dir": None, "allow_unconfined": True}


def _job(tmp_path, student):
    job = jobs.ForkJob(student, tmp_path / "class" / student, "bare", tmp_path / "out" / student, 7, False, 60.0)
    job.entry = {}
    return job


def _graded(path, score=3.0):
    test = Result(name="total", module="toy_sum", max_score=3.0, score=score, passed=score == 3.0,
                      visibility="visible", output="")
    path.parent.mkdir(parents=True, exist_ok=True)
    jobs._write_report(GradeReport(tests=[test], seed=7), path)


@pytest.mark.parametrize("status", [jobs.CRASHED, jobs.TIMED_OUT])
def test_a_zero_report_is_read_back_with_its_status_and_reason(tmp_path, status):
    job = _job(tmp_path, "ada")
    job.out_dir.mkdir(parents=True)
    jobs._write_report(jobs.zero_report("ada", 7, status, "grading was interrupted"), job.results)
    assert jobs.zero_report_status(job.results) == (status, "grading was interrupted")
    assert clean_process._unanswered(job, -9) == {"status": status, "reason": "grading was interrupted"}


def test_a_grade_reads_as_graded_even_with_zero_points(tmp_path):
    job = _job(tmp_path, "ada")
    _graded(job.results, score=0.0)
    assert jobs.zero_report_status(job.results) is None
    assert clean_process._unanswered(job, 1) == {"status": jobs.OK, "reason": ""}


def test_no_results_reads_as_crashed_with_a_zero(tmp_path):
    job = _job(tmp_path, "ada")
    row = clean_process._unanswered(job, 1)
    assert row["status"] == jobs.CRASHED and "exit code 1" in row["reason"]
    assert jobs.zero_report_status(job.results) == (jobs.CRASHED, row["reason"])


def _judge_that_dies(monkeypatch, writes_zero_for=None):
    """B replaced by a process that reads its job and exits without an answer,
    after writing a zero report for ``writes_zero_for`` (as B's clean-up would)."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); job = json.loads(sys.stdin.read())\n"
            "from autograder.batch import jobs\n"
            "for data in job['jobs']:\n"
            f"    if data['student'] == {writes_zero_for!r}:\n"
            "        jobs._write_report(jobs.zero_report(data['student'], 7, jobs.CRASHED, 'grading was interrupted'),\n"
            "                           data['out_dir'] + '/results.json')\n"
            "sys.exit(3)")
    monkeypatch.setattr(launcher, "_BOOT", code)


@pytest.mark.skipif(sys.platform == "win32", reason="grade-many's judge process needs fork")
def test_a_judge_that_dies_leaves_no_earlier_grade_and_no_zero_report_read_as_ok(tmp_path, monkeypatch):
    planned = [_job(tmp_path, name) for name in ("ada", "bob", "cyd")]
    for job in planned:  # an earlier run into the same folder graded everyone
        _graded(job.results)
    _judge_that_dies(monkeypatch, writes_zero_for="bob")
    warnings = []
    clean_process.grade_planned(planned, tmp_path / "out", Progress(3, enabled=False), warnings, {}, SETTINGS)
    rows = {job.student: job.entry for job in planned}
    assert rows["bob"] == {"status": jobs.CRASHED, "reason": "grading was interrupted"}
    for student in ("ada", "cyd"):
        assert rows[student]["status"] == jobs.CRASHED
        assert "exit code 3" in rows[student]["reason"]
    for job in planned:  # every file is this run's zero, none the earlier 3 points
        results = json.loads(job.results.read_text(encoding="utf-8"))
        assert results["score"] == 0 and results["max_score"] == 0
    assert any("exit code 3" in render_data(warning, "en") for warning in warnings), warnings


@pytest.mark.skipif(sys.platform == "win32", reason="grade-many's judge process needs fork")
def test_after_a_stop_signal_a_second_one_cannot_cut_the_report_short(tmp_path, monkeypatch):
    """SIGTERM while B grades: every student gets a row, and the stop signals stay ignored when
    grade_planned hands back, for the report its caller writes next. (They came back once: a
    second SIGTERM then ended the command line before report.md was written.)"""
    import signal
    import threading

    planned = [_job(tmp_path, name) for name in ("ada", "bob")]
    monkeypatch.setattr(launcher, "_BOOT", "import time; time.sleep(60)")  # a B that grades for a long time
    saved = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGHUP)}
    stop = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    try:
        stop.start()
        with pytest.raises(clean_process.BatchInterrupted):
            clean_process.grade_planned(planned, tmp_path / "out", Progress(2, enabled=False), [], {}, SETTINGS)
        assert {number: signal.getsignal(number) for number in saved} == dict.fromkeys(saved, signal.SIG_IGN)
    finally:
        stop.cancel()
        for number, handler in saved.items():
            signal.signal(number, handler)
    assert [job.entry["status"] for job in planned] == [jobs.CRASHED] * 2
    assert all("interrupted" in job.entry["reason"] for job in planned)
