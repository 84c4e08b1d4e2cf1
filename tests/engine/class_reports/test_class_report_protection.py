"""The class report's account of each grade (no grading: results files are
written here): what confined each student's code, the tamper flags, the
self-reported lab credit, which commit was graded, and the CSV columns of a
deadline run. Shards graded with different deadlines are called out."""
import csv

import pytest

from autograder.batch.jobs import add_extra_data
from autograder.batch.manifest import merge_manifests
from autograder.i18n import render_data
from autograder.class_reports import write as class_write
from autograder.reports.gradescope import write_results
from autograder.judging import results

CONFINED = {"confined": True, "fs": "Landlock ABI 6", "network": "none", "signals": "own process namespace",
            "process_namespace": True, "uid": "uid 1934567890 of its own", "problems": []}
OPEN = {"confined": False, "fs": "not confined", "network": "open", "uid": "uid 0 | root",
        "problems": ["no Landlock on this kernel"]}
SHA = "0123456789abcdef0123456789abcdef01234567"
LATEST = "fedcba9876543210fedcba9876543210fedcba98"
DEADLINE = "2026-12-15T23:59:00+08:00"


def _write(out, student, score, isolation=None, flags=(), lab=None, commit=None):
    test = results.TestResult(name="toy_sum: t", module="toy_sum", max_score=4.0, score=score, passed=score == 4.0,
                      output="", visibility="visible", test_id="test_t")
    report = results.GradeReport(tests=[test], seed=7, submission="x", flags=list(flags), isolation=isolation or {},
                         lab=lab or {})
    path = out / student / "results.json"
    write_results(report, path)
    if commit is not None:
        add_extra_data(path, {"submission_commit": commit})


def build(out):
    commit = {"sha": SHA, "committed_at": "2026-12-15T22:10:05+08:00", "later_commits": 2, "deadline": DEADLINE,
              "source": "committed", "latest": {"sha": LATEST, "committed_at": "2026-12-16T09:00:00+08:00",
                                                "score": 1, "max_score": 4, "status": "ok"},
              "notes": ["1 symbolic link(s) in the commit were not exported (links are never followed)"]}
    _write(out, "amp-ana", 4.0, CONFINED, commit=commit,
           lab={"earns_credit": True, "file": "lab.json", "hardware": {"name": "H100"}})
    _write(out, "amp-bo|b", 2.0, OPEN, flags=["sitecustomize.py shadows a module"],
           commit={"deadline": DEADLINE, "source": "working tree", "note": "not a git repository"})
    _write(out, "amp-cy", 0.0, commit={"deadline": DEADLINE, "source": "committed", "sha": None,
                                       "later_commits": 3})
    _write(out, "amp-dee", 0.0, commit={"deadline": DEADLINE, "source": "committed"})
    _write(out, "amp-eve", 3.0, {"fs": "Landlock ABI 6"})  # an older record: confinement not stated
    students = {"amp-ana": {"status": "ok"}, "amp-bo|b": {"status": "ok"},
                "amp-cy": {"status": "no commit before deadline", "reason": "no commit on the default branch"},
                "amp-dee": {"status": "crashed", "reason": "the git repository could not be read"},
                "amp-eve": {"status": "ok"}}
    manifest = {"seed": 7, "students": students, "isolation": CONFINED,
                "deadline": {"deadline": DEADLINE, "source": "committed", "also_latest": True}}
    class_write.write_all(out, manifest)
    return (out / "report.md").read_text(encoding="utf-8")


def _section(report, title):
    return report.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.mark.slow
def test_each_grade_says_how_it_was_protected(tmp_path):
    report = build(tmp_path)
    table = _section(report, "How each grade was protected")
    assert "| amp-ana | confined | uid 1934567890 of its own | 0 | yes (self-reported) | commit `0123456789ab` |" in table
    assert "| amp-bo\\|b | **NOT CONFINED** | uid 0 \\| root | 1 | – | the folder as it is: not a git repository, so no deadline could be checked |" in table
    assert "| amp-cy | – | – | 0 | – | nothing (no commit before the deadline) |" in table
    assert "| amp-dee | – | – | 0 | – | nothing (the repository could not be read) |" in table
    isolation = _section(report, "Isolation of the students' code")
    assert "This machine's probe box, before grading: `isolation: fs=Landlock ABI 6" in isolation
    assert "| amp-bo\\|b | no Landlock on this kernel |" in isolation
    assert "Confined: 1 of 5 student(s); not confined: 1; a record that does not say (check by hand): 1; " \
           "no isolation record (no code ran, or an older grader): 2." in isolation
    assert "yes (self-reported)" in _section(report, "Optional credit: `gpu_lab` (self-reported)")


@pytest.mark.slow
def test_graded_commits_section_and_csv_columns(tmp_path):
    report = build(tmp_path)
    assert "Deadline `2026-12-15T23:59:00+08:00`: each repository was graded at the last commit" in report
    commits = _section(report, "Graded commits")
    assert "| amp-ana | ok | `0123456789ab` | 2026-12-15T22:10:05+08:00 | – | 2 | `fedcba987654` " \
           "| 2026-12-16T09:00:00+08:00 | 1 |" in commits
    assert "| amp-bo\\|b | ok | not a git repository: graded as it is, no deadline could be checked |" in commits
    assert "| amp-cy | no commit before deadline | none before the deadline | – | – | 3 |" in commits
    assert "| amp-dee | crashed | – (not read) |" in commits
    assert "- amp-ana: 1 symbolic link(s) in the commit were not exported" in commits
    assert "git clone --quiet --no-local ROOT/STUDENT" in _section(report, "Re-grading")
    with open(tmp_path / "scores.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    header = list(rows["amp-ana"])
    assert header[-10:] == ["commit", "committed_at", "pushed_at", "later_commits", "latest_commit", "latest_total",
                            "latest_committed_at", "seed", "flags", "reason"]
    assert (rows["amp-ana"]["commit"], rows["amp-ana"]["later_commits"], rows["amp-ana"]["latest_total"]) == \
        (SHA, "2", "1")
    assert rows["amp-cy"]["commit"] == "" and rows["amp-cy"]["later_commits"] == "3"


@pytest.mark.slow
def test_a_run_without_deadline_has_no_commit_columns(tmp_path):
    _write(tmp_path, "amp-ana", 4.0, CONFINED)
    class_write.write_all(tmp_path, {"seed": 7, "students": {"amp-ana": {"status": "ok"}}})
    header = (tmp_path / "scores.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "commit" not in header and header.endswith("seed,flags,reason")
    assert "## Graded commits" not in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_shards_with_different_deadlines_are_called_out():
    first = {"seed": 1, "shard": "1/2", "students": {"a": {"status": "ok"}},
             "deadline": {"deadline": DEADLINE, "source": "committed"}}
    second = {"seed": 1, "shard": "2/2", "students": {"b": {"status": "ok"}},
              "deadline": {"deadline": "2026-12-16T23:59:00+08:00", "source": "committed"}}
    merged = merge_manifests([("s1", first), ("s2", second)])
    assert merged["deadline"] == first["deadline"]
    said = [render_data(warning, "en") for warning in merged["warnings"]]
    assert any("s2 was graded with another deadline" in warning for warning in said), said
    # in the class page's language (a Chinese class's TA reads it in Chinese)
    assert any(render_data(warning, "zh").startswith("s2 的截止时间与第一个输入不同") for warning in merged["warnings"])
    same = merge_manifests([("s1", first), ("s2", dict(second, deadline=first["deadline"]))])
    assert not any("deadline" in render_data(warning, "en") for warning in same["warnings"])
