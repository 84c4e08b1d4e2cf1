"""What a student or TA reads in the terminal (and in the Actions log).

Three levels: ``quiet`` (module totals and the total), ``compact`` (the
default: one line per module with the first thing to fix, then only the
failed tests) and ``verbose`` (every test). Tables are laid out by rich, which
counts a CJK character as two columns, so Chinese feedback lines up.

Feedback, flags, notes and names may hold student text: each piece goes
through :mod:`autograder.reports.safe_text` and reaches rich as plain
``Text`` (never markup), so nothing printed here can act as a workflow command
or a terminal control sequence.
"""
import collections
import io

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from autograder.i18n import _
from autograder.i18n import text as t
from autograder.reports import isolation_view, safe_text
from autograder.reports.tidy import tidy

OUTPUT_LINES = 10
WIDTH = 110


def _points(value):
    return f"{value:g}"


def isolation_lines(isolation, lang="en"):
    if isolation_view.unconfined(isolation):
        lines = ["!!! " + t("WARNING", lang) + ": " + isolation_view.UNCONFINED_WARNING.render(lang)]
        lines += [f"!!!   - {safe_text.terminal_line(problem)}" for problem in isolation_view.problems(isolation)]
        return lines
    if isolation_view.as_dict(isolation).get("confined") is True:
        return [t("Sandbox: your code ran confined (details in results.json, extra_data.isolation).", lang)]
    return []


def feedback_lines(output, max_lines=OUTPUT_LINES):
    """The feedback's lines, escaped; when cut, the last line (usually the error itself) is kept."""
    lines = safe_text.terminal_lines(output, None, limit=500)
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines - 2] + ["…"] + lines[-1:]
    return lines


def _table(lang, columns):
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    for header, justify in columns:
        table.add_column(Text(header.render(lang)), justify=justify, overflow="fold")
    return table


def _to_text(table):
    buffer = io.StringIO()
    Console(file=buffer, width=WIDTH, color_system=None, force_terminal=False, no_color=True,
            highlight=False, emoji=False, markup=False, soft_wrap=False).print(table)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def preload():
    """Lay out one CJK table now: rich loads its character-width data lazily."""
    table = _table("zh", [(_("Module"), "left")])
    table.add_row(Text("模块"))
    _to_text(table)


def module_table(report, lang="en", with_diagnosis=True):
    columns = [(_("Module"), "left"), (_("Score"), "right")]
    if with_diagnosis:
        columns.append((_("First thing to fix"), "left"))
    table = _table(lang, columns)
    for module, (score, maximum) in report.by_module().items():
        row = [Text(safe_text.terminal_line(module, limit=40)), Text(f"{_points(score)} / {_points(maximum)}")]
        if with_diagnosis:
            entry = report.diagnosis.get(module) if isinstance(report.diagnosis, dict) else None
            if entry:
                row.append(Text(safe_text.terminal_line(entry.get("message", ""), limit=300)))
            else:
                row.append(Text("✓" if maximum and score >= maximum else ""))
        table.add_row(*row)
    total = [Text(t("TOTAL", lang)), Text(f"{_points(report.score)} / {_points(report.max_score)}")]
    table.add_row(*(total + ([Text("")] if with_diagnosis else [])), style=None)
    return _to_text(table)


def _test_line(test, lang):
    mark = t("PASS", lang) if test.passed else t("FAIL", lang)
    tag = "" if test.visibility == "visible" else " " + t("(hidden)", lang)
    return (f"{mark}  {safe_text.terminal_line(test.name, limit=300)}  "
            f"{_points(test.score)}/{_points(test.max_score)}{tag}")


def _test_blocks(tests, lang, max_lines, group=False):
    """Each test and its feedback. With ``group``, a failed test whose feedback is
    the same as an earlier one's in its module (e.g. every test of a TODO not
    written yet) is only counted, under the first."""
    repeats = collections.Counter((test.module, test.output) for test in tests if not test.passed and test.output)
    lines, shown = [], set()
    for test in tests:
        key = (test.module, test.output)
        if group and key in shown:
            continue
        lines.append(_test_line(test, lang))
        if not test.passed and test.output:
            lines += ["      " + line for line in feedback_lines(test.output, max_lines)]
            if group:
                shown.add(key)
                if repeats[key] > 1:
                    lines.append("      " + t("(the same feedback for {count} more failed test(s) of {module}; "
                                              "--verbose lists them)", lang, count=repeats[key] - 1, module=test.module))
    return lines


def render(report, mode="compact", lang=None, show_output=None):
    """The report as text. ``show_output=False`` is the old spelling of ``mode='quiet'``."""
    if show_output is False:
        mode = "quiet"
    report = tidy(report)
    lang = lang or getattr(report, "lang", None) or "en"
    lines = module_table(report, lang, with_diagnosis=mode != "quiet")
    if mode == "quiet":
        return "\n".join(lines)
    failed = [test for test in report.tests if not test.passed]
    diagnosed = {entry.get("test") for entry in (report.diagnosis or {}).values() if isinstance(entry, dict)}
    failed.sort(key=lambda test: test.name not in diagnosed)  # stable: each module's diagnosed test first
    if mode == "verbose":
        lines += ["", t("Every test:", lang)] + _test_blocks(report.tests, lang, max_lines=None)
    elif failed:
        lines += ["", t("Failed tests ({count}), the first thing to fix first:", lang, count=len(failed))]
        lines += _test_blocks(failed, lang, max_lines=OUTPUT_LINES, group=True)
    visible_passed, visible_total = report.count("visible")
    hidden_passed, hidden_total = report.count("hidden")
    lines += ["", t("Visible tests (autograder/visible/) passed {visible_passed}/{visible_total}; hidden tests "
                    "passed {hidden_passed}/{hidden_total}; seed {seed}.", lang, visible_passed=visible_passed,
                    visible_total=visible_total, hidden_passed=hidden_passed, hidden_total=hidden_total,
                    seed=safe_text.terminal_line(report.seed))]
    if mode != "verbose" and len(report.tests) > len(failed):
        lines.append(t("Passed tests are not listed: --verbose shows every test.", lang))
    lines += isolation_lines(report.isolation, lang)
    lines += [safe_text.terminal_line(note) for note in report.notes]
    warning = t("WARNING", lang)
    lines += [f"{warning}: {safe_text.terminal_line(flag)}" for flag in report.flags]
    return "\n".join(lines)
