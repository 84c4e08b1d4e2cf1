"""Grades an LMS imports (issue 48): GitHub Classroom's roster export maps folders to students
in every output, gradebook.csv is Canvas's import layout with the counted score, a student
on the roster without a repository appears with no score and the reason, a folder on no
roster row is graded and listed as not on the roster, and a bad roster stops the run first.

Classes of real git repositories, the grading processes a stand-in (tests/support/semester_class.py)."""
import csv
import json
import shutil

import pytest

from support import semester_class
from support.cli import main_in_process

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DEADLINE = "2026-12-15T23:59+08:00"
BEFORE = "2026-12-14T20:00:00+08:00"
LATE = "2026-12-16T20:00:00+08:00"
ROSTER = ("identifier,github_username,github_id,name\n"
          "s001@uni.example,ana-w,101,王安娜\n"
          "s002@uni.example,li,102,李\n"
          "s003@uni.example,wang-li,103,王立\n"
          "s004@uni.example,,,赵没来\n")


def _csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.fixture(scope="module")
def rostered(tmp_path_factory):
    yield from semester_class.graded_once(tmp_path_factory, "roster", _graded)


def _graded(tmp_path, monkeypatch):
    root = tmp_path / "root"
    semester_class.student(root, "amp-ana-w", [(BEFORE, 60), (LATE, 100)])     # 1 day late: 90 counts
    semester_class.student(root, "amp-li", [(BEFORE, 70)])
    semester_class.student(root, "amp-wang-li", [(BEFORE, 80)])                # "li" is a suffix: the longest wins
    semester_class.student(root, "amp-stranger", [(BEFORE, 50)])
    roster = tmp_path / "classroom_roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    out = tmp_path / "out"
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--no-similarity", "--jobs", 1,
                           "--deadline", DEADLINE, "--late-policy", "penalty_per_day=0.1,max_days=2",
                           "--roster", roster, "--report-lang", "zh") == 0
    return root, out, roster


def test_gradebook_csv_is_canvas_layout_with_the_counted_score(rostered):
    _, out, _ = rostered
    rows = _csv(out / "gradebook.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "玩具求和"]   # the toy's title, zh
    assert rows[1:] == [["王安娜", "", "", "s001@uni.example", "", "90"], ["李", "", "", "s002@uni.example", "", "70"],
                        ["王立", "", "", "s003@uni.example", "", "80"], ["赵没来", "", "", "s004@uni.example", "", ""]]


def test_every_output_names_the_roster_student(rostered):
    _, out, _ = rostered
    scores = {row["identifier"] or row["student"]: row for row in csv.DictReader(open(out / "scores.csv",
                                                                                       encoding="utf-8"))}
    assert scores["s003@uni.example"]["student"] == "amp-wang-li" and scores["s003@uni.example"]["name"] == "王立"
    absent = scores["s004@uni.example"]
    assert (absent["student"], absent["status"], absent["total"], absent["on_roster"]) == \
        ("", "no repository", "", "yes")
    assert "no repository in ROOT" in absent["reason"]
    assert scores["amp-stranger"]["on_roster"] == "no" and scores["amp-stranger"]["total"] == "50"
    extra = json.loads((out / "amp-li" / "results.json").read_text(encoding="utf-8"))["extra_data"]
    assert extra["roster"] == {"identifier": "s002@uni.example", "github_username": "li", "name": "李"}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| amp-wang-li (王立) |" in report and "不在名单上（照常评分）：amp-stranger" in report
    assert "| s004\\[@\\]uni.example | 没有仓库 | 在名单上，但 ROOT 中没有其仓库" in report   # with its reason
    assert "共 4 个文件夹，另有名单上 1 名学生没有文件夹：5 名学生" in report   # the absent one is a student
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "amp-ana-w &middot; 王安娜" in page and "（不在名单上）" in page


@pytest.mark.parametrize("text, problem", [
    ("identifier,github_username,name\na,b,c\n", "line 1: the header must name identifier,github_username,github_id,"
                                                  "name (GitHub Classroom's roster export); missing: github_id"),
    (ROSTER + "s001@uni.example,zed,9,Zed\n", "line 6: the identifier 's001@uni.example' is on line 2 already"),
    (ROSTER + "s009@uni.example,LI,9,Li again\n", "line 6: the GitHub username 'LI' is on line 3 already"),
    (ROSTER + "s010@uni.example,zed\n", "line 6: expected 4 cells like the header, found 2"),
    (ROSTER + ",zed,9,Zed\n", "line 6: the identifier is empty"),
])
def test_a_bad_roster_stops_the_run_before_grading(tmp_path, monkeypatch, capsys, text, problem):
    semester_class.stand_in_grading(monkeypatch)
    root = tmp_path / "root"
    semester_class.student(root, "amp-li", [(BEFORE, 70)])
    roster = tmp_path / "roster.csv"
    roster.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert main_in_process("grade-many", root, "-o", out, "--no-progress", "--roster", roster) == 2
    assert f"{roster}, {problem}" in capsys.readouterr().err and not (out / "run.json").exists()
