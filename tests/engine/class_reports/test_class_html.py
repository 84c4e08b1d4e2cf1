"""``report.html``, the TA's class page (no grading: results files are written
here): one self-contained file with a strict policy, a view of every student
with the diagnosis and failed tests, flags with a severity and an action, a
"no work since the template" status kept out of pass rates, 10-point bins,
titles instead of test ids; a Chinese page with no English UI word; and, in
headless Chromium, a page that fits a phone (390 px) and a laptop (1,280 px)
and renders Chinese."""
import json
import re

import pytest

from autograder.batch import plan as batch_plan
from autograder.judging import results
from autograder.batch.jobs import add_extra_data
from autograder.class_reports import class_report, write as class_write
from autograder.class_reports import flags as class_flags
from autograder.class_reports.html import SCRIPT
from autograder.reports.gradescope import write_results
from autograder.reports.html_page import script_hash
from support import class_folders
from support.browser import CLICKS, find_chromium, measure
from support.helpers import ROOT
from support.language_check import english_words, identifiers, markdown_text, page_text

HOSTILE = "<img src=x onerror=alert(1)>王"
FEEDBACK = "TODO 4：缩放因子错误 </pre><script>alert(1)</script>\nexpected 13, got 12"


def _test(module, ident, score, maximum, output="Passed.", visibility="visible"):
    return results.TestResult(name=f"{module}: {ident.replace('_', ' ')} title", module=module, max_score=maximum,
                              score=score, passed=score == maximum, output=output, visibility=visibility,
                              test_id=f"test_{ident}")


def _write(out, student, tests, flags=(), diagnosis=None, commit=None, isolation=None):
    report = results.GradeReport(tests=tests, seed=5, submission="x", flags=list(flags), lang="zh",
                                 isolation=isolation or {"confined": True}, diagnosis=diagnosis or {})
    path = out / student / "results.json"
    write_results(report, path)
    if commit:
        add_extra_data(path, {"submission_commit": commit})


def build(out):
    full = [_test("amp_update", "norm", 50, 50), _test("loss_scaler", "growth", 50, 50, visibility="hidden")]
    half = [_test("amp_update", "norm", 0, 50, output=FEEDBACK), _test("loss_scaler", "growth", 50, 50,
                                                                       visibility="hidden")]
    stub = [_test("amp_update", "norm", 0, 50, output="TODO 1 not written yet"),
            _test("loss_scaler", "growth", 0, 50, output="TODO 1 not written yet", visibility="hidden")]
    _write(out, "amp-ana", full)
    _write(out, HOSTILE, half, flags=["protected file exercises/tests/test_amp_update.py differs from the template"],
           diagnosis={"amp_update": {"todo": 4, "test": "amp_update: norm title", "message": FEEDBACK}},
           commit={"sha": "ab" * 20, "committed_at": "2026-12-15T22:00:00+08:00", "later_commits": 2},
           isolation={"confined": False, "problems": ["no Landlock"]})
    _write(out, "amp-idle", stub)
    manifest = {"seed": 5, "students": {"amp-ana": {"status": "ok"}, HOSTILE: {"status": "ok"},
                                        "amp-idle": {"status": "ok", "unchanged_stubs": True},
                                        "amp-gone": {"status": "no submission", "reason": "no submission found"}}}
    class_write.write_all(out, manifest)
    return (out / "report.html").read_text(encoding="utf-8")


def test_the_page_is_self_contained_and_its_only_script_runs_by_hash(tmp_path):
    page = build(tmp_path)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src 'none'" in policy and "unsafe-inline" not in policy.split("script-src")[1]
    assert f"script-src {script_hash(SCRIPT)}" in policy
    assert page.count("<script>") == 1 and f"<script>{SCRIPT}</script>" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)   # nothing from the network
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;王" in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_every_student_has_a_view_with_what_a_ta_needs(tmp_path):
    page = build(tmp_path)
    views = re.findall(r'<section class="student" id="(student-\d+)">(.*?)</section>', page, re.DOTALL)
    assert len(views) == 3    # amp-gone holds no submission: listed once, under "Not in the statistics"
    for anchor, _ in views:
        assert f'href="#{anchor}"' in page          # the table links to each view
    hostile = next(body for _, body in views if "onerror" in body)
    assert "fix <b>TODO 4</b> first" in hostile and "缩放因子错误" in hostile     # diagnosis, in Chinese
    assert "1 failed test(s)" in hostile and "norm title" in hostile          # failed test with its feedback
    assert "edited public test" in hostile and "the grader uses its own copy" in hostile
    assert "code ran NOT CONFINED" in hostile and "no Landlock" in hostile
    assert "<b>2 later commit(s)</b> not counted" in hostile and "abababababab" in hostile
    left_out = page.split('id="left-out"')[1].split("<h2")[0]
    assert "amp-gone" in left_out and "no submission found" in left_out and "amp-gone" not in page.split(
        'id="views"')[1]


def test_no_work_since_the_template_is_a_status_left_out_of_pass_rates(tmp_path):
    page = build(tmp_path)
    assert "4 folder(s): 3 student(s), 2 of them in the statistics. Left out: no work since the template: 1. " \
           "Folders without anything of a student: amp-gone." in page
    assert "Every statistic and chart counts the 2 student(s) graded with work of their own" in page
    # amp-ana passed the amp_update test, the hostile student did not: 50 %, not 33 %.
    assert re.search(r"norm title</div><div class=\"track\"><div class=\"bar m-0\" style=\"width:50\.0%\"",
                     page)
    csv_text = (tmp_path / "scores.csv").read_text(encoding="utf-8")
    assert "amp-idle,no work since the template," in csv_text
    assert "| amp-idle | no work since the template | the modules are the template's stubs |" in \
        (tmp_path / "report.md").read_text(encoding="utf-8")


def test_flags_have_a_severity_and_an_action():
    planted = class_flags.tamper_flag("sitecustomize.py shadows a module or hooks into Python/pytest start-up; x")
    edited = class_flags.tamper_flag("protected file exercises/tests/test_a.py differs from the template")
    unknown = class_flags.tamper_flag("something new")
    assert (planted.severity, edited.severity, unknown.severity) == ("high", "low", "medium")
    assert "grade is unaffected" in edited.action.render("en") and all(flag.action for flag in (planted, edited, unknown))


def test_ten_point_bins_with_the_top_bin_closed(tmp_path):
    build(tmp_path)
    rows = class_report.load_rows(tmp_path, json.loads(json.dumps(
        {"students": {s: {"status": "ok"} for s in ("amp-ana", "amp-idle")}})))
    edges, counts = class_report.distribution(rows)
    assert edges == list(range(0, 101, 10)) and counts[-1] == 1 and counts[0] == 1   # 100 in 90–100
    assert class_report.bin_labels(edges)[-1] == "90–100" and class_report.bin_labels(edges)[0] == "0–<10"


def test_stubs_as_given_are_recognised(tmp_path):
    for module in ("amp_update", "loss_scaler"):
        text = (ROOT / "exercises" / f"{module}.py").read_text(encoding="utf-8")
        (tmp_path / f"{module}.py").write_text(text.replace("\n", "\r\n") + "\n\n", encoding="utf-8")
    assert batch_plan.unchanged_stubs(tmp_path)
    with open(tmp_path / "loss_scaler.py", "a", encoding="utf-8") as handle:
        handle.write("x = 1\n")
    assert not batch_plan.unchanged_stubs(tmp_path)
    assert not batch_plan.unchanged_stubs(tmp_path / "empty")


@pytest.fixture(scope="module")
def chromium():
    found = find_chromium()
    if found is None:
        pytest.skip("chromium is not installed (apt-get install chromium fonts-noto-cjk): the page is not "
                    "checked in a browser")
    return found


@pytest.mark.slow
def test_the_page_fits_1280_px_and_renders_chinese_in_chromium(tmp_path, chromium):
    build(tmp_path)
    found = measure(chromium, str(tmp_path / "report.html"))
    assert found["wide"] == [] and found["scroll_width"] <= found["window"], found
    assert found["views"] == 3
    # Ten CJK characters at 20 px are about 200 px wide when a CJK font renders them.
    assert 180 <= found["cjk_width"] <= 220, found


@pytest.mark.slow
def test_the_page_in_the_language_the_ta_asks_for(tmp_path):
    build(tmp_path)
    manifest = {"seed": 5, "report_lang": "zh", "students": {"amp-ana": {"status": "ok"},
                                                             "amp-idle": {"status": "ok", "unchanged_stubs": True}}}
    class_write.write_all(tmp_path, manifest)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<html lang="zh">' in page and "班级报告：混合精度反向传播" in page and "各模块得分" in page
    assert "自模板以来没有作业" in page            # the flag, translated
    assert "amp-idle" in page and "Class report" not in page


@pytest.mark.slow
def test_the_students_table_sorts_and_filters_under_the_policy(tmp_path, chromium):
    """The page's own script runs (allowed by its hash): sorting by name and by total, filtering."""
    build(tmp_path)
    found = measure(chromium, str(tmp_path / "report.html"), script=CLICKS)
    # A to Z: punctuation first, so the hostile name (shown as text, not markup) leads.
    assert found == {"name": HOSTILE, "high": "100", "low": "0", "shown": 1, "filter_visible": True}, found


CJK = "\u4e00-\u9fff"
# An ASCII comma, semicolon, colon or full stop beside Chinese text (Chinese punctuation is wanted there).
ASCII_PUNCTUATION = re.compile(rf"[{CJK}）][,;:.](?=\s|$|[{CJK}])|[,;:] *[{CJK}]")
# The stubs' names (``scale``, ``found_inf``): the assignment's Chinese text names them bare.
CODE = identifiers(*(ROOT / "exercises").glob("*.py"))


def _chinese_class(tmp_path):
    """The class with a similarity run: a group of three, a copy of the reference."""
    pytest.importorskip("copydetect", reason="copydetect (requirements-dev.txt) runs the similarity check")
    out = tmp_path / "out"
    class_folders.build(out, similarity=True)
    names = list(class_folders.COUNTED) + list(class_folders.LEFT_OUT) + [class_folders.PROBLEM]
    page = (out / "report.html").read_text(encoding="utf-8")
    report = (out / "report.md").read_text(encoding="utf-8")
    return page, report, names


@pytest.mark.slow
def test_every_word_of_a_chinese_class_page_is_chinese(tmp_path):
    """Statuses, reasons, flags and their details, the filter, the failed tests' visibility,
    the deadline line, the left-out list: no English UI word outside names, code and numbers."""
    page, report, names = _chinese_class(tmp_path)
    shown = page_text(page)
    assert english_words(shown, names, CODE) == []
    assert "筛选：姓名、状态、标记" in page and "（公开测试，0/25）" in page and "自模板以来没有作业" in shown
    assert "受保护文件 .github/workflows/classroom.yml 与模板不同" in shown      # a flag's detail
    assert "3 名学生：张三、李华、王小明" in shown and "赵六 / 参考解答" in shown     # the similarity section
    assert "评分未在 900 秒内完成，已被终止" in shown                             # a reason
    assert not ASCII_PUNCTUATION.findall(shown), ASCII_PUNCTUATION.findall(shown)[:10]


def test_every_word_of_a_chinese_report_md_is_chinese(tmp_path):
    _, report, names = _chinese_class(tmp_path)
    assert english_words(markdown_text(report), names, CODE) == []
    assert "# 班级报告" in report and "## 全班错在哪里" in report and "## 未计入统计" in report
    # an enumeration takes the enumeration comma 、, a count its measure word
    assert "未计入：自模板以来没有作业 1 名、评分崩溃 1 名。不含任何学生作业的文件夹：empty-repo、notes。" in report
    assert "| 独立的用户 ID 1934567890 |" in report and "评分前本机探测沙箱的结果：`isolation: fs=Landlock" in report
    assert "## 相似度" in report and "3 名学生：张三、李华、王小明" in report and "**赵六** 1.00（高）" in report
    assert not ASCII_PUNCTUATION.findall(markdown_text(report)), ASCII_PUNCTUATION.findall(markdown_text(report))[:10]


@pytest.mark.slow
@pytest.mark.parametrize("width", [390, 1280])
def test_the_chinese_class_page_fits_a_phone_and_a_laptop(tmp_path, chromium, width):
    """Nothing wider than the window but tables scrolling in their own box, with columns
    wide enough to read (no heading, status or link one character a line); every bar
    keeps a track and its pixels, every value is on screen; at 1,280 px the students
    table fits whole (its last column is not cut off). Measured in a 390 px viewport
    (an emulated phone: tests/support/browser.py), never in Chromium's narrowest window."""
    pytest.importorskip("copydetect", reason="copydetect (requirements-dev.txt) runs the similarity check")
    class_folders.build(tmp_path / "out", similarity=True)
    found = measure(chromium, str(tmp_path / "out" / "report.html"), width=width)
    assert found["window"] == width
    assert found["wide"] == [] and found["scroll_width"] <= width, found
    assert found["cramped"] == [], found
    assert found["tracks"] >= 10 and found["narrowest_track"] >= 100, found
    assert found["flat_bars"] == [] and found["cut_values"] == [], found
    if width == 1280:
        scrolled, box = found["students_table"]
        assert scrolled <= box, found


def test_every_message_of_the_class_report_has_a_translation():
    """Every literal id in autograder/class_reports/, found in the code itself: Babel's extractor
    misses a t() inside an f-string or inside another t()'s arguments, and such an id would then
    show in English on a Chinese page without tests/engine/i18n/test_catalogs.py noticing."""
    import ast

    from autograder.i18n import catalog

    translated = catalog("zh")
    missing = []
    for path in sorted((ROOT / "autograder" / "class_reports").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("t", "_") and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                if node.args[0].value not in translated:
                    missing.append(f"{path.name}:{node.lineno}: {node.args[0].value}")
    assert missing == []


def test_similarity_partners_are_listed_once(tmp_path):
    """A group of three who copied in every module: each of them lists the two others once."""
    pytest.importorskip("copydetect", reason="copydetect (requirements-dev.txt) runs the similarity check")
    class_folders.build(tmp_path / "out", report_lang="en", similarity=True)
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    table = page.split('id="students-table"')[1].split("</table>")[0]
    row = next(row for row in table.split("<tr>") if ">张三</a>" in row)
    similar = re.search(r'<div class="similar"[^>]*>(.*?)</div>', row).group(1)
    assert similar.count("李华") == 1 and similar.count("王小明") == 1, similar


@pytest.mark.slow
def test_the_students_table_is_one_line_a_student_at_1280_px(tmp_path, chromium):
    pytest.importorskip("copydetect", reason="copydetect (requirements-dev.txt) runs the similarity check")
    for lang in ("zh", "en"):
        out = tmp_path / lang
        class_folders.build(out, report_lang=lang, similarity=True)
        found = measure(chromium, str(out / "report.html"), width=1280)
        low, high = found["student_rows"]
        assert high <= 1.3 * low and high < 45, (lang, found["student_rows"])
