"""Issue 48's walk: a Chinese class's semester (tests/support/semester_walk.py: git repositories
made from the exported template, two weeks of commits) graded for real, as a TA would:

    grade-many ROOT -o old --deadline D --visible-only                       (an earlier grader)
    grade-many ROOT -o new --deadline D --extensions ext.csv --late-policy ... --roster roster.csv
               --history --compare old --lang zh --report-lang zh --also-latest

The extension, the late policy's counted score recomputed by hand, the gradebook, who is stuck,
the grader change, a module of the history graded alone as in the class's own grade, and the
pages in Chromium at 390 and 1,280 px in Chinese and English.
"""
import csv
import json
import shutil

import pytest

from support import semester_walk
from support.cli import autograder_command
from support.helpers import ROOT
from support.language_check import english_words, identifiers, markdown_text, page_text

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]
CODE = identifiers(*(ROOT / "exercises").glob("*.py")) | {"Adam", "Linear", "cpu'", "k"}


@pytest.fixture(scope="module")
def semester(tmp_path_factory):
    base = tmp_path_factory.mktemp("semester")
    exported = autograder_command("export-template", base / "template", timeout=300)
    assert exported.returncode == 0, exported.stderr
    root = base / "root"
    shas = semester_walk.build(root, base / "template")
    (base / "ext.csv").write_text(f"student,deadline\n{semester_walk.EXTENDED_STUDENT},{semester_walk.EXTENDED}\n",
                                  encoding="utf-8")
    (base / "roster.csv").write_text(semester_walk.ROSTER, encoding="utf-8")
    common = ("--deadline", semester_walk.DEADLINE, "--lang", "zh", "--jobs", "2", "--no-progress", "--seed", "4848")
    old = autograder_command("grade-many", root, "-o", base / "old", "--visible-only", "--no-similarity", *common,
                             timeout=1200)
    assert old.returncode == 0, old.stderr
    new = autograder_command("grade-many", root, "-o", base / "new", *common, "--extensions", base / "ext.csv",
                             "--late-policy", semester_walk.POLICY, "--roster", base / "roster.csv", "--history",
                             "--compare", base / "old", "--report-lang", "zh", "--also-latest", timeout=1200)
    assert new.returncode == 0, new.stderr
    out = base / "new"
    with open(out / "scores.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"] or row["identifier"]: row for row in csv.DictReader(handle)}
    return {"out": out, "rows": rows, "shas": shas, "base": base}


def test_the_extension_and_the_late_policy_recomputed_by_hand(semester):
    rows = semester["rows"]
    li = rows[semester_walk.EXTENDED_STUDENT]
    assert (li["deadline"], li["extension"], li["total"]) == ("2026-12-18T23:59:00+08:00", "yes", "100")
    wang = rows[semester_walk.LATE]
    on_time, late, days = float(wang["total"]), float(wang["late_total"]), int(wang["late_days"])
    assert on_time < 100 and late == 100 and days == 1 and float(wang["penalty"]) == pytest.approx(0.1)
    assert float(wang["counted_score"]) == pytest.approx(max(on_time, late * (1 - 0.1 * days)))
    zhang = rows[semester_walk.FULL]
    assert zhang["counted_score"] == zhang["total"] == "100" and zhang["late_days"] == "0"


def test_the_gradebook_has_every_roster_student(semester):
    with open(semester["out"] / "gradebook.csv", newline="", encoding="utf-8") as handle:
        book = list(csv.reader(handle))
    assert book[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    scores = {row[3]: row[5] for row in book[1:]}
    assert scores["2026001"] == "100" and scores["2026005"] == ""          # chen: on the roster, no repository
    assert float(scores["2026002"]) == float(semester["rows"][semester_walk.LATE]["counted_score"])
    assert semester["rows"]["2026005"]["status"] == "no repository"


def test_who_is_stuck_and_the_history_graded_module_by_module_as_the_class(semester):
    out = semester["out"]
    report = (out / "report.md").read_text(encoding="utf-8")
    stuck = report.split("### 谁卡住了")[1].split("\n## ")[0]
    assert semester_walk.STUCK in stuck and "TODO 4" in stuck and semester_walk.FULL not in stuck
    with open(out / semester_walk.FULL / "history.csv", newline="", encoding="utf-8") as handle:
        history = list(csv.DictReader(handle))
    assert [row["sha"] for row in history][1:] == semester["shas"][semester_walk.FULL]   # after the template's
    assert [float(row["score"]) for row in history] == sorted(float(row["score"]) for row in history)
    assert float(history[0]["score"]) == 0 and float(history[-1]["score"]) == 100
    # the stuck student's commit at the deadline, graded module by module in the history, as in the class's grade
    with open(out / semester_walk.STUCK / "history.csv", newline="", encoding="utf-8") as handle:
        last = list(csv.DictReader(handle))[-1]
    graded = json.loads((out / semester_walk.STUCK / "results.json").read_text(encoding="utf-8"))["extra_data"]
    assert {module: float(last[module]) for module in graded["modules"]} == \
        {module: float(score["score"]) for module, score in graded["modules"].items()}


def test_the_grader_change_is_in_changes_csv(semester):
    with open(semester["out"] / "changes.csv", newline="", encoding="utf-8") as handle:
        changes = {row["student"]: row for row in csv.DictReader(handle)}
    assert set(changes) == {"amp-backward-zhang", "amp-backward-wang", "amp-backward-li", "amp-backward-zhao"}
    assert all(float(row["new_total"]) - float(row["old_total"]) == float(row["delta"]) for row in changes.values())
    assert "评分程序改动的影响" in (semester["out"] / "report.md").read_text(encoding="utf-8")


def test_the_chinese_pages_hold_no_english_word_of_ours(semester):
    # the students' folders and GitHub usernames (whole words) are data, not words of ours
    out, names, logins = semester["out"], list(semester["rows"]), CODE | {"zhang", "wang", "li", "zhao"}
    assert english_words(markdown_text((out / "report.md").read_text(encoding="utf-8")), names, logins) == []
    assert english_words(page_text((out / "report.html").read_text(encoding="utf-8")), names, logins) == []


@pytest.fixture(scope="module")
def measured(semester):
    """Both languages (the English page written from the same folder), both widths, in one Chromium."""
    from autograder.class_reports import write as class_write
    from support.browser import Browser, find_chromium

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium fonts-noto-cjk)")
    english = semester["base"] / "english"
    shutil.copytree(semester["out"], english)
    manifest = json.loads((english / "run.json").read_text(encoding="utf-8"))
    class_write.write_all(english, dict(manifest, report_lang="en"))
    with Browser(chromium) as browser:
        return {(lang, width): browser.load(str(folder / "report.html"), width=width,
                                            height=900 if width > 500 else 844, mobile=width < 500)
                for lang, folder in (("zh", semester["out"]), ("en", english)) for width in (390, 1280)}


@pytest.mark.parametrize("width", [390, 1280])
def test_the_pages_fit_a_phone_and_a_laptop_in_both_languages(measured, width):
    for (lang, at), found in measured.items():
        if at != width:
            continue
        assert found["wide"] == [] and found["scroll_width"] <= width and found["cramped"] == [], (lang, found)
        low, high = found["student_rows"]
        if width == 1280:
            assert high <= 1.3 * low, (lang, found["student_rows"])   # one line a student
            scrolled, box = found["students_table"]
            assert scrolled <= box, (lang, found["students_table"])
