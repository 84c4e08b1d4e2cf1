"""The similarity pages (DIR/similarity/index.html and the side-by-side pages): static
and escaped, in the class's language (every word of a Chinese page Chinese, Chinese
punctuation), and readable on every screen (Chromium at 390 and 1,280 px: nothing wider
than the window, tables scroll in their own box, the two files stacked on a phone).

The class: bob (an independent solution), dave (bob disguised: the same code), gus (bob's
files with a function of his own added: a partial copy), alice (the reference), frank
(torch's GradScaler renamed), erin (the stubs), three honest authors and a hostile folder
name with hostile code.
"""
import html
import re

import pytest

from support import honest  # noqa: E402
from support.disguise import disguise  # noqa: E402
from support.language_check import english_runs  # noqa: E402
from support.similarity_class import HOSTILE, HOSTILE_CODE, MODULES, read_file, variant, write_module  # noqa: E402

from autograder.similarity import pairs as similarity  # noqa: E402
from autograder.similarity.display import PAGE_NAME  # noqa: E402

pytest.importorskip("copydetect", reason="copydetect (requirements-dev.txt) runs the similarity check")

EXTRA = '''

def my_own_helper(values, limit):
    """Something gus wrote himself."""
    kept = [value for value in values if value is not None and abs(value) < limit]
    total = sum(kept) / max(1, len(kept))
    return {"kept": kept, "mean": total, "limit": limit, "dropped": len(values) - len(kept)}
'''


def build_class(root):
    grad_scaler, _ = similarity.framework_source()
    for module in MODULES:
        write_module(root / "bob", module, variant(module))
        write_module(root / "dave", module, disguise(variant(module)))
        write_module(root / "gus", module, variant(module) + EXTRA)
        write_module(root / "alice", module, read_file("solutions", f"{module}.py"))
        write_module(root / "erin", module, read_file("exercises", f"{module}.py"))
    write_module(root / "frank", "loss_scaler", disguise(grad_scaler.read_text(encoding="utf-8")))
    write_module(root / HOSTILE, "amp_update", read_file("exercises", "amp_update.py") + HOSTILE_CODE)
    honest.write_class(root, ("ivo", "pavel", "wei"))
    return {path.name: path for path in root.iterdir()}


@pytest.fixture(scope="module", params=["zh", "en"])
def pages(request, tmp_path_factory):
    base = tmp_path_factory.mktemp(f"similarity-{request.param}")
    result = similarity.run(build_class(base / "class"), base / "out", lang=request.param)
    return {"folder": base / "out" / "similarity", "result": result, "lang": request.param}


def _text_nodes(page):
    """What a reader sees outside code, one piece per text node: <pre> blocks, <code>, the
    panes' headings and student names left out."""
    body = page.split("<body>", 1)[1]
    body = re.sub(r"<(pre|code|h2)\b.*?</\1>", "<x>", body, flags=re.DOTALL)
    nodes = []
    for node in re.split(r"<[^>]+>", body):
        text = html.unescape(node)
        for name in ("bob", "dave", "gus", "alice", "frank", "erin", "ivo", "pavel", "wei", HOSTILE):
            text = text.replace(name, "")
        if text.strip():
            nodes.append(text.strip())
    return nodes


def _visible_text(page):
    return "\n".join(_text_nodes(page))


# Names a Chinese page keeps as they are: files, modules, tools, code and the chapter's own section title.
_KEPT = re.compile(r"[\w./-]+\.py|copydetect|MOSS|winnowing|GradScaler|torch|TODO|Step|autocast|backward|unscale|"
                   r"clip|step|k|solutions")


@pytest.mark.slow
def test_chinese_pages_say_everything_in_chinese(pages):
    if pages["lang"] != "zh":
        pytest.skip("the English pages")
    for page in sorted(pages["folder"].glob("*.html")):
        text = _KEPT.sub(" ", _visible_text(page.read_text(encoding="utf-8")))
        words = re.findall(r"[A-Za-z]{2,}", text)
        assert not words, (page.name, words[:10])
        assert not english_runs(text, min_words=2), page.name
        # Chinese punctuation: no ASCII ",;:.!?" after a Chinese character, no space after 。，；：
        assert not re.search(r"[\u4e00-\u9fff][,;:.!?]", text), (page.name, re.findall(r".{8}[\u4e00-\u9fff][,;:.!?]", text))
        spaced = [node for node in _text_nodes(page.read_text(encoding="utf-8")) if re.search(r"[。，；：]\s+\S", node)]
        assert not spaced, (page.name, spaced)


def test_english_pages_say_it_in_english(pages):
    if pages["lang"] != "en":
        pytest.skip("the Chinese pages")
    index = (pages["folder"] / "index.html").read_text(encoding="utf-8")
    assert "Similarity of the student modules" in index and '<html lang="en">' in index
    assert not re.search(r"[\u4e00-\u9fff]", _visible_text(index).replace("参考代码与解析", ""))


def test_a_group_a_partial_copy_and_the_public_reference_read_right(pages):
    lang, folder = pages["lang"], pages["folder"]
    index = (folder / "index.html").read_text(encoding="utf-8")
    rows = pages["result"]["modules"]["loss_scaler"]["pairs"]
    group = next(row for row in rows if row["flagged"])
    assert group["members"] == ["bob", "dave", "gus"] and not group["identical"], rows[:3]
    page = (folder / group["page"]).read_text(encoding="utf-8")
    assert ("一组 3 名学生的文件相同" if lang == "zh" else "One group of 3 students whose files match") in page
    assert ("3 名学生：bob、dave、gus" if lang == "zh" else "3 students: bob, dave, gus") in index
    assert ("本章印出了这个模块的参考代码" if lang == "zh" else "The chapter prints this module") in index
    assert ('<span class="flag">是（高）</span>' if lang == "zh" else '<span class="flag">yes (high)</span>') in index


def test_pages_load_nothing_and_link_only_our_pages(pages):
    files = sorted(pages["folder"].glob("*.html"))
    assert (pages["folder"] / "index.html") in files and (pages["folder"] / "loss_scaler-1.html") in files
    for page in files:
        text = page.read_text(encoding="utf-8")
        assert "Content-Security-Policy" in text and "default-src 'none'" in text
        assert "<script" not in text.lower(), page.name
        assert f'<html lang="{pages["lang"]}">' in text
        for target in re.findall(r"(?:src|href)=\"([^\"]*)\"", text):
            target = target.split("#")[0]
            assert target in ("", "index.html") or PAGE_NAME.fullmatch(target), (page.name, target)


def test_scores_shown_agree_with_the_flags(pages):
    """A shown score at or above its shown threshold is flagged, or says why not."""
    index = (pages["folder"] / "index.html").read_text(encoding="utf-8")
    for module, data in pages["result"]["modules"].items():
        for row in data["pairs"]:
            shown = float(similarity.shown_score(row["score"]))
            assert (shown >= data["threshold"]) == (row["score"] >= data["threshold"])
            if shown >= data["threshold"] and not row["flagged"]:
                assert row["overlap"] < data["min_overlap"]
    assert re.search(r"<td class=\"num\">\d\.\d\d</td>", index)


def test_a_hostile_pair_page_is_escaped(tmp_path):
    from autograder.similarity.groups import Pair
    from autograder.similarity.side_by_side import PageWriter

    text = read_file("exercises", "amp_update.py") + HOSTILE_CODE
    writer = PageWriter(tmp_path, {"amp_update": read_file("exercises", "amp_update.py")})
    name = writer.pair("amp_update", 1, Pair(HOSTILE, "bob", 0.5, 0.4, 120), text, HOSTILE_CODE + "x = 1\n")
    page = (tmp_path / name).read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert '<mark class="a">SCRIPT = &#x27;&lt;/pre&gt;&lt;script&gt;' in page
    assert "\u202e" not in page and "\\u202e" in page  # a bidi override is shown, not obeyed


def test_highlight_escapes_and_marks_only_the_given_regions():
    from autograder.similarity.side_by_side import highlighted

    text = "a = '<b>'\nb = 2\n\u202ec = 3\n"
    shown = highlighted(text, [[4], [9]], "a")
    assert shown.startswith("a = <mark class=\"a\">&#x27;&lt;b&gt;&#x27;</mark>")
    assert "\\u202ec = 3" in shown and "<b>" not in shown


def test_given_code_is_cut_out_of_the_matched_regions():
    from autograder.similarity.side_by_side import regions

    text = "import torch\nx = 1\n\ndef f(a):\n    return a * 2\n"
    template = "import torch\n\ndef f(a):\n"
    assert [text[s:e] for s, e in regions(text, [[0], [len(text)]], template)] == ["x = 1", "return a * 2"]
    assert [text[s:e] for s, e in regions(text, [[13, 22], [18, 25]], template)] == ["x = 1"]
    assert regions(text, [[0], [len(text)]], text) == []


def test_a_pair_page_numbers_and_links_its_regions_and_never_marks_given_code(pages):
    page = (pages["folder"] / "loss_scaler-1.html").read_text(encoding="utf-8")
    assert 'id="m1"' in page
    ids = set(re.findall(r'id="([ab]\d+)"', page))
    targets = re.findall(r'class="n" id="[ab]\d+(?:-\d+)?" href="#([ab]\d+)"', page)
    assert targets and all(target in ids for target in targets)       # every number has its partner
    assert {t[1:] for t in targets if t[0] == "a"} & {t[1:] for t in targets if t[0] == "b"}
    given = {line.strip() for line in read_file("exercises", "loss_scaler.py").split("\n") if line.strip()}
    for marked in re.findall(r'<mark class="[ab]">(.*?)</mark>', page, re.DOTALL):
        for line in html.unescape(marked).split("\n"):
            assert not line.strip() or line.strip() not in given, line
    assert "<details>" in page   # the file as handed in, comments included


def _panes(browser, path, width):
    from support.browser import MEASURE

    script = MEASURE.replace("views: views,", "views: views, panes: Array.prototype.map.call("
                             "document.querySelectorAll('.pair > div'), function (pane) {"
                             "var box = pane.getBoundingClientRect(); return [Math.round(box.left), "
                             "Math.round(box.top), Math.round(box.width)]; }),")
    return browser.load(str(path), width=width, height=900 if width > 500 else 844, script=script,
                        mobile=width < 500)


@pytest.mark.slow
def test_pages_fit_a_phone_and_a_laptop_in_chromium(pages):
    from support.browser import Browser, find_chromium

    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium fonts-noto-cjk)")
    names = ["index.html", "loss_scaler-1.html", "amp_update-1.html", "loss_scaler-torch-1.html"]
    names += [row["page"] for row in pages["result"]["solution_reference"]["loss_scaler"]["matches"][:1]]
    with Browser(chromium) as browser:  # one Chromium loads every page at both widths
        found_all = {(name, width): _panes(browser, pages["folder"] / name, width)
                     for name in names for width in (390, 1280)}
    for name in names:
        for width in (390, 1280):
            found = found_all[name, width]
            assert found["window"] == width, found
            assert found["wide"] == [] and found["scroll_width"] <= width, (name, width, found)
            assert found["cramped"] == [], (name, width, found["cramped"])   # readable columns
            panes = found["panes"]
            if len(panes) == 2:
                (left_a, top_a, width_a), (left_b, top_b, width_b) = panes
                if width == 390:   # stacked, each as wide as the page allows
                    assert left_a == left_b and top_b > top_a and width_a >= 300, (name, panes)
                else:              # side by side
                    assert top_a == top_b and left_b > left_a + width_a - 5 and width_a >= 500, (name, panes)
