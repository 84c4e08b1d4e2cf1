"""What a grader change did (issue 48): ``--compare OLD_DIR`` grades with the old run's seed,
writes changes.csv (student, old_total, new_total, delta, tests_changed) and says in both
pages how many students changed, by how much and which tests flipped for how many.

Classes of real git repositories; the grading processes are a stand-in whose "grader" changes
between the two runs (tests/support/semester_class.py)."""
import csv
import json
import shutil

import pytest

from autograder.batch import class_run
from support import semester_class
from support.cli import main_in_process

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BEFORE = "2026-12-14T20:00:00+08:00"
OLD = {"commit": "a" * 40, "suites": "1" * 64, "engine": "2" * 64}
NEW = {"commit": "b" * 40, "suites": "3" * 64, "engine": "2" * 64}


def _fixed_hidden_test(points):
    """The changed grader: 93 was a correct solution a wrong test failed; 100 had a mistake it missed."""
    return {93: 100, 100: 90}.get(points, points)


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    yield from semester_class.graded_once(tmp_path_factory, "compare", _compared)


def _compared(tmp_path, monkeypatch):
    root = tmp_path / "root"
    for name, points in (("ana", 93), ("ben", 80), ("cy", 100), ("dee", 93)):
        semester_class.student(root, name, [(BEFORE, points)])
    semester_class.stand_in_grading(monkeypatch)
    monkeypatch.setattr(class_run, "grader_identity", lambda: dict(OLD))
    old = tmp_path / "old"
    assert main_in_process("grade-many", root, "-o", old, "--no-progress", "--no-similarity", "--seed", 41) == 0
    semester_class.stand_in_grading(monkeypatch, rescore=_fixed_hidden_test)
    monkeypatch.setattr(class_run, "grader_identity", lambda: dict(NEW))
    new = tmp_path / "new"
    assert main_in_process("grade-many", root, "-o", new, "--no-progress", "--no-similarity", "--compare", old,
                           "--report-lang", "zh") == 0
    return root, old, new


def test_changes_csv_says_who_changed_by_how_much_and_which_tests_flipped(compared):
    _, old, new = compared
    with open(new / "changes.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["student", "old_total", "new_total", "delta", "tests_changed"]
    assert [(r["student"], r["old_total"], r["new_total"], r["delta"], r["tests_changed"]) for r in rows] == [
        ("ana", "93", "100", "7", "the sum"), ("ben", "80", "80", "0", ""), ("cy", "100", "90", "-10", "the sum"),
        ("dee", "93", "100", "7", "the sum")]
    run = json.loads((new / "run.json").read_text(encoding="utf-8"))
    assert run["seed"] == 41 and run["compare"]["seed"] == 41 and run["compare"]["grader"] == OLD
    assert run["grader"] == NEW


def test_both_pages_say_what_the_change_did(compared):
    _, old, new = compared
    report = (new / "report.md").read_text(encoding="utf-8")
    section = report.split("## 评分程序改动的影响")[1].split("\n## ")[0]
    assert "4 名学生中有 3 名变化：2 名上升，1 名下降" in section
    assert "aaaaaaaaaaaa / 111111111111" in section and "bbbbbbbbbbbb / 333333333333" in section
    assert "| the sum | 2 | 1 |" in section        # passed now for 2, failed now for 1
    page = (new / "report.html").read_text(encoding="utf-8")
    assert 'id="changes"' in page and "changes.csv" in page


def test_a_regrade_keeps_the_comparison_and_compare_needs_a_run_folder(compared, tmp_path, monkeypatch):
    semester_class.stand_in_grading(monkeypatch, rescore=_fixed_hidden_test)
    root, old, new = compared
    assert main_in_process("grade-many", root, "-o", new, "--no-progress", "--only", "ben") == 0
    assert "cy,100,90,-10,the sum" in (new / "changes.csv").read_text(encoding="utf-8")
    assert main_in_process("grade-many", root, "-o", tmp_path / "x", "--compare", tmp_path / "nowhere") == 2
    assert main_in_process("grade-many", root, "-o", new, "--compare", new) == 2
