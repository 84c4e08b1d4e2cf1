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

from autograder.i18n import render_data

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


@pytest.mark.slow
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


def test_each_listed_student_is_graded_at_their_own_deadline(semester, tmp_path):
    root, out = semester
    extensions = tmp_path / "extensions.csv"
    extensions.write_text("student,deadline\nana,2026-12-18T23:59+08:00\n", encoding="utf-8")
    _grade(root, out, "--deadline", DEADLINE, "--extensions", extensions, "--seed", 7)
    rows = _rows(out)
    assert (rows["ana"]["total"], rows["ana"]["deadline"], rows["ana"]["extension"]) == \
        ("100", "2026-12-18T23:59:00+08:00", "yes")
    assert (rows["ben"]["total"], rows["ben"]["deadline"], rows["ben"]["extension"]) == \
        ("80", "2026-12-15T23:59:00+08:00", "")
    assert _run(out)["extensions"] == {"ana": {"deadline": "2026-12-18T23:59:00+08:00",
                                               "source": f"{extensions}:2"}}
    record = _results(out, "ana")["extra_data"]["submission_commit"]
    assert record["extension"] is True and record["class_deadline"] == "2026-12-15T23:59:00+08:00"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "1 student(s) have a deadline of their own (an extension): ana `2026-12-18T23:59:00+08:00`." in report
    assert "| 2026-12-18T23:59:00+08:00 (an extension) |" in report
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "an extension (the class's: <code>2026-12-15T23:59:00+08:00</code>)" in page
    assert "ok · extension" in page


@pytest.mark.parametrize("text, problem", [
    ("student,deadline\nana,2026-12-18T23:59+08:00\nnobody,2026-12-18T23:59+08:00\n",
     "line 3: 'nobody' names no student folder of ROOT"),
    ("student,deadline\nana,2026-12-18\n", "line 2: deadline '2026-12-18': a date alone"),
    ("student,deadline\nana,friday\n", "line 2: deadline 'friday': expected an ISO 8601 time"),
    ("student,deadline\nana,2026-12-18T23:59+08:00\n\nana,2026-12-19T23:59+08:00\n",
     "line 4: 'ana' is listed twice (first on line 2)"),
    ("name,when\nana,2026-12-18T23:59+08:00\n", "line 1: the first row must be the header student,deadline"),
    ("student,deadline\nana\n", "line 2: expected 2 cells (student,deadline), found 1"),
])
def test_a_malformed_extensions_file_stops_the_run_before_grading(semester, tmp_path, capsys, text, problem):
    root, out = semester
    extensions = tmp_path / "extensions.csv"
    extensions.write_text(text, encoding="utf-8")
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--deadline", DEADLINE,
                           "--extensions", extensions) == 2
    assert f"{extensions}, {problem}" in capsys.readouterr().err
    assert not (out / "run.json").exists() and not (out / "ana").exists()


def test_a_malformed_extensions_file_is_said_in_the_tas_language(semester, tmp_path, capsys):
    root, out = semester
    extensions = tmp_path / "extensions.csv"
    extensions.write_text("student,deadline\nnobody,2026-12-18T23:59+08:00\n", encoding="utf-8")
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--deadline", DEADLINE,
                           "--extensions", extensions, "--report-lang", "zh") == 2
    assert f"{extensions} 第 2 行：'nobody' 不是 ROOT 中任何学生的文件夹" in capsys.readouterr().err


@pytest.mark.slow
def test_a_regrade_with_another_seed_or_grader_says_so(semester, monkeypatch):
    from autograder.batch import class_run

    root, out = semester
    _grade(root, out, "--deadline", DEADLINE, "--seed", 7)
    monkeypatch.setattr(class_run, "grader_identity", lambda: {"commit": "c" * 40, "suites": "d" * 64, "engine": "e"})
    _grade(root, out, "--only", "ben", "--seed", 9)
    warnings = [render_data(warning, "en") for warning in _run(out)["warnings"]]
    assert any("ben re-graded with seed 9, not the run's 7" in warning for warning in warnings), warnings
    assert any("ben re-graded by another grader" in warning for warning in warnings), warnings
    assert _results(out, "ben")["extra_data"]["seed"] == 9 and _results(out, "ana")["extra_data"]["seed"] == 7
