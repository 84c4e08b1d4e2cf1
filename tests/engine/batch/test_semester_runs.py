"""Runs that keep their word (issue 48): a re-grade with ``--only`` never changes the class's
recorded deadline or anyone else's result, and every run and results file says which
grader graded it and with which seed.

Classes of real git repositories (tests/support/semester_class.py); the grading processes
are a stand-in, everything else is ``grade-many``'s own."""
import csv
import json
import shutil

import pytest

from support import semester_class
from support.cli import main_in_process

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DEADLINE = "2026-12-15T23:59+08:00"
LATER = "2026-12-18T23:59+08:00"
BEFORE = "2026-12-14T20:00:00+08:00"
BETWEEN = "2026-12-16T10:00:00+08:00"   # after the class's deadline, before the extended one


def _rows(out):
    with open(out / "scores.csv", newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def _run(out):
    return json.loads((out / "run.json").read_text(encoding="utf-8"))


def _results(out, student):
    return json.loads((out / student / "results.json").read_text(encoding="utf-8"))


def _grade(root, out, *options):
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--no-similarity", "--jobs", 1,
                           *options) == 0


@pytest.fixture
def semester(tmp_path, monkeypatch):
    semester_class.stand_in_grading(monkeypatch)
    root = tmp_path / "root"
    semester_class.student(root, "ana", [(BEFORE, 93), (BETWEEN, 100)])
    semester_class.student(root, "ben", [(BEFORE, 80), (BETWEEN, 90)])
    return root, tmp_path / "out"


def test_an_extension_given_with_only_keeps_the_class_deadline(semester):
    """The bug: ``--only ben --deadline LATER`` rewrote run.json's deadline, and a later plain
    ``--only ana`` graded ana at LATER: 100 instead of 93, without a word."""
    root, out = semester
    _grade(root, out, "--deadline", DEADLINE, "--seed", 7)
    assert _rows(out)["ana"]["total"] == "93"
    _grade(root, out, "--only", "ben", "--deadline", LATER)
    run = _run(out)
    assert run["deadline"]["deadline"] == "2026-12-15T23:59:00+08:00"
    assert run["extensions"]["ben"]["deadline"] == "2026-12-18T23:59:00+08:00"
    ben = _results(out, "ben")["extra_data"]["submission_commit"]
    assert ben["deadline"] == "2026-12-18T23:59:00+08:00" and ben["extension"] is True
    assert ben["class_deadline"] == "2026-12-15T23:59:00+08:00"
    assert _rows(out)["ben"]["total"] == "90" and _rows(out)["ana"]["total"] == "93"
    before = (out / "ana" / "results.json").read_bytes()
    _grade(root, out, "--only", "ana")
    assert _rows(out)["ana"]["total"] == "93"          # the class's deadline, not ben's
    assert _run(out)["deadline"]["deadline"] == "2026-12-15T23:59:00+08:00"
    assert _rows(out)["ben"]["total"] == "90"          # ben's extension is kept for him
    assert json.loads(before)["score"] == _results(out, "ana")["score"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Deadline `2026-12-15T23:59:00+08:00`" in report and "Deadline `2026-12-18" not in report


def test_an_only_regrade_leaves_everyone_else_as_it_was(semester):
    root, out = semester
    _grade(root, out, "--deadline", DEADLINE, "--seed", 7)
    kept = (out / "ana" / "results.json").read_bytes()
    _grade(root, out, "--only", "ben")
    assert (out / "ana" / "results.json").read_bytes() == kept
    assert _run(out)["seed"] == 7 and _results(out, "ben")["extra_data"]["seed"] == 7


def test_every_output_names_the_grader_and_the_seed(semester):
    root, out = semester
    _grade(root, out, "--deadline", DEADLINE, "--seed", 7)
    grader = _run(out)["grader"]
    assert set(grader) >= {"commit", "suites", "engine"} and len(grader["suites"]) == 64
    for student in ("ana", "ben"):
        extra = _results(out, student)["extra_data"]
        assert extra["grader"] == grader and extra["seed"] == 7


def test_a_diagnosis_on_a_stub_still_raising_says_not_written_yet(toy_grade):
    """What the class report keeps apart from the mistakes: a grade of the real (toy) grader
    whose first thing to fix is a TODO not written yet is marked so; a written, wrong one is not."""
    from autograder.batch.jobs import mark_unwritten
    from support import toy

    half = toy_grade(toy.HALF_DONE)
    mark_unwritten(half)
    assert half.diagnosis[toy.MODULE]["unwritten"] is True
    wrong = toy_grade(toy.HALF_DONE.replace("return a + b", "return a - b"))
    mark_unwritten(wrong)
    assert wrong.diagnosis[toy.MODULE]["todo"] == 1 and "unwritten" not in wrong.diagnosis[toy.MODULE]
