"""The PNG charts of the class report (``report.md`` shows them): the score
distribution in 10-point bins over 0..100 (the top bin closed), the pass rate
of every test labelled by its title, and the mean score per module.

matplotlib is a staff dependency (requirements-dev.txt); without it the charts
are skipped and the report says so. Titles may be Chinese (a class graded in
the course's language): a CJK font is used where one is installed.
"""
import os
import pathlib
import statistics
import sys

from autograder.reports import colours as colours_of
from autograder.class_reports.class_report import (CHARTS, bin_labels, distribution, module_columns,
                                                   pass_rates, summary_stats, test_title)
from autograder.reports.safe_text import visible



def _short_label(key, info):
    label = test_title(info)
    label = label[:60] + ("…" if len(label) > 60 else "")
    label = visible(label).replace("$", r"\$")  # a '$' pair would be parsed as mathtext
    return f"{label}{' (hidden)' if info['visibility'] == 'hidden' else ''}"


def _fit_left_margin(figure, labels, height_in, top_in=0.45):
    """Room for the y labels without a (slow) tight_layout: 7-pt text, ~5.5 px a character;
    ``top_in`` inches above the axes for the title (and a legend)."""
    longest = max((len(label) for label in labels), default=10)
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
        with _fonts():
            figure = _figure(2, 1)
            axes = figure.add_subplot()
            axes.barh([0], [50.0])
            axes.set_yticks([0], ["a test (hidden)"], fontsize=7)
            axes.text(51, 0, "50%", va="center", fontsize=7)
            axes.set_title("warm")
            figure.savefig(io.BytesIO(), format="png", pil_kwargs=_PNG_OPTIONS)
    except Exception:  # noqa: BLE001 - only a head start: the report draws its charts all the same
        pass


def write_charts(output_dir, rows, columns):
    """PNG charts next to report.md; returns ``{chart: path}`` or None without matplotlib."""
    return start_charts(output_dir, rows, columns).finish()


class _Pending:
    """Charts being drawn: :meth:`finish` waits and returns ``{chart: path}``
    (a chart whose drawing failed is left out), or None without matplotlib."""

    def __init__(self, output_dir, drawn=None):
        self.output_dir = output_dir
        self.drawn = drawn            # {chart: path}, or None (no matplotlib)
        self.children = {}            # chart -> pid drawing it

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


def start_charts(output_dir, rows, columns):
    """Start drawing the charts: each in a forked process of its own where there
    is fork (the three take about as long as the rest of the report together),
    else one after the other here. The caller writes the rest, then
    :meth:`_Pending.finish`."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return _Pending(output_dir)
    output_dir = pathlib.Path(output_dir)
    pending = _Pending(output_dir, {})
    for chart, draw in _DRAWERS.items():
        if hasattr(os, "fork"):
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            pid = os.fork()
            if pid == 0:
                _draw_and_exit(draw, output_dir / CHARTS[chart], rows, columns)
            pending.children[chart] = pid
        else:
            with _fonts():
                draw(output_dir / CHARTS[chart], rows, columns)
            pending.drawn[chart] = output_dir / CHARTS[chart]
    return pending


def _draw_and_exit(draw, path, rows, columns):
    """A drawing child: the chart, then ``os._exit`` (never the parent's clean-up)."""
    code = 1
    try:
        with _fonts():
            draw(path, rows, columns)
        code = 0
    except BaseException:  # noqa: B036 - reported by the exit code: the chart is left out
        pass
    finally:
        os._exit(code)


def _fonts():
    """Text falls back to an installed CJK font (Noto, WenQuanYi...) for Chinese titles.
    Glyphs are drawn without hinting: the same look at 100 dpi, and less work per
    glyph for the pass-rate chart's label per test."""
    from matplotlib import font_manager, rc_context

    names = sorted({font.name for font in font_manager.fontManager.ttflist
                    if "CJK" in font.name or "WenQuanYi" in font.name})
    settings = {"text.hinting": "no_hinting"}
    if names:
        settings.update({"font.family": ["sans-serif"], "font.sans-serif": ["DejaVu Sans"] + names[:2]})
    return rc_context(settings)


def _draw_distribution(path, rows, columns):
    edges, counts = distribution(rows)
    figure = _figure(7, 4)
    axes = figure.add_subplot()
    axes.bar(edges[:-1], counts, width=[b - a for a, b in zip(edges, edges[1:])], align="edge",
             color="#4C72B0", edgecolor="white")
    axes.set_xticks([low + 5 for low in edges[:-1]], bin_labels(edges), fontsize=8)
    stats = summary_stats(rows)
    if stats:
        axes.axvline(stats["mean"], color="#C44E52", linestyle="--", label=f"mean {stats['mean']:.1f}")
        axes.axvline(stats["median"], color="#333333", linestyle=":", label=f"median {stats['median']:g}")
        axes.legend(loc="upper center", ncols=2, fontsize=8)
    axes.set_ylim(0, max(counts + [1]) * 1.25 + 0.2)
    axes.set_xlabel("total score")
    axes.set_ylabel("students")
    axes.set_title(f"Score distribution ({len(rows)} students)")
    axes.yaxis.get_major_locator().set_params(integer=True)
    figure.subplots_adjust(left=0.1, right=0.97, top=0.9, bottom=0.14)
    _save(figure, path)


def _draw_pass_rates(path, rows, columns):
    rates = sorted(pass_rates(rows, columns), key=lambda item: (item[2] / item[3] if item[3] else 0, item[0]))
    height_in = max(3.0, 0.28 * len(rates) + 1.2)
    figure = _figure(9, height_in)
    axes = figure.add_subplot()
    labels = []
    if rates:
        labels = [_short_label(key, info) for key, info, _, _ in rates]
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
        axes.text(0.5, 0.5, "no student was graded", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlim(0, 100)
    axes.set_xlabel("students who passed (%)")
    axes.set_title("Per-test pass rates, lowest first", pad=18)
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


def _draw_modules(path, rows, columns):
    modules = module_columns(rows)
    graded = [row for row in rows if row.graded]
    figure = _figure(7, 3.5)
    axes = figure.add_subplot()
    means = []
    for module in modules:
        fractions = [row.modules[module][0] / row.modules[module][1] for row in graded
                     if module in row.modules and row.modules[module][1]]
        means.append(100.0 * statistics.fmean(fractions) if fractions else 0.0)
    axes.bar(modules, means, color=[colours_of.colour(m) for m in modules])
    axes.set_ylim(0, 100)
    axes.set_ylabel("mean score (% of the module)")
    axes.set_title("Mean score per module")
    figure.subplots_adjust(left=0.11, right=0.97, top=0.88, bottom=0.12)
    _save(figure, path)


# the longest first: it starts drawing first
_DRAWERS = {"pass_rates": _draw_pass_rates, "distribution": _draw_distribution, "modules": _draw_modules}
