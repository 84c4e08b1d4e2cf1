"""The class's pages say the same about every student (issue 48): a late commit's time and
the latest score in every output, "0 / 100" (never "0 / 0") for a student with nothing
before the deadline, and what is not written yet apart from the mistakes (the students
table's one line a student: tests/engine/class_reports/test_class_html.py).

Classes of real git repositories graded by ``grade-many`` with a stand-in for the grading
processes (tests/support/semester_class.py)."""
import csv
import json
import re
import shutil

import pytest

from support import semester_class
from support.cli import main_in_process

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DEADLINE = "2026-12-15T23:59+08:00"
DAY1, DAY2 = "2026-12-10T20:00:00+08:00", "2026-12-14T20:00:00+08:00"
LATE = "2026-12-16T09:30:00+08:00"


def _grade(root, out, *options):
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--no-similarity", "--jobs", 1,
                           "--seed", 7, "--deadline", DEADLINE, "--also-latest", *options) == 0


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """ana: 93 at the deadline, 100 after; lee: only after the deadline (100); three who have
    not written TODO 2 yet and two with a real mistake (TODO 1)."""
    yield from semester_class.graded_once(tmp_path_factory, "pages", _graded)


def _graded(tmp_path, monkeypatch):
    root, out = tmp_path / "root", tmp_path / "out"
    semester_class.student(root, "ana", [(DAY1, 50), (DAY2, 93), (LATE, 100)])
    semester_class.student(root, "lee", [(LATE, 100)])
    for name in ("pat", "quinn", "ray"):
        semester_class.student(root, name, [(DAY2, (50, True))])
    for name in ("sam", "tia"):
        semester_class.student(root, name, [(DAY2, 40)])
    _grade(root, out)
    return out


def _page(out):
    return (out / "report.html").read_text(encoding="utf-8")


def test_a_student_with_nothing_at_the_deadline_shows_full_marks_and_the_latest_score(graded):
    view = re.search(r'<section class="student" id="student-\d+"><h3>lee</h3>(.*?)</section>', _page(graded),
                     re.DOTALL).group(1)
    assert "0 / 100" in view and "0 / 0" not in view
    assert "2026-12-16T09:30:00+08:00" in view and re.search(r"would score\s+100", view)
    assert "--also-latest" not in view     # the run used it: the score is there


def test_every_output_shows_the_same_numbers_for_each_student(graded):
    with open(graded / "scores.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    ana = rows["ana"]
    assert (ana["total"], ana["latest_total"], ana["latest_committed_at"]) == ("93", "100", "2026-12-16T09:30:00+08:00")
    report = (graded / "report.md").read_text(encoding="utf-8")
    graded_commits = report.split("## Graded commits")[1].split("\n## ")[0]
    assert re.search(r"\| ana \| ok \|.*\| 2026-12-16T09:30:00\+08:00 \| 100 \|", graded_commits)
    students = report.split("## Students")[1].split("\n## ")[0]
    assert "| ana | ok | 93 / 100 |" in students and "| lee | no commit before deadline | 0 / 100 |" in students
    page = _page(graded)
    table = page.split('id="students-table"')[1].split("</table>")[0]
    ana_row = next(row for row in table.split("<tr>") if ">ana</a>" in row)
    assert ">93<" in ana_row and ">1 → 100<" in ana_row      # the total; a later commit and its score


def test_not_written_yet_is_apart_from_the_mistakes(graded):
    section = _page(graded).split('id="wrong"')[1].split("<h2")[0]
    mistakes, unwritten = section.split('id="not-written"')
    assert "sam" in mistakes and "tia" in mistakes and "pat" not in mistakes
    assert all(name in unwritten for name in ("pat", "quinn", "ray")) and "sam" not in unwritten
    report = (graded / "report.md").read_text(encoding="utf-8")
    wrong = report.split("## What the class got wrong")[1].split("\n## ")[0]
    assert wrong.index("sam") < wrong.index("### Not written yet") < wrong.index("pat")
