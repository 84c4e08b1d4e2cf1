"""The class view of a ``grade-many`` output folder: ``scores.csv``, ``report.md``
and PNG charts.

Everything here is rebuilt from ``DIR/run.json`` and each ``DIR/<student>/results.json``
(the files a single ``grade`` writes), so a full run, a re-grade of one student
and a merge of shards all produce their report the same way. Every field of a
results file is read defensively (it may come from an older grader), and text
cells that a student controls cannot hold a spreadsheet formula. The Markdown
lives in :mod:`autograder.reports.class_markdown`.
"""
import csv
import io
import json
import math
import pathlib
import re
import statistics

from autograder import MODULES, safe_files
from autograder.reports.safe_text import as_text, csv_cell, visible
from autograder.reports.tidy import UNKNOWN_MODULE, number, text_list

CSV_NAME = "scores.csv"
REPORT_NAME = "report.md"
CHARTS = {
    "distribution": "score_distribution.png",
    "pass_rates": "test_pass_rates.png",
    "modules": "module_scores.png",
}
OPTIONAL_MODULE = "gpu_lab"
MAX_RESULTS_BYTES = 16 * 1024 * 1024
STATUS_ORDER = ("ok", "crashed", "timed out", "no submission", "no commit before deadline")
# With --deadline: which commit was graded (extra_data.submission_commit), before seed/flags/reason.
COMMIT_COLUMNS = ("commit", "committed_at", "pushed_at", "later_commits", "latest_commit", "latest_total")


def _number(value):
    value = float(value)
    return int(value) if value.is_integer() else round(value, 4)


def fmt_number(value):
    return f"{_number(value):g}" if isinstance(value, (int, float)) else str(value)


def module_of(test):
    """The module tag of a results.json test, as a string (``?`` when absent or odd)."""
    tags = test.get("tags")
    module = tags[0] if isinstance(tags, list) and tags else None
    return module if isinstance(module, str) and module else UNKNOWN_MODULE


def _dict(value):
    return value if isinstance(value, dict) else {}


def _visibility(test):
    return test.get("visibility") if test.get("visibility") in ("visible", "hidden") else "hidden"


class Row:
    """One student: the manifest entry and the parsed results.json (or None)."""

    def __init__(self, student, entry, data):
        self.student = student
        self.entry = entry
        self.status = entry.get("status", "ok")
        self.reason = entry.get("reason", "")
        self.data = _dict(data)
        tests = self.data.get("tests")
        self.tests = [t for t in tests if isinstance(t, dict)] if isinstance(tests, list) else []
        self.total = number(self.data.get("score"))
        self.max_score = number(self.data.get("max_score"))
        extra = _dict(self.data.get("extra_data"))
        self.flags = text_list(extra.get("flags"))
        self.seed = extra.get("seed", entry.get("seed"))
        self.isolation = _dict(extra.get("isolation"))
        self.lab = _dict(extra.get("lab"))
        # The graded commit: the results file's record, else run.json's (a zero
        # report of an older grader may lack it).
        self.commit = _dict(extra.get("submission_commit")) or _dict(entry.get("submission_commit"))
        modules = {}
        for test in self.tests:
            module = module_of(test)
            score, maximum = modules.get(module, (0.0, 0.0))
            modules[module] = (score + number(test.get("score")), maximum + number(test.get("max_score")))
        self.modules = modules

    @property
    def graded(self):
        return self.status == "ok"


def load_rows(output_dir, manifest):
    rows = []
    for student in sorted(manifest.get("students", {})):
        entry = manifest["students"][student]
        path = pathlib.Path(output_dir) / student / "results.json"
        try:
            data = json.loads(safe_files.read_text(str(path), MAX_RESULTS_BYTES))
        except (OSError, ValueError, RecursionError):
            data = None
            if entry.get("status", "ok") == "ok":
                entry = dict(entry, status="crashed", reason=f"{student}/results.json is missing or unreadable")
        rows.append(Row(student, entry, data))
    return rows


def _test_key(test):
    module = module_of(test)
    ident = as_text(test.get("test_id")) or re.sub(r"[^A-Za-z0-9]+", "_", as_text(test.get("name"))).strip("_")
    return f"{module}/{ident}"


def test_columns(rows):
    """``[(key, info)]`` for every graded test, in the grader's order; info has
    ``name``, ``module``, ``visibility``, ``max_score``. Grader pseudo-tests
    (module ``grader``) are statuses, not tests, and get no column."""
    columns, seen = [], {}
    for row in rows:
        if not row.graded:
            continue
        for test in row.tests:
            module = module_of(test)
            if module == "grader":
                continue
            key = _test_key(test)
            visibility = _visibility(test)
            existing = seen.get(key)
            if existing is not None and existing["visibility"] != visibility:
                key = f"{key}@{visibility}"
                existing = seen.get(key)
            if existing is None:
                info = {"name": as_text(test.get("name", key)), "module": module, "visibility": visibility,
                        "max_score": number(test.get("max_score"))}
                seen[key] = info
                columns.append((key, info))
    order = list(MODULES) + [OPTIONAL_MODULE]
    columns.sort(key=lambda item: order.index(item[1]["module"]) if item[1]["module"] in order else len(order))
    return columns


def _row_tests(row, columns):
    """key -> test dict for one student (same keying as :func:`test_columns`)."""
    keys = {key for key, _ in columns}
    found = {}
    for test in row.tests:
        key = _test_key(test)
        if key in found or (key not in keys and f"{key}@{_visibility(test)}" in keys):
            key = f"{key}@{_visibility(test)}"
        found[key] = test
    return found


def module_columns(rows):
    modules = list(MODULES)
    if any(OPTIONAL_MODULE in row.modules for row in rows):
        modules.append(OPTIONAL_MODULE)
    return modules


# -- CSV ---------------------------------------------------------------------------------------
def commit_cells(row):
    """The COMMIT_COLUMNS of one row, as text ('' where a fact does not apply)."""
    commit = row.commit
    latest = _dict(commit.get("latest"))
    later = commit.get("later_commits")
    total = latest.get("score")
    return [as_text(commit.get("sha")), as_text(commit.get("committed_at")), as_text(commit.get("pushed_at")),
            str(later) if isinstance(later, int) and not isinstance(later, bool) else "",
            as_text(latest.get("sha")), fmt_number(total) if isinstance(total, (int, float)) else ""]


def render_csv(rows, columns):
    modules = module_columns(rows)
    with_commits = any(row.commit for row in rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student", "status", "total", "max_score"] + modules + [key for key, _ in columns]
                    + (list(COMMIT_COLUMNS) if with_commits else []) + ["seed", "flags", "reason"])
    for row in rows:
        cells = [csv_cell(row.student), csv_cell(row.status), fmt_number(row.total), fmt_number(row.max_score)]
        for module in modules:
            if module in row.modules:
                cells.append(fmt_number(row.modules[module][0]))
            else:
                cells.append("" if module == OPTIONAL_MODULE else "0")
        tests = _row_tests(row, columns)
        cells += [fmt_number(tests[key].get("score", 0)) if key in tests else "" for key, _ in columns]
        if with_commits:
            cells += [csv_cell(cell) for cell in commit_cells(row)]
        cells += [csv_cell(row.seed if row.seed is not None else ""), csv_cell("; ".join(row.flags)),
                  csv_cell(row.reason)]
        writer.writerow(cells)
    return out.getvalue()


# -- statistics --------------------------------------------------------------------------------
def pass_rates(rows, columns):
    """``[(key, info, passed, graded)]`` over the students whose grading completed."""
    graded = [row for row in rows if row.graded]
    table = []
    for key, info in columns:
        passed = sum(1 for row in graded
                     if _row_tests(row, columns).get(key, {}).get("status") == "passed")
        table.append((key, info, passed, len(graded)))
    return table


def _bins(max_score):
    """Bin edges of whole points, about 20 bins; the top score gets a bin of its own kind."""
    top = max(1.0, float(max_score))
    width = max(1, math.ceil(top / 20))
    last = int(top // width) * width
    return list(range(0, last + width + 1, width))


def distribution(rows):
    """``(edges, counts)``: bin i holds edges[i] <= total < edges[i + 1]."""
    totals = [row.total for row in rows]
    top = max([row.max_score for row in rows if row.graded] + totals + [1.0])
    edges = _bins(top)
    width = edges[1] - edges[0]
    counts = [0] * (len(edges) - 1)
    for total in totals:
        counts[min(len(counts) - 1, max(0, int(total // width)))] += 1
    return edges, counts


def bin_label(low, high):
    return f"{low:g}" if high - low == 1 else f"{low:g} to <{high:g}"


def summary_stats(rows):
    totals = [row.total for row in rows]
    if not totals:
        return {}
    core_max = max([sum(x for m, (_, x) in row.modules.items() if m != OPTIONAL_MODULE)
                    for row in rows if row.graded] or [0.0])
    return {"students": len(totals), "mean": statistics.fmean(totals), "median": statistics.median(totals),
            "stdev": statistics.pstdev(totals) if len(totals) > 1 else 0.0,
            "min": min(totals), "max": max(totals), "core_max": core_max,
            "full": sum(1 for row in rows if row.graded and core_max and row.total >= core_max),
            "zero": sum(1 for total in totals if total == 0)}


# -- charts ------------------------------------------------------------------------------------
_MODULE_COLOURS = {"amp_update": "#4C72B0", "loss_scaler": "#DD8452", "amp_training_step": "#55A868",
                   "gpu_lab": "#8172B3"}


def _short_label(key, info):
    module, _, test = key.partition("/")
    label = test[5:] if test.startswith("test_") else test
    label = label[:52] + ("…" if len(label) > 52 else "")
    label = visible(label).replace("$", r"\$")  # a '$' pair would be parsed as mathtext
    return f"{label}{' (hidden)' if info['visibility'] == 'hidden' else ''}"


def _fit_left_margin(figure, labels, height_in):
    """Room for the y labels without a (slow) tight_layout: 7-pt text, ~5.5 px a character."""
    longest = max((len(label) for label in labels), default=10)
    left = min(0.6, (longest * 5.5 + 24) / (figure.get_figwidth() * figure.dpi))
    figure.subplots_adjust(left=left, right=0.95, top=1 - 0.45 / height_in, bottom=0.5 / height_in)


def _figure(width, height):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def write_charts(output_dir, rows, columns):
    """PNG charts next to report.md; returns ``{chart: path}`` or None without matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    output_dir = pathlib.Path(output_dir)
    written = {}

    edges, counts = distribution(rows)
    figure = _figure(7, 4)
    axes = figure.add_subplot()
    axes.bar(edges[:-1], counts, width=[b - a for a, b in zip(edges, edges[1:])], align="edge",
             color="#4C72B0", edgecolor="white")
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
    written["distribution"] = output_dir / CHARTS["distribution"]
    figure.savefig(written["distribution"])

    rates = sorted(pass_rates(rows, columns), key=lambda item: (item[2] / item[3] if item[3] else 0, item[0]))
    height_in = max(3.0, 0.28 * len(rates) + 1.2)
    figure = _figure(9, height_in)
    axes = figure.add_subplot()
    if rates:
        labels = [_short_label(key, info) for key, info, _, _ in rates]
        values = [100.0 * passed / graded if graded else 0.0 for _, _, passed, graded in rates]
        colours = [_MODULE_COLOURS.get(info["module"], "#777777") for _, info, _, _ in rates]
        bars = axes.barh(range(len(rates)), values, color=colours)
        for bar, value in zip(bars, values):
            axes.text(min(value + 1, 92), bar.get_y() + bar.get_height() / 2, f"{value:.0f}%",
                      va="center", fontsize=7)
        axes.set_yticks(range(len(rates)), labels, fontsize=7)
        axes.invert_yaxis()
        axes.margins(y=0.01)
        from matplotlib.patches import Patch
        shown = list(dict.fromkeys(info["module"] for _, info, _, _ in rates))
        axes.legend(handles=[Patch(color=_MODULE_COLOURS.get(m, "#777777"), label=m) for m in shown],
                    loc="upper right", fontsize=7)
    else:
        axes.text(0.5, 0.5, "no student was graded", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlim(0, 100)
    axes.set_xlabel("students who passed (%)")
    axes.set_title("Per-test pass rates, lowest first")
    _fit_left_margin(figure, labels if rates else [], height_in)
    written["pass_rates"] = output_dir / CHARTS["pass_rates"]
    figure.savefig(written["pass_rates"])

    modules = module_columns(rows)
    graded = [row for row in rows if row.graded]
    figure = _figure(7, 3.5)
    axes = figure.add_subplot()
    means = []
    for module in modules:
        fractions = [row.modules[module][0] / row.modules[module][1] for row in graded
                     if module in row.modules and row.modules[module][1]]
        means.append(100.0 * statistics.fmean(fractions) if fractions else 0.0)
    axes.bar(modules, means, color=[_MODULE_COLOURS.get(m, "#777777") for m in modules])
    axes.set_ylim(0, 100)
    axes.set_ylabel("mean score (% of the module)")
    axes.set_title("Mean score per module")
    figure.subplots_adjust(left=0.11, right=0.97, top=0.88, bottom=0.12)
    written["modules"] = output_dir / CHARTS["modules"]
    figure.savefig(written["modules"])
    return written


def write_all(output_dir, manifest):
    """Write scores.csv, report.md and the charts; return the paths written."""
    from autograder import similarity
    from autograder.reports.class_markdown import render_markdown

    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    rows = load_rows(output_dir, manifest)
    columns = test_columns(rows)
    csv_path = output_dir / CSV_NAME
    csv_path.write_text(render_csv(rows, columns), encoding="utf-8")
    charts = write_charts(output_dir, rows, columns)
    report_path = output_dir / REPORT_NAME
    report_path.write_text(render_markdown(rows, columns, manifest, charts, similarity.load_result(output_dir)),
                           encoding="utf-8")
    return [csv_path, report_path] + (list(charts.values()) if charts else [])
