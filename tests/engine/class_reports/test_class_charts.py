"""The class report's charts (autograder/class_reports/charts.py): what a TA reads
on them stays readable."""
import re

import pytest

pytest.importorskip("matplotlib")

from autograder.class_reports import charts  # noqa: E402


def _pass_rate_chart(monkeypatch, tmp_path, rates, lang="en"):
    """The pass-rate chart's figure for ``rates`` (as charts.pass_rates gives them), not saved."""
    monkeypatch.setattr(charts, "pass_rates", lambda rows, columns: rates)
    drawn = []
    monkeypatch.setattr(charts, "_save", lambda figure, path: drawn.append(figure))
    with charts._fonts(charts.cjk_family("对纯混合维张量") if lang != "en" else None):
        charts._draw_pass_rates(tmp_path / "rates.png", [], [], lang)
    return drawn[0]


def test_the_pass_rate_legend_sits_above_the_bars_and_hides_no_value(monkeypatch, tmp_path):
    """A class that passed nearly everything: the top bars reach the right edge, where
    a legend inside the axes would cover their values."""
    modules = ("first_part", "second_part", "third_longest_part")  # any modules: the labels are what is drawn
    rates = [(f"t{index}", {"name": f"{modules[index % 3]}: a test title number {index} of this class",
                            "module": modules[index % 3], "visibility": "hidden"}, 40, 40)
             for index in range(30)]
    figure = _pass_rate_chart(monkeypatch, tmp_path, rates)
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    legend = axes.get_legend().get_window_extent(renderer)
    bars = axes.get_window_extent(renderer)
    title = axes.title.get_window_extent(renderer)
    assert legend.y0 >= bars.y1 - 1, "the legend overlaps the bars"
    assert title.y0 >= legend.y1 - 1, "the title overlaps the legend"
    assert legend.y1 <= figure.bbox.y1 and title.y1 <= figure.bbox.y1
    values = [text for text in axes.texts if text.get_text().endswith("%")]
    assert len(values) == 30 and all(not legend.overlaps(text.get_window_extent(renderer)) for text in values)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_pass_rate_bar_has_its_label_beside_it_inside_the_picture(monkeypatch, tmp_path, lang):
    """The labels are texts left of the axes (no tick per test): one per bar, at the bar's
    height, in the bars' order, none cut off at the left edge or overlapping the next; a
    Chinese title (twice as wide a character) too."""
    modules = ("first_part", "second_part", "third_longest_part")
    title = ("the check number {index} of a long test title here" if lang == "en"
             else "the check number {index}：对纯 FP16、纯 BF16 和混合 dtype 的列表，global_grad_norm 都是 0 维 FP32 张量")
    rates = [(f"t{index}", {"name": f"{modules[index % 3]}: {title.format(index=index)}",
                            "module": modules[index % 3], "visibility": "hidden" if index % 2 else "visible",
                            "lang": lang}, index, 40) for index in range(40)]
    figure = _pass_rate_chart(monkeypatch, tmp_path, rates, lang)
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    inside = axes.get_window_extent(renderer)
    labels = [text for text in axes.texts if not text.get_text().endswith("%")]
    bars = sorted(axes.patches, key=lambda bar: -bar.get_window_extent(renderer).y1)  # top first
    assert len(labels) == len(bars) == 40
    assert not len(axes.get_yticks()), "no tick per test"
    boxes = [label.get_window_extent(renderer) for label in labels]
    for label, box, bar in zip(labels, boxes, bars):
        bar_box = bar.get_window_extent(renderer)
        assert bar_box.y0 <= (box.y0 + box.y1) / 2 <= bar_box.y1, label.get_text()
        assert box.x1 <= inside.x0 and box.x0 >= figure.bbox.x0, label.get_text()
    # lowest pass rate first: the top bar is test 0
    assert re.match(r"the check number 0\b", labels[0].get_text())
    assert all(upper.y0 >= lower.y1 - 0.5 for upper, lower in zip(boxes, boxes[1:]))


# -- the class's language ------------------------------------------------------------------------
import warnings  # noqa: E402

from support import class_folders  # noqa: E402
from autograder.class_reports import class_report  # noqa: E402
from autograder.class_reports import write as class_write  # noqa: E402
from autograder.i18n import catalog  # noqa: E402


def _chinese_class(tmp_path):
    manifest = class_folders.build(tmp_path)
    rows = class_report.load_rows(tmp_path, manifest)
    return manifest, rows, class_report.test_columns(rows, "zh")


def _drawn_texts(figure):
    return [text.get_text() for axes in figure.axes for text in
            axes.texts + [axes.title, axes.xaxis.label, axes.yaxis.label] + axes.get_xticklabels()
            + ([t for t in axes.get_legend().get_texts()] if axes.get_legend() else []) if text.get_text()]


@pytest.mark.slow
def test_a_chinese_chart_finds_a_font_for_every_character(monkeypatch, tmp_path):
    """Every text of the three charts in Chinese has each of its characters in DejaVu Sans or
    the CJK font chosen, and drawing them warns of no missing glyph."""
    _, rows, columns = _chinese_class(tmp_path)
    lang, family, note = charts.chart_language(rows, columns, "zh")
    if family is None:
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk): the fallback is tested below")
    assert lang == "zh" and note is None
    drawn = []
    monkeypatch.setattr(charts, "_save", lambda figure, path: drawn.append(figure))
    with warnings.catch_warnings(record=True) as caught, charts._fonts(family):
        warnings.simplefilter("always")
        for draw in charts._DRAWERS.values():
            draw(tmp_path / "chart.png", rows, columns, lang)
        for figure in drawn:
            figure.canvas.draw()   # lays the text out: a missing glyph warns here
    assert not [str(w.message) for w in caught if "missing from font" in str(w.message)]
    texts = [text for figure in drawn for text in _drawn_texts(figure)]
    assert "分数分布（5 名学生）" in texts and "各测试通过率（从低到高）" in texts and "全局范数是 13" in texts
    assert charts.missing_glyphs("".join(texts), family) == []
    assert charts.missing_glyphs("分数分布", None) == ["分", "布", "数"]   # DejaVu Sans alone has none


@pytest.mark.slow
def test_without_a_cjk_font_the_charts_are_labelled_in_english(monkeypatch, tmp_path):
    """No installed font has the characters: English words and test titles, a one-line note
    on the terminal and in report.md, and no glyph warning."""
    monkeypatch.setattr(charts, "cjk_family", lambda text: None)
    _, rows, columns = _chinese_class(tmp_path)
    lang, family, note = charts.chart_language(rows, columns, "zh")
    assert (lang, family) == ("en", None) and "fonts-noto-cjk" in note.render("en")
    labels = charts.chart_texts(rows, columns, "en")
    assert charts.missing_glyphs("".join(labels), None) == []
    assert "test_norm" in labels   # a title the catalog does not know: its test id
    msgid, translated = next((k, v) for k, v in catalog("zh").items() if k.startswith("unscale_gradients"))
    assert charts.english_title({"name": f"amp_update: {translated}", "module": "amp_update", "lang": "zh"}) == msgid


@pytest.mark.slow
def test_writing_a_chinese_report_prints_no_glyph_warning(capfd, tmp_path):
    """The charts are drawn in forked processes: their stderr is the terminal's."""
    _chinese_class(tmp_path)
    err = capfd.readouterr().err
    assert "Glyph" not in err and "missing from font" not in err and "drawn as boxes" not in err, err[:2000]
    if charts.cjk_family("分数分布") is None:
        assert err.count("the charts are labelled in English") == 1
    for chart in class_report.CHARTS.values():
        assert (tmp_path / chart).stat().st_size > 2000


@pytest.mark.slow
def test_no_cjk_font_note_in_report_md(monkeypatch, capfd, tmp_path):
    monkeypatch.setattr(charts, "cjk_family", lambda text: None)
    manifest = class_folders.build(tmp_path)
    class_write.write_all(tmp_path, manifest)
    assert "图表改用英文标注" in (tmp_path / "report.md").read_text(encoding="utf-8")
    err = capfd.readouterr().err
    assert "class report: No installed font has the Chinese characters" in err and "Glyph" not in err
