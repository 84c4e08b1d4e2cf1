"""Progress before the deadline (issue 48): ``grade-many --history [daily]`` grades each student's
commits up to the deadline (or now), writes history.csv, and grades a commit only once per
grader and seed (a module file graded before, by anyone, is not graded again).

Classes of real git repositories; the grading processes are a stand-in that records what it
was asked to grade (tests/support/semester_class.py)."""
import csv
import json
import shutil

import pytest

from autograder.batch import class_run
from support import semester_class
from support.cli import main_in_process

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DEADLINE = "2026-12-15T23:59+08:00"
ANA = [("2026-12-10T20:00:00+08:00", 10), ("2026-12-11T09:00:00+08:00", 50), ("2026-12-11T21:00:00+08:00", 60),
       ("2026-12-14T20:00:00+08:00", 93), ("2026-12-16T08:00:00+08:00", 100)]   # the last after the deadline
BEN = [("2026-12-10T20:00:00+08:00", 10), ("2026-12-13T20:00:00+08:00", 80)]   # his first is ana's first


def _history(out, student):
    with open(out / student / "history.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def semester(tmp_path, monkeypatch):
    seen = []
    semester_class.stand_in_grading(monkeypatch, seen=seen)
    root = tmp_path / "root"
    shas = {"ana": semester_class.student(root, "ana", ANA), "ben": semester_class.student(root, "ben", BEN)}
    return root, tmp_path / "out", seen, shas


def _grade(root, out, *options):
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--no-similarity", "--jobs", 1,
                           "--seed", 5, "--deadline", DEADLINE, *options) == 0


def test_history_csv_has_every_commit_up_to_the_deadline(semester):
    root, out, seen, shas = semester
    _grade(root, out, "--history")
    rows = _history(out, "ana")
    assert list(rows[0]) == ["sha", "committed_at", "score", "max_score", "toy_sum"]
    assert [(row["sha"], row["committed_at"], row["score"], row["max_score"], row["toy_sum"]) for row in rows] == [
        (shas["ana"][0], "2026-12-10T20:00:00+08:00", "10", "100", "10"),
        (shas["ana"][1], "2026-12-11T09:00:00+08:00", "50", "100", "50"),
        (shas["ana"][2], "2026-12-11T21:00:00+08:00", "60", "100", "60"),
        (shas["ana"][3], "2026-12-14T20:00:00+08:00", "93", "100", "93")]
    assert [row["score"] for row in _history(out, "ben")] == ["10", "80"]
    history = [path for path in seen if "/history/" in path]
    assert len(history) == 5          # ben's first commit holds the same file as ana's: graded once
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))["history"]
    assert (run["mode"], run["commits"], run["graded_jobs"]) == ("every", 6, 5)


@pytest.mark.slow
def test_a_commit_graded_before_is_not_graded_again(semester, monkeypatch):
    root, out, seen, shas = semester
    _grade(root, out, "--history")
    seen.clear()
    _grade(root, out, "--history")
    assert [path for path in seen if "/history/" in path] == []     # same grader, same seed: all kept
    semester_class.student(root, "ben", [("2026-12-15T20:00:00+08:00", 85)], existing=True)
    _grade(root, out, "--history")
    assert len([path for path in seen if "/history/" in path]) == 1   # only ben's new commit
    assert [row["score"] for row in _history(out, "ben")] == ["10", "80", "85"]
    seen.clear()
    monkeypatch.setattr(class_run, "grader_identity", lambda: {"commit": None, "suites": "x" * 64, "engine": "y"})
    _grade(root, out, "--history")
    assert len([path for path in seen if "/history/" in path]) == 6   # another grader: graded again


def test_daily_grades_the_last_commit_of_each_day(semester):
    root, out, seen, shas = semester
    _grade(root, out, "--history", "daily")
    assert [row["sha"] for row in _history(out, "ana")] == [shas["ana"][0], shas["ana"][2], shas["ana"][3]]
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["history"]["mode"] == "daily"


@pytest.mark.slow
def test_the_history_reaches_the_deadline_of_each_student_else_now(semester, tmp_path):
    root, out, seen, shas = semester
    extensions = tmp_path / "extensions.csv"
    extensions.write_text("student,deadline\nana,2026-12-16T12:00+08:00\n", encoding="utf-8")
    _grade(root, out, "--history", "--extensions", extensions)
    assert len(_history(out, "ana")) == 5            # her extension takes in the commit of the 16th
    semester_class.student(root, "zed", [("2026-01-05T10:00:00+08:00", 20), ("2099-01-05T10:00:00+08:00", 100)])
    assert main_in_process("grade-many", root, "-o", tmp_path / "now", "--no-progress", "--no-similarity",
                           "--only", "zed", "--history") == 0
    assert [row["score"] for row in _history(tmp_path / "now", "zed")] == ["20"]   # nothing from the future


@pytest.mark.slow
def test_shards_each_grade_their_histories_and_merge_into_one_report(semester, tmp_path):
    root, out, seen, shas = semester
    for k in (1, 2):
        _grade(root, tmp_path / f"shard-{k}", "--history", "--shard", f"{k}/2")
    assert main_in_process("merge-scores", tmp_path / "shard-1", tmp_path / "shard-2", "-o", out) == 0
    assert [row["score"] for row in _history(out, "ana")] == ["10", "50", "60", "93"]
    assert [row["score"] for row in _history(out, "ben")] == ["10", "80"]
    assert "Progress before the deadline" in (out / "report.md").read_text(encoding="utf-8")
