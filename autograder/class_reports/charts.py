"""The PNG charts of the class report (``report.md`` shows them): the score
distribution in 10-point bins over 0..100 (the top bin closed), the pass rate
of every test labelled by its title, and the mean score per module.

matplotlib is a staff dependency (requirements-dev.txt); without it the charts
are skipped and the report says so. Every statistic counts the students graded
with work of their own (:func:`autograder.class_reports.class_report.counted`).

The charts are labelled in the report's language. Chinese text needs a CJK
font (fonts-noto-cjk on Debian/Ubuntu, docs/ta-guide.md): the first installed
one of :data:`CJK_FAMILIES` that has every character is put after DejaVu Sans
in matplotlib's font list, which (matplotlib >= 3.6) draws each character in
the first font that has it. Where no installed font has them all, the charts
are labelled in English instead (the tests by their English titles) and the
report says so in one line: never boxes where characters should be.
"""
import functools
import os
import pathlib
import sys
import unicodedata
import warnings

from autograder.i18n import _, catalog
from autograder.i18n import text as t
from autograder.reports import colours as colours_of
from autograder.class_reports.class_report import (CHARTS, bin_labels, counted, distribution, module_columns,
                                                   module_means, pass_rates, summary_stats, test_title)
from autograder.reports.safe_text import visible

LATIN_FAMILY = "DejaVu Sans"   # matplotlib's own: always there
# CJK fonts, the likeliest first (Linux packages, then macOS and Windows system fonts).
CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", "Source Han Sans SC",
                "Source Han Sans CN", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback",
                "PingFang SC", "Heiti SC", "Hiragino Sans GB", "Microsoft YaHei", "SimHei")
MAX_LABEL = 60   # cells: a Chinese character is two


def _cells(text):
    """The width of ``text`` in cells: two for a wide (CJK) character, one for the rest."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _short_label(key, info, lang):
    label = test_title(info) if lang != "en" or info.get("lang", "en") == "en" else english_title(info)
    if _cells(label) > MAX_LABEL:
        while _cells(label) > MAX_LABEL - 1:
            label = label[:-1]
        label += "…"
    label = visible(label).replace("$", r"\$")  # a '$' pair would be parsed as mathtext
    return label + (" " + t("(hidden test)", lang) if info["visibility"] == "hidden" else "")


def english_title(info):
    """A test's title in English: the message id its translation came from, else its test id."""
    title = test_title(info)
    return _english(info.get("lang", "en")).get(title) or info.get("key", title).split("/")[-1]


@functools.cache
def _english(lang):
    return {translation: msgid for msgid, translation in catalog(lang).items()}


def _fit_left_margin(figure, labels, height_in, top_in=0.45):
    """Room for the y labels without a (slow) tight_layout: 7-pt text, ~5.5 px a cell (a
    Chinese character is two); ``top_in`` inches above the axes for the title (and a legend)."""
    longest = max((_cells(label) for label in labels), default=10)
    left = min(0.6, (longest * 5.5 + 24) / (figure.get_figwidth() * figure.dpi))
    figure.subplots_adjust(left=left, right=0.95, top=1 - top_in / height_in, bottom=0.5 / height_in)


def _figure(width, height):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


_PNG_OPTIONS = {"compress_level": 1}


def _save(figure, path):
    """The PNG at zlib's fastest level: lossless all the same, and here no larger."""
    figure.savefig(path, pil_kwargs=_PNG_OPTIONS)


def warm():
    """Draw and encode a tiny chart with the report's fonts and text, thrown away:
    the font files, text layouts and PNG encoder are then loaded in this process
    and every chart drawn in a fork of it starts warm (grade-many, while it grades)."""
    import io

    try:
        with _fonts(cjk_family("混合精度反向传播")):
            figure = _figure(2, 1)
            axes = figure.add_subplot()
            axes.barh([0], [50.0])
            axes.set_yticks([0], ["a test (hidden) 隐藏测试"], fontsize=7)
            axes.text(51, 0, "50%", va="center", fontsize=7)
            axes.set_title("warm")
            figure.savefig(io.BytesIO(), format="png", pil_kwargs=_PNG_OPTIONS)
    except Exception:  # noqa: BLE001 - only a head start: the report draws its charts all the same
        pass


def write_charts(output_dir, rows, columns, lang="en"):
    """PNG charts next to report.md; returns ``{chart: path}`` or None without matplotlib."""
    return start_charts(output_dir, rows, columns, lang).finish()


class _Pending:
    """Charts being drawn: :meth:`finish` waits and returns ``{chart: path}``
    (a chart whose drawing failed is left out), or None without matplotlib.
    ``note``: one line for the TA where the charts could not be drawn in ``lang`` (a message)."""

    def __init__(self, output_dir, drawn=None, note=None):
        self.output_dir = output_dir
        self.drawn = drawn            # {chart: path}, or None (no matplotlib)
        self.children = {}            # chart -> pid drawing it
        self.note = note

    def finish(self):
        for chart, pid in self.children.items():
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                status = 1
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
                self.drawn[chart] = self.output_dir / CHARTS[chart]
        self.children = {}
        if self.drawn is None:
            return None
        return {chart: self.drawn[chart] for chart in CHARTS if chart in self.drawn}


def start_charts(output_dir, rows, columns, lang="en"):
    """Start drawing the charts in ``lang`` (English where no installed font has its
    characters: ``note`` says so): each in a forked process of its own where there
    is fork (the three take about as long as the rest of the report together),
    else one after the other here. The caller writes the rest, then
    :meth:`_Pending.finish`."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return _Pending(output_dir)
    output_dir = pathlib.Path(output_dir)
    lang, family, note = chart_language(rows, columns, lang)
    pending = _Pending(output_dir, {}, note)
    for chart, draw in _DRAWERS.items():
        if hasattr(os, "fork"):
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            pid = os.fork()
            if pid == 0:
                _draw_and_exit(draw, output_dir / CHARTS[chart], rows, columns, lang, family)
            pending.children[chart] = pid
        else:
            _draw(draw, output_dir / CHARTS[chart], rows, columns, lang, family)
            pending.drawn[chart] = output_dir / CHARTS[chart]
    return pending


def chart_texts(rows, columns, lang):
    """Every text the charts draw in ``lang`` (numbers stand for the values)."""
    labels = [_short_label(key, dict(info, key=key), lang) for key, info, _, _ in pass_rates(rows, columns)]
    words = [_word(key, lang, value="0.5", n=10) for key in _WORDS]
    return labels + words + module_columns(rows) + bin_labels(distribution(rows)[0]) + ["0123456789%"]


def chart_language(rows, columns, lang):
    """``(lang, CJK family or None, note)``: the language the charts can be drawn in
    here, and why it is not the one asked for (a message) or None."""
    if lang == "en":
        return lang, None, None
    family = cjk_family("".join(chart_texts(rows, columns, lang)))
    if family is not None:
        return lang, family, None
    return "en", None, _("No installed font has the Chinese characters of the charts (install a CJK font such as "
                         "fonts-noto-cjk, docs/ta-guide.md): the charts are labelled in English.")


def _charmap(path):
    from matplotlib.ft2font import FT2Font

    try:
        return set(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return set()


def cjk_family(text):
    """The first installed family of :data:`CJK_FAMILIES` (else any named CJK) that,
    after DejaVu Sans, has every character of ``text``; None if there is none."""
    from matplotlib import font_manager

    needed = {ord(char) for char in text if not char.isspace()}
    needed -= _charmap(font_manager.findfont(font_manager.FontProperties(family=LATIN_FAMILY)))
    if not needed:
        return None
    installed = {font.name: font.fname for font in font_manager.fontManager.ttflist}
    names = [name for name in CJK_FAMILIES if name in installed]
    names += sorted(name for name in installed if "CJK" in name and name not in names)
    for name in names:
        if needed <= _charmap(installed[name]):
            return name
    return None


def missing_glyphs(text, family):
    """The characters of ``text`` that neither DejaVu Sans nor ``family`` has (tests)."""
    from matplotlib import font_manager

    found = set()
    for name in [LATIN_FAMILY] + ([family] if family else []):
        found |= _charmap(font_manager.findfont(font_manager.FontProperties(family=name)))
    return sorted({char for char in text if not char.isspace() and ord(char) not in found})


def _draw(draw, path, rows, columns, lang, family):
    """One chart; a glyph that no font has after all is said once, not once per character."""
    with warnings.catch_warnings(record=True) as caught, _fonts(family):
        warnings.simplefilter("always")
        draw(path, rows, columns, lang)
    glyphs = [w for w in caught if "missing from font" in str(w.message)]
    if glyphs:
        print(f"grade-many: {len(glyphs)} character(s) of {pathlib.Path(path).name} have no font here "
              "and were drawn as boxes", file=sys.stderr)
    for other in caught:
        if other not in glyphs:
            warnings.showwarning(other.message, other.category, other.filename, other.lineno)


def _draw_and_exit(draw, path, rows, columns, lang, family):
    """A drawing child: the chart, then ``os._exit`` (never the parent's clean-up)."""
    code = 1
    try:
        _draw(draw, path, rows, columns, lang, family)
        code = 0
    except BaseException:  # noqa: B036 - reported by the exit code: the chart is left out
        pass
    finally:
        os._exit(code)


def _fonts(family=None):
    """DejaVu Sans, then ``family`` (a CJK font) for the characters it lacks.
    Glyphs are drawn without hinting: the same look at 100 dpi, and less work per
    glyph for the pass-rate chart's label per test."""
    from matplotlib import rc_context

    settings = {"text.hinting": "no_hinting"}
    if family:
        settings["font.family"] = [LATIN_FAMILY, family]
    return rc_context(settings)


# Every text the charts draw besides the tests' titles and the modules' names.
_WORDS = {"mean": _("mean {value}"), "median": _("median {value}"), "total": _("total score"),
          "students": _("students"), "distribution": _("Score distribution ({n} students)"),
          "nobody": _("no student was graded"), "passed": _("students who passed (%)"),
          "rates": _("Per-test pass rates, lowest first"), "module_mean": _("mean score (% of the module)"),
          "modules": _("Mean score per module")}


def _word(key, lang, **params):
    return _(_WORDS[key].msgid, **params).render(lang)


def _draw_distribution(path, rows, columns, lang):
    edges, counts = distribution(rows)
    figure = _figure(7, 4)
    axes = figure.add_subplot()
    axes.bar(edges[:-1], counts, width=[b - a for a, b in zip(edges, edges[1:])], align="edge",
             color="#4C72B0", edgecolor="white")
    axes.set_xticks([low + 5 for low in edges[:-1]], bin_labels(edges), fontsize=8)
    stats = summary_stats(rows)
    if stats:
        axes.axvline(stats["mean"], color="#C44E52", linestyle="--", label=_word("mean", lang, value=f"{stats['mean']:.1f}"))
        axes.axvline(stats["median"], color="#333333", linestyle=":",
                     label=_word("median", lang, value=f"{stats['median']:g}"))
        axes.legend(loc="upper center", ncols=2, fontsize=8)
    axes.set_ylim(0, max(counts + [1]) * 1.25 + 0.2)
    axes.set_xlabel(_word("total", lang))
    axes.set_ylabel(_word("students", lang))
    axes.set_title(_word("distribution", lang, n=len(counted(rows))))
    axes.yaxis.get_major_locator().set_params(integer=True)
    figure.subplots_adjust(left=0.1, right=0.97, top=0.9, bottom=0.14)
    _save(figure, path)


def _draw_pass_rates(path, rows, columns, lang):
    rates = sorted(pass_rates(rows, columns), key=lambda item: (item[2] / item[3] if item[3] else 0, item[0]))
    height_in = max(3.0, 0.28 * len(rates) + 1.2)
    figure = _figure(9, height_in)
    axes = figure.add_subplot()
    labels = []
    if rates:
        labels = [_short_label(key, dict(info, key=key), lang) for key, info, _, _ in rates]
        values = [100.0 * passed / graded if graded else 0.0 for _, _, passed, graded in rates]
        colours = [colours_of.colour(info["module"]) for _, info, _, _ in rates]
        bars = axes.barh(range(len(rates)), values, color=colours)
        for bar, value in zip(bars, values):
            axes.text(min(value + 1, 92), bar.get_y() + bar.get_height() / 2, f"{value:.0f}%",
                      va="center", fontsize=7)
        _label_rows(figure, axes, labels)
        axes.invert_yaxis()
        axes.margins(y=0.01)
        from matplotlib.patches import Patch
        shown = list(dict.fromkeys(info["module"] for _, info, _, _ in rates))
        # Above the bars, under the title: inside them it would hide the top bars' values.
        axes.legend(handles=[Patch(color=colours_of.colour(m), label=m) for m in shown],
                    loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=len(shown), fontsize=7, frameon=False,
                    borderaxespad=0.2)
    else:
        axes.text(0.5, 0.5, _word("nobody", lang), ha="center", va="center", transform=axes.transAxes)
    axes.set_xlim(0, 100)
    axes.set_xlabel(_word("passed", lang))
    axes.set_title(_word("rates", lang), pad=18)
    _fit_left_margin(figure, labels, height_in, top_in=0.7)
    _save(figure, path)


def _label_rows(figure, axes, labels):
    """One label per bar, left of the axes, as plain text: a y tick per test would
    add five artists each (two marks, a grid line, two labels), a tenth or more of
    this chart's time with a class's ~80 tests, for marks nobody reads."""
    from matplotlib import transforms
    from matplotlib.ticker import NullLocator

    axes.yaxis.set_major_locator(NullLocator())
    beside = transforms.offset_copy(transforms.blended_transform_factory(axes.transAxes, axes.transData),
                                    fig=figure, x=-4, units="points")
    for row, label in enumerate(labels):
        axes.text(0, row, label, transform=beside, ha="right", va="center", fontsize=7)


def _draw_modules(path, rows, columns, lang):
    means = module_means(rows)
    figure = _figure(7, 3.5)
    axes = figure.add_subplot()
    axes.bar(list(means), list(means.values()), color=[colours_of.colour(m) for m in means])
    axes.set_ylim(0, 100)
    axes.set_ylabel(_word("module_mean", lang))
    axes.set_title(_word("modules", lang))
    figure.subplots_adjust(left=0.11, right=0.97, top=0.88, bottom=0.12)
    _save(figure, path)


# the longest first: it starts drawing first
_DRAWERS = {"pass_rates": _draw_pass_rates, "distribution": _draw_distribution, "modules": _draw_modules}
