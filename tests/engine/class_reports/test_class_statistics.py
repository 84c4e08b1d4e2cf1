"""The class report's statistics are over the students who submitted work, with
one status vocabulary everywhere, and it says what the class got wrong (no
grading: tests/support/class_folders.py writes a graded class's files).

A student who never started (the template's stubs), a student whose grading
crashed, a plain notes/ folder and a repository without commits are each
listed once with their reason and left out of the histogram, the mean, the
module means, the pass rates and the charts' student count."""
import csv
import json
import re

import pytest

from support import class_folders
from autograder.batch import plan
from autograder.class_reports import class_report, diagnoses, vocabulary
from autograder.judging.results import CLASS_STATUSES, NO_WORK


@pytest.fixture
def graded(tmp_path):
    manifest = class_folders.build(tmp_path, report_lang="en")
    return {"out": tmp_path, "manifest": manifest, "rows": class_report.load_rows(tmp_path, manifest),
            "md": (tmp_path / "report.md").read_text(encoding="utf-8"),
            "html": (tmp_path / "report.html").read_text(encoding="utf-8")}


def _csv(out):
    with open(out / "scores.csv", newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_every_statistic_counts_only_the_students_with_work_of_their_own(graded):
    rows = graded["rows"]
    assert sorted(row.student for row in class_report.counted(rows)) == sorted(class_folders.COUNTED)
    stats = class_report.summary_stats(rows)
    assert stats["students"] == 5 and stats["mean"] == pytest.approx(85.0) and stats["zero"] == 0
    assert stats["min"] == 75 and stats["full"] == 2
    edges, counts = class_report.distribution(rows)
    assert sum(counts) == 5 and counts[0] == 0   # the zeros of the left-out folders are not in the histogram
    assert class_report.module_means(rows)["amp_update"] == pytest.approx(80.0)   # 3 x 100 % and 2 x 50 %
    rates = {key: (passed, total) for key, _, passed, total in class_report.pass_rates(rows, class_report.test_columns(rows))}
    assert rates["amp_update/test_norm"] == (3, 5)
    # the same numbers on the page and in report.md
    assert "| 5 | 85.00 | 75 |" in graded["md"] and "<td class=\"num\">85.0</td>" in graded["html"]
    assert "| `amp_update` | 40.00 | 50 | 3/5 |" in graded["md"]
    assert "| 3/5 | 60% |" in graded["md"]


@pytest.mark.slow
def test_the_header_counts_folders_students_and_who_is_left_out(graded):
    header = ("9 folder(s): 7 student(s), 5 of them in the statistics. Left out: no work since the template: 1, "
              "crashed: 1. Folders without anything of a student: empty-repo, notes.")
    assert header in graded["md"] and header in graded["html"]
    assert "Every statistic and chart counts the 5 student(s) graded with work of their own" in graded["html"]


@pytest.mark.slow
def test_each_folder_left_out_is_listed_once_with_its_reason(graded):
    section = graded["md"].split("## Not in the statistics\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| (\S+) \| ([^|]+) \| ([^|]+) \|$", section, re.MULTILINE)[2:]
    assert {name: status.strip() for name, status, _ in listed} == class_folders.LEFT_OUT
    reasons = {name: reason.strip() for name, _, reason in listed}
    assert reasons["notes"].startswith("no submission found: notes/") and reasons["孙七"] == class_folders.TIMEOUT_REASON
    assert reasons["空白"] == "the modules are the template's stubs"
    students = graded["md"].split("## Students\n", 1)[1].split("\n## ", 1)[0]
    assert not any(f"| {name} |" in students for name in class_folders.FOLDERS_ONLY)
    assert "| 空白 | no work since the template | 0 / 100 |" in students
    page = graded["html"]
    table = page.split('id="students-table"', 1)[1].split("</table>", 1)[0]
    views = page.split('id="views"', 1)[1]
    for name in class_folders.FOLDERS_ONLY:   # not students: no row, no view, once in the list
        assert name not in table and name not in views
        assert page.split('id="left-out"', 1)[1].split("<h2", 1)[0].count(f">{name}<") == 1


@pytest.mark.slow
def test_one_status_vocabulary_in_run_json_scores_csv_and_both_reports(graded):
    entries = graded["manifest"]["students"]
    rows = _csv(graded["out"])
    assert entries["空白"]["status"] == rows["空白"]["status"] == NO_WORK
    for student, entry in entries.items():
        assert rows[student]["status"] == entry["status"] in CLASS_STATUSES, student
    students = graded["md"].split("## Students\n", 1)[1]
    for student, entry in entries.items():
        if student not in class_folders.FOLDERS_ONLY:
            assert f"| {student} | {entry['status']} |" in students, student
    for status in set(entry["status"] for entry in entries.values()):
        assert vocabulary.STATUS_WORDS[status].render("zh") != status   # each one translated for a Chinese page


@pytest.mark.slow
def test_every_row_of_scores_csv_has_the_assignments_full_marks(graded):
    rows = _csv(graded["out"])
    assert {row["max_score"] for row in rows.values()} == {"100"}
    assert rows["notes"]["total"] == rows["empty-repo"]["total"] == "0"


@pytest.mark.slow
def test_a_plain_folder_in_a_deadline_run_says_no_deadline_could_be_checked(graded):
    said = "not a git repository: graded as it is; no deadline could be checked"
    assert graded["manifest"]["students"]["纯文件夹"]["reason"] == said
    assert _csv(graded["out"])["纯文件夹"]["reason"] == said
    assert "| 纯文件夹 | ok | not a git repository: graded as it is, no deadline could be checked |" in graded["md"]
    assert "not a git repository, so no deadline could be checked" in graded["html"]


def test_settling_a_batch_is_idempotent():
    entries = {"a": {"status": "ok", "unchanged_stubs": True},
               "b": {"status": "ok", "reason": "", "submission_commit": {"source": "working tree"}},
               "c": {"status": "crashed", "reason": "x", "submission_commit": {"source": "working tree"}}}
    plan.settle_entries(entries)
    once = json.loads(json.dumps(entries))
    plan.settle_entries(entries)   # a re-grade with --only settles the kept entries again
    assert entries == once
    assert entries["a"]["status"] == NO_WORK and entries["c"]["reason"] == "x"
    assert entries["b"]["reason"].endswith("no deadline could be checked")


@pytest.mark.slow
def test_what_the_class_got_wrong_groups_students_by_their_diagnosis(graded):
    groups = diagnoses.group(graded["rows"])
    assert [(g.module, g.todo, g.test, sorted(s for _, s in g.students)) for g in groups] == [
        ("amp_update", 2, "全局范数是 13", ["张三", "李华"]), ("loss_scaler", 4, "间隔 2 后增长", ["赵六"])]
    section = graded["html"].split('id="wrong"', 1)[1].split("<h2", 1)[0]
    assert section.index("2 student(s)") < section.index("1 student(s)")       # the largest group first
    assert "空白" not in section and "TODO 1" not in section                 # who never started is not in it
    assert class_folders.NORM_FEEDBACK.split("；")[0] in section             # the feedback they read
    anchors = dict(re.findall(r'<section class="student" id="(student-\d+)"><h3>([^<]+)</h3>', graded["html"]))
    for anchor in re.findall(r'href="#(student-\d+)"', section):
        assert anchors[anchor] in ("张三", "李华", "赵六")                     # links to their views
    md = graded["md"].split("## What the class got wrong\n", 1)[1].split("\n## ", 1)[0]
    assert "### 2 student(s) · `amp_update` · TODO 2: global_grad_norm" in md and "- Read by 2: 张三, 李华" in md


@pytest.mark.slow
def test_a_class_that_passed_everything_has_nothing_to_group(tmp_path):
    manifest = class_folders.build(tmp_path, report_lang="en")
    rows = [row for row in class_report.load_rows(tmp_path, manifest) if row.student == "王小明"]
    assert diagnoses.group(rows) == []
    assert "every counted student passed every test" in diagnoses.wrong_html(rows, "en")


def test_a_module_that_does_not_import_is_a_group_of_its_own(tmp_path):
    """A syntax error inside update_scale is diagnosed at TODO 4 with whichever test met it
    first; it is no mistake in the growth rule: its own group, saying why the module failed."""
    growth = {"todo": 4, "test": "loss_scaler: 间隔 2 后增长", "message": class_folders.GROWTH_FEEDBACK}
    broken = dict(growth, message="exercises/loss_scaler.py 无法导入：`SyntaxError: expected ':'`（第 92 行）",
                  problem="import")
    for student, diagnosis in (("甲", growth), ("乙", broken), ("丙", broken)):
        class_folders.write_student(tmp_path, student, class_folders.tests(growth=False), {"loss_scaler": diagnosis})
    rows = class_report.load_rows(tmp_path, {"students": {s: {"status": "ok"} for s in ("甲", "乙", "丙")}})
    groups = diagnoses.group(rows)
    assert [(g.module, g.todo, g.test, g.problem, len(g.students)) for g in groups] == [
        ("loss_scaler", 4, "", "import", 2), ("loss_scaler", 4, "间隔 2 后增长", "", 1)]
    assert "The whole module failed: the file does not import, so every test of it fails." in \
        diagnoses.wrong_html(rows, "en")
    assert "整个模块都失败了：文件无法导入，因此它的每个测试都失败。" in "\n".join(diagnoses.wrong_markdown(rows, "zh"))
    from autograder.class_reports.html_student import student_view

    view = student_view(1, rows[1], rows, [], "zh")   # 乙's own view says it too, not "shown by" a growth test
    assert "先修正 <b>TODO 4</b> &mdash; 文件无法导入" in view and "由 <i>间隔 2 后增长</i> 显示" not in view
