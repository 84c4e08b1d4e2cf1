"""A late policy declared once (issue 48): the last commit of each student's late window is
graded too, and the counted score is the better of the on-time score and the late score after
its penalty; the numbers below are worked out by hand from the policy (10 % a started day,
at most 3 days). Classes of real git repositories, the grading processes a stand-in
(tests/support/semester_class.py)."""
import csv
import json
import shutil

import pytest

from autograder.batch.terms import late_policy
from autograder.batch.terms.times import TermsError, parse_deadline
from support import semester_class
from support.cli import main_in_process

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DEADLINE = "2026-12-15T23:59+08:00"
BEFORE = "2026-12-14T20:00:00+08:00"
POLICY = "penalty_per_day=0.1,max_days=3"
# student -> (history, on-time total, late total, days late, counted score)
CLASS = {
    "ana": ([(BEFORE, 93), ("2026-12-16T09:59:00+08:00", 100)], 93, 100, 1, 93),    # 90 late: on time wins
    "ben": ([(BEFORE, 60), ("2026-12-17T00:59:00+08:00", 100)], 60, 100, 2, 80),    # 25 h late: 2 days
    "cy": ([("2026-12-18T05:00:00+08:00", 100)], 0, 100, 3, 70),                    # nothing on time
    "dee": ([(BEFORE, 50), ("2026-12-18T22:59:00+08:00", 90), ("2026-12-19T23:59:01+08:00", 100)],
            50, 90, 3, 63),                                                        # the last in the window
    "eve": ([(BEFORE, 80)], 80, None, 0, 80),                                       # nothing late
}


def _rows(out):
    with open(out / "scores.csv", newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def late_class(tmp_path_factory):
    """The class graded once for the tests that only read it (the re-grade test comes last)."""
    yield from semester_class.graded_once(tmp_path_factory, "late", _graded)


def _graded(tmp_path, monkeypatch):
    root = tmp_path / "root"
    for name, (history, *_) in CLASS.items():
        semester_class.student(root, name, history)
    out = tmp_path / "out"
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--no-similarity", "--jobs", 1, "--seed", 3,
                           "--deadline", DEADLINE, "--late-policy", POLICY, "--also-latest") == 0
    return root, out


def test_the_counted_score_is_the_better_of_on_time_and_late_after_its_penalty(late_class):
    root, out = late_class
    rows = _rows(out)
    for name, (_, on_time, late, days, counted) in CLASS.items():
        row = rows[name]
        assert row["total"] == str(on_time), name                     # the total stays the on-time total
        assert row["late_total"] == ("" if late is None else str(late)), name
        assert row["late_days"] == str(days) and row["counted_score"] == str(counted), (name, row)
        assert row["penalty"] == f"{days * 0.1:g}", name
        assert row["deadline"] == "2026-12-15T23:59:00+08:00"
    assert rows["dee"]["latest_total"] == "100"                       # beyond the window: beside, never counted
    results = json.loads((out / "ben" / "results.json").read_text(encoding="utf-8"))["extra_data"]
    assert results["counted_score"] == 80 and results["late_work"]["after_penalty"] == 80
    assert results["late_work"]["policy"] == {"penalty_per_day": 0.1, "max_days": 3, "source": "--late-policy"}
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["late_policy"]["max_days"] == 3 and run["students"]["cy"]["counted_score"] == 70


def test_the_reports_show_both_scores_the_days_and_the_penalty(late_class):
    _, out = late_class
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Late policy: 10% of the late score is taken off per started day" in report
    section = report.split("## Late work")[1].split("\n## ")[0]
    assert "| ben | 60 |" in section and "| 2 | 20% | 100 | 80 | 80 |" in section
    students = report.split("## Students")[1].split("\n## ")[0]
    assert "| ben | ok | 60 / 100 | 80 |" in students
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "2 day(s) late, 20% off, 100 after the penalty 80; counted <b>80</b>" in page


def test_a_regrade_keeps_the_recorded_policy(late_class):
    root, out = late_class
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--only", "ben") == 0
    assert _rows(out)["ben"]["counted_score"] == "80" and _rows(out)["ana"]["counted_score"] == "93"


def test_without_a_policy_nothing_changes(tmp_path, monkeypatch):
    semester_class.stand_in_grading(monkeypatch)
    root = tmp_path / "root"
    semester_class.student(root, "ben", CLASS["ben"][0])
    out = tmp_path / "out"
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--no-similarity", "--deadline",
                           DEADLINE) == 0
    header = next(csv.reader(open(out / "scores.csv", encoding="utf-8")))
    assert not {"deadline", "counted_score", "late_days", "penalty"} & set(header)
    assert not (out / "ben" / "late").exists() and "## Late work" not in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("option, named", [
    ("penalty_per_day=0.1,max_days=3,grace=1", "unknown key 'grace'"),
    ("penalty_per_day=-0.1,max_days=3", "'penalty_per_day' must not be negative"),
    ("penalty_per_day=ten,max_days=3", "'penalty_per_day' must be a number, not 'ten'"),
    ("penalty_per_day=0.1,max_days=2.5", "'max_days' counts whole days"),
    ("penalty_per_day=1.5,max_days=3", "'penalty_per_day' is the share of the score taken off per day, at most 1"),
    ("max_days=3", "the key 'penalty_per_day' is missing"),
])
def test_a_malformed_policy_stops_the_run_before_grading(tmp_path, monkeypatch, capsys, option, named):
    semester_class.stand_in_grading(monkeypatch)
    root = tmp_path / "root"
    semester_class.student(root, "ben", CLASS["ben"][0])
    out = tmp_path / "out"
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--deadline", DEADLINE,
                           "--late-policy", option) == 2
    assert named in capsys.readouterr().err and not (out / "run.json").exists()


def test_the_policy_is_read_from_the_course_pyproject(tmp_path):
    course = tmp_path / "pyproject.toml"
    course.write_text('[project]\nname = "x"\n\n[tool.autograder.late]\npenalty_per_day = 0.25\nmax_days = 2\n',
                      encoding="utf-8")
    policy = late_policy.from_pyproject(course)
    assert (policy.penalty_per_day, policy.max_days) == (0.25, 2) and "[tool.autograder.late]" in policy.source
    course.write_text('[tool.autograder.late]\npenalty_per_day = "a lot"\nmax_days = 2\n', encoding="utf-8")
    with pytest.raises(TermsError, match="'penalty_per_day' must be a number"):
        late_policy.from_pyproject(course)
    assert late_policy.from_pyproject(tmp_path / "missing.toml") is None


def test_days_are_whole_started_days_after_the_deadline():
    policy = late_policy.from_option(POLICY)
    due = parse_deadline(DEADLINE)
    at = {text: policy.days_late(parse_deadline(text), due) for text in (
        "2026-12-15T23:59:00+08:00", "2026-12-15T23:59:01+08:00", "2026-12-16T23:59:00+08:00",
        "2026-12-16T23:59:01+08:00", "2026-12-15T16:00:00Z")}
    assert list(at.values()) == [0, 1, 1, 2, 1]
    assert policy.penalty(3) == pytest.approx(0.3) and late_policy.from_option("none") is None
    assert late_policy.counted_score(93, 100, 0.1) == (90, 93) and late_policy.counted_score(0, 100, 1.0) == (0, 0)
