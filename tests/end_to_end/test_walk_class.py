"""Issue 36's walk as a test: the class a TA of a Chinese course meets (tests/support/walk_class.py:
13 students as git repositories made from the exported template, a notes/ folder and a
repository without commits), graded for real with
``grade-many --deadline ... --lang zh --report-lang zh --jobs 2 --also-latest``.

Every score where it belongs (a mistake costs its module only, a syntax error its module, the
late student is graded at the deadline with the later score beside it), one status per folder
in run.json and scores.csv, max_score on every row, no glyph warning on the terminal, the
classmate copy and the disguised reference copy caught and no honest student flagged, report.md
and report.html without an English word of ours, and the pages fit a phone and a laptop.
"""
import csv
import json
import shutil

import pytest
from support.helpers import ROOT

from support import walk_class  # noqa: E402
from support.cli import autograder_command  # noqa: E402
from support.language_check import english_words, identifiers, markdown_text, page_text  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]
# torch names the assignment's own Chinese test titles use bare ("Adam", "Linear", GradScaler('cpu')),
# and the similarity index's "k = 25" (copydetect's parameter)
CODE = identifiers(*(ROOT / "exercises").glob("*.py")) | {"Adam", "Linear", "cpu'", "k"}


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    pytest.importorskip("copydetect", reason="copydetect (requirements-dev.txt) runs the similarity check")
    base = tmp_path_factory.mktemp("walk")
    exported = autograder_command("export-template", base / "template", timeout=300)
    assert exported.returncode == 0, exported.stderr
    walk_class.build(base / "root", base / "template")
    done = autograder_command("grade-many", base / "root", "-o", base / "out", "--deadline", walk_class.DEADLINE,
                              "--lang", "zh", "--report-lang", "zh", "--jobs", "2", "--also-latest", "--no-progress",
                              timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    out = base / "out"
    with open(out / "scores.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return {"out": out, "rows": rows, "run": json.loads((out / "run.json").read_text(encoding="utf-8")),
            "stderr": done.stderr, "root": base / "root"}


def _results(out, student):
    return json.loads((out / student / "results.json").read_text(encoding="utf-8"))


def test_every_score_is_where_it_belongs(walked):
    rows, out = walked["rows"], walked["out"]
    modules = walk_class.MODULES
    full = {module: max(float(row[module]) for row in rows.values()) for module in modules}
    for student in walk_class.FULL_MARKS:
        assert all(float(rows[student][m]) == full[m] for m in modules), rows[student]
    for student, losses in walk_class.LOSSES.items():
        diagnosis = _results(out, student)["extra_data"]["diagnosis"]
        for module in modules:
            if module not in losses:
                assert float(rows[student][module]) == full[module], (student, module)
                continue
            assert float(rows[student][module]) < full[module], (student, module)
            if losses[module] == "import":   # the syntax error costs its module and only that
                assert float(rows[student][module]) == 0 and diagnosis[module]["problem"] == "import"
            else:
                assert diagnosis[module]["todo"] == losses[module], (student, diagnosis)
    assert float(rows[walk_class.NEVER_STARTED]["total"]) == 0
    assert sum(full.values()) == 100 and all(row["max_score"] == "100" for row in rows.values())


def test_the_late_student_is_graded_at_the_deadline_with_the_later_score_beside_it(walked):
    late = walked["rows"][walk_class.LATE]
    assert late["committed_at"] < "2026-12-15T23:59" and late["later_commits"] == "1"
    assert float(late["total"]) < 100 and float(late["latest_total"]) == 100
    report = (walked["out"] / "report.md").read_text(encoding="utf-8")
    assert f"| {walk_class.LATE} | 已评分 | `{late['commit'][:12]}` |" in report and "| 100 |" in report


def test_one_status_per_folder_and_no_student_left_in_the_statistics(walked):
    rows, run = walked["rows"], walked["run"]["students"]
    assert {student: row["status"] for student, row in rows.items()} == \
        {student: entry["status"] for student, entry in run.items()}
    assert rows[walk_class.NEVER_STARTED]["status"] == "no work since the template"
    for folder, status in walk_class.NO_STUDENT.items():
        assert rows[folder]["status"] == status
    report = (walked["out"] / "report.md").read_text(encoding="utf-8")
    assert "共 15 个文件夹：13 名学生，其中 12 名计入统计。" in report
    assert "12 graded with work of their own" in walked["stderr"]
    assert "Glyph" not in walked["stderr"] and "missing from font" not in walked["stderr"]


def test_copies_are_caught_and_no_honest_student_is_flagged(walked):
    result = json.loads((walked["out"] / "similarity" / "similarity.json").read_text(encoding="utf-8"))
    flagged = set()
    for module, data in result["modules"].items():
        groups = [set(row["members"]) for row in data["pairs"] if row["flagged"]]
        assert {student for pair in walk_class.COPIES.items() for student in pair} in groups, (module, groups)
        flagged |= set().union(*groups)
    for module, data in result["solution_reference"].items():
        if data.get("public"):
            continue
        hits = {student for row in data["matches"] if row["flagged"] for student in row["members"]}
        assert hits == {walk_class.REFERENCE_COPY}, (module, hits)
    honest = set(walk_class.HONEST) - set(walk_class.COPIES.values())   # the copied author is in the group
    assert not flagged & honest, flagged


def test_the_chinese_reports_hold_no_english_word_of_ours(walked):
    out, names = walked["out"], list(walked["rows"])
    assert english_words(markdown_text((out / "report.md").read_text(encoding="utf-8")), names, CODE) == []
    for page in ("report.html", "similarity/index.html"):
        assert english_words(page_text((out / page).read_text(encoding="utf-8")), names, CODE) == [], page


@pytest.fixture(scope="module")
def measured(walked):
    """(page, width) -> what the measuring script found, every page at both widths loaded in one
    Chromium (each one started costs a second or more): a phone's viewport emulated, a laptop's not."""
    from support.browser import Browser, find_chromium

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium fonts-noto-cjk)")
    result = json.loads((walked["out"] / "similarity" / "similarity.json").read_text(encoding="utf-8"))
    group = next(row["page"] for row in result["modules"]["loss_scaler"]["pairs"] if row["flagged"])
    pages = ("report.html", "similarity/index.html", f"similarity/{group}")
    with Browser(chromium) as browser:
        return {(page, width): browser.load(str(walked["out"] / page), width=width, height=900 if width > 500 else 844,
                                            mobile=width < 500)
                for page in pages for width in (390, 1280)}


@pytest.mark.parametrize("width", [390, 1280])
def test_the_pages_fit_a_phone_and_a_laptop(measured, width):
    for (page, at), found in measured.items():
        if at != width:
            continue
        assert found["window"] == width and found["wide"] == [] and found["scroll_width"] <= width, (page, found)
        assert found["flat_bars"] == [] and found["cramped"] == [], (page, found)
