"""Who is stuck and the class's progress per module (issue 48), from histories as
``grade-many --history`` writes them: the rules on made-up histories, then the sections of
both pages in both languages on a class of real git repositories graded by the command
(a stand-in for the grading processes: tests/support/semester_class.py)."""
import datetime
import re
import shutil

import pytest

from autograder.class_reports.over_time import history
from support import semester_class
from support.cli import main_in_process

ZONE = datetime.timezone(datetime.timedelta(hours=8))
END = datetime.datetime(2026, 12, 15, 23, 59, tzinfo=ZONE)
MODULES = ["a", "b"]


def _point(day, hour, a, b, todo=None, unwritten=False):
    diagnosis = {"todo": todo, "test": "a: the test", "message": "m", **({"unwritten": True} if unwritten else {})}
    grade_a = {"score": a, "max_score": 50, "diagnosis": diagnosis if todo else None}
    return history.Point("s", datetime.datetime(2026, 12, day, hour, tzinfo=ZONE), a + b, 100,
                         {"a": grade_a, "b": {"score": b, "max_score": 50, "diagnosis": None}})


def test_who_is_stuck_and_for_how_long_most_stuck_first():
    histories = {
        # three commits after the last rise, same mistake all along: stuck since the 10th
        "flat": [_point(10, 9, 20, 0, 3), _point(12, 9, 20, 0, 3), _point(13, 9, 10, 0, 3), _point(15, 9, 20, 0, 3)],
        # rising to the end: not stuck
        "rising": [_point(13, 9, 10, 0, 3), _point(14, 9, 20, 0, 3), _point(15, 20, 30, 10, 3)],
        # one commit four days ago: no rise for two days
        "quiet": [_point(11, 12, 40, 50, 5)],
        # full marks: never stuck
        "done": [_point(10, 9, 0, 0, 1), _point(11, 9, 50, 50)],
        # nothing written yet: not started, not stuck
        "idle": [_point(10, 9, 0, 0, 1, True), _point(14, 9, 0, 0, 1, True)],
        # two commits without a rise, one day: not yet
        "recent": [_point(15, 1, 30, 0, 2), _point(15, 9, 30, 0, 2)],
    }
    found = history.stuck(histories, END, MODULES)
    assert [item.student for item in found] == ["flat", "quiet"]
    flat, quiet = found
    assert (flat.commits, flat.score, flat.module, flat.diagnosis["todo"]) == (3, 20, "a", 3)
    assert flat.since == datetime.datetime(2026, 12, 10, 9, tzinfo=ZONE) and flat.span > quiet.span
    assert flat.diagnosis_since == flat.since and quiet.commits == 0


def test_the_class_progress_is_the_share_with_a_module_full_each_day():
    histories = {"x": [_point(13, 9, 50, 0), _point(14, 9, 50, 50)], "y": [_point(14, 22, 10, 50)],
                 "z": [_point(15, 9, 50, 50)]}
    days, shares = history.progress(histories, END, MODULES)
    assert [day.day for day in days] == [13, 14, 15]
    assert [round(share, 2) for share in shares["a"]] == [0.33, 0.33, 0.67]
    assert [round(share, 2) for share in shares["b"]] == [0.0, 0.67, 1.0]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("lang, words", [("en", ("Progress before the deadline", "Who is stuck", "3 commit(s)")),
                                         ("zh", ("截止前的进度", "谁卡住了", "3 个提交"))])
def test_both_pages_show_the_progress_and_who_is_stuck(tmp_path, monkeypatch, lang, words):
    semester_class.stand_in_grading(monkeypatch)
    root, out = tmp_path / "root", tmp_path / "out"
    semester_class.student(root, "ana", [("2026-12-10T09:00:00+08:00", 20), ("2026-12-11T09:00:00+08:00", 20),
                                         ("2026-12-12T09:00:00+08:00", 10), ("2026-12-13T09:00:00+08:00", 20)])
    semester_class.student(root, "ben", [("2026-12-12T09:00:00+08:00", 40), ("2026-12-15T09:00:00+08:00", 100)])
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--no-similarity", "--deadline",
                           "2026-12-15T23:59+08:00", "--history", "--report-lang", lang) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    stuck = page.split('id="stuck"')[1].split("</table>")[0]
    assert all(word in page for word in words[:2]) and words[2] in stuck and "ana" in stuck and "ben" not in stuck
    assert page.count("<svg") >= 3 and '<a href="#progress">' in page   # the class's chart, ana's, ben's
    view = re.search(r'<section class="student" id="student-\d+"><h3>ben</h3>(.*?)</section>', page, re.DOTALL)
    assert "<svg" in view.group(1)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert words[0] in report and "| ana | 20 / 100 |" in report
