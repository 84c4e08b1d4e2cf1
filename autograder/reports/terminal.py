"""What a student or TA reads in the terminal (and in the Actions log).

Three levels: ``quiet`` (module totals and the total), ``compact`` (the
default: one line per module with the first thing to fix, then only the
failed tests) and ``verbose`` (every test). Tables are laid out by rich, which
counts a CJK character as two columns, so Chinese feedback lines up.

``watch`` redraws its screen in place (:func:`draw_watch`) with what changed
since the last grade (:func:`change_lines`).

Feedback, flags, notes and names may hold student text: each piece goes
through :mod:`autograder.reports.safe_text` and reaches rich as plain
``Text`` (never markup), so nothing printed here can act as a workflow command
or a terminal control sequence.
"""
import collections
import io
import shutil
import sys

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from autograder import active_assignment, locations
from autograder.i18n import _
from autograder.i18n import text as t
from autograder.reports import isolation_view, safe_text, wrap
from autograder.reports.tidy import tidy

OUTPUT_LINES = 10
MIN_WIDTH = 40      # narrower terminals get lines of this width (and wrap them themselves)
FEEDBACK_INDENT = "      "
TEST_LINE_HANG = "    "   # a wrapped test line continues less indented than its feedback
_GAP = 3            # cells between two columns of the table (padding, rule, padding)
NARROW_DIAGNOSIS = 40  # below this many cells the diagnosis goes under the table, not beside it
HOME, ERASE_LINE, ERASE_BELOW = "\x1b[H", "\x1b[K", "\x1b[J"
CHANGE_LINES = 2  # what the fixed (or newly failing) tests may take on watch's screen


def _points(value):
    return f"{value:g}"


def terminal_width(width=None):
    """The width to lay out for: ``width`` if given, else what rich finds for
    standard output (the terminal's size; ``COLUMNS`` when set; 80 in a pipe)."""
    if width is None:
        width = Console().width
    return max(int(width), MIN_WIDTH)


def isolation_lines(isolation, lang="en", audience="staff"):
    """What confined the code. ``audience``: "staff" (someone else's code: a loud
    warning and the sandbox's own reasons) or "student" (a local grade of one's own
    work: what it means for them, in their language)."""
    if isolation_view.unconfined(isolation) and audience == "student":
        return [isolation_view.UNCONFINED_FOR_STUDENTS.render(lang)]
    if isolation_view.unconfined(isolation):
        lines = ["!!! " + t("WARNING", lang) + ": " + isolation_view.UNCONFINED_WARNING.render(lang)]
        lines += [f"!!!   - {safe_text.terminal_line(problem)}" for problem in isolation_view.problems(isolation)]
        return lines
    if isolation_view.as_dict(isolation).get("confined") is True:
        return [isolation_view.confined_line(isolation, lang)]
    return []


def feedback_lines(output, max_lines=OUTPUT_LINES):
    """The feedback's lines, escaped; when cut, the last line (usually the error itself) is kept."""
    lines = safe_text.terminal_lines(output, None, limit=500)
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines - 2] + ["…"] + lines[-1:]
    return lines


def _to_text(table, width):
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False, no_color=True,
            highlight=False, emoji=False, markup=False, soft_wrap=False).print(table)
    return [line.rstrip() for line in buffer.getvalue().splitlines()]


def preload():
    """Lay out one CJK table now: rich loads its character-width data lazily."""
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column(Text("模块"))
    table.add_row(Text("模块"))
    _to_text(table, 80)


def score_cells(pairs):
    """"score / maximum" for each pair, padded so that every "/" sits in the same column."""
    scores = [_points(score) for score, _maximum in pairs]
    maxima = [_points(maximum) for _score, maximum in pairs]
    left, right = max(map(len, scores), default=1), max(map(len, maxima), default=1)
    return [f"{score:>{left}} / {maximum:<{right}}" for score, maximum in zip(scores, maxima)]


def _module_rows(report, lang, with_diagnosis):
    """[(module, score text, not-run text, diagnosis text)], the total row last."""
    modules = report.by_module()
    not_run = report.hidden_not_run if isinstance(report.hidden_not_run, dict) else {}
    pairs = list(modules.values()) + [(report.score, report.max_score)]
    scores = score_cells(pairs)
    visible = " " + t("visible", lang) if not_run else ""
    diagnosis = report.diagnosis if isinstance(report.diagnosis, dict) else {}
    not_graded = report.not_graded()
    rows = []
    for (module, (score, maximum)), score_text in zip(modules.items(), scores):
        missing = not_run.get(module, 0)
        entry = diagnosis.get(module) if with_diagnosis else None
        if entry:
            fix = safe_text.terminal_line(entry.get("message", ""), limit=300)
        elif not_graded.get(module):  # never a ✓ for what the grader failed to check
            fix = t("{points} points not graded: the grader failed (tell the course staff)", lang,
                    points=_points(not_graded[module]))
        elif maximum and score >= maximum and not missing:
            fix = "✓"
        elif maximum and score >= maximum:
            fix = t("every visible test passes; the hidden tests are not run here", lang)
        else:
            fix = ""
        rows.append((safe_text.terminal_line(module, limit=40), score_text + (visible if missing else ""),
                     t("{points} hidden points", lang, points=_points(missing)) if missing else "", fix))
    total_missing = sum(not_run.values())
    rows.append((t("TOTAL", lang), scores[-1] + (visible if total_missing else ""),
                 t("{points} hidden points", lang, points=_points(total_missing)) if total_missing else "", ""))
    return rows


def module_table(report, lang="en", with_diagnosis=True, width=None, height=None):
    """The per-module table. The diagnosis is its last column where the line
    leaves it room (``NARROW_DIAGNOSIS`` cells or more), else a list under it,
    each module's cut to its share of ``height`` lines (a screen) if given."""
    width = terminal_width(width)
    rows = _module_rows(report, lang, with_diagnosis)
    headers = [_("Module").render(lang), _("Score").render(lang)]
    keep = [0, 1]
    if any(row[2] for row in rows):
        headers.append(_("Not run here").render(lang))
        keep.append(2)
    cells = [[row[index] for index in keep] for row in rows]
    widths = [max(cell_len(text) for text in [header] + [row[column] for row in cells])
              for column, header in enumerate(headers)]
    fixed = sum(widths) + _GAP * len(widths)
    beside = with_diagnosis and width - fixed >= NARROW_DIAGNOSIS
    if beside:  # the last column takes what is left of the line and wraps inside it
        header = _("First thing to fix").render(lang)
        headers.append(header)
        widths.append(max(min(max(cell_len(row[3]) for row in rows + [("", "", "", header)]), width - fixed), 1))
        fixes = sum(1 for row in rows if row[3])
        # on a screen (``height``) each diagnosis gets its share of the lines the table leaves
        most = max((height - len(rows) - 2 - (len(rows) - fixes)) // max(fixes, 1), 2) if height else None
        for cell_row, row in zip(cells, rows):
            cell_row.append("\n".join(_at_most(wrap.wrap(row[3], widths[-1]), most, widths[-1])))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    for column, header in enumerate(headers):
        table.add_column(Text(header), justify="left", overflow="fold",
                         width=widths[column])
    for row in cells:
        table.add_row(*(Text(text) for text in row))
    lines = _to_text(table, max(width, sum(widths) + _GAP * (len(widths) - 1)))
    if with_diagnosis and not beside and any(row[3] for row in rows):
        lines += ["", t("First thing to fix, per module:", lang)]
        fixes = [(module, fix) for module, _score, _missing, fix in rows if fix]
        # on a screen (``height``) the list shares what is left under the table
        most = max((height - len(lines)) // len(fixes), 2) if height else None
        for module, fix in fixes:
            lines += _at_most(wrap.wrap_hanging(t("{module}: {fix}", lang, module=module, fix=fix), width, "  "),
                              most, width)
    return lines


def _at_most(lines, most, width):
    """The first ``most`` of ``lines`` (all if None), the last one ending in "…" if cut."""
    if not most or len(lines) <= most:
        return lines
    return lines[:most - 1] + [cut(lines[most - 1], width - 2) + " …"]


def cut(line, width):
    """``line`` cut to ``width`` cells where it may break (never inside a word or number)."""
    return wrap.wrap(line, width)[0] if cell_len(line) > width else line


def _test_line(test, lang):
    mark = t("PASS", lang) if test.passed else t("NOT GRADED", lang) if test.fault else t("FAIL", lang)
    tag = "" if test.visibility == "visible" else " " + t("(hidden)", lang)
    return (f"{mark}  {safe_text.terminal_line(test.name, limit=300)}  "
            f"{_points(test.score)}/{_points(test.max_score)}{tag}")


def _test_blocks(tests, lang, max_lines, width, group=False):
    """Each test and its feedback, one list of lines per test. With ``group``, a
    failed test whose feedback is the same as an earlier one's in its module (e.g.
    every test of a TODO not written yet) is only counted, under the first."""
    repeats = collections.Counter((test.module, test.output) for test in tests if not test.passed and test.output)
    blocks, shown = [], set()
    for test in tests:
        key = (test.module, test.output)
        if group and key in shown:
            continue
        lines = wrap.wrap(_test_line(test, lang), width, hang=TEST_LINE_HANG)
        if not test.passed and test.output:
            for line in feedback_lines(test.output, max_lines):
                lines += wrap.wrap_hanging(line, width, FEEDBACK_INDENT)
            if group:
                shown.add(key)
                if repeats[key] > 1:
                    lines += wrap.wrap_hanging(t("(the same feedback for {count} more failed test(s) of {module}; "
                                                 "--verbose lists them)", lang, count=repeats[key] - 1,
                                                 module=test.module), width, FEEDBACK_INDENT)
        blocks.append(lines)
    return blocks


def _size(count):
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count / 1024:.1f} KiB" if count >= 1024 \
        else f"{count} B"


def printed_lines(report, lang, verbose, width):
    """What the student's code printed: with ``verbose``, each module's first lines
    (escaped, as received); else one line per module saying how much."""
    lines = []
    for module, entry in report.printed.items():  # tidy: every entry well-formed
        module = safe_text.terminal_line(module, limit=40)
        size = _size(entry["bytes"])
        if not verbose:
            lines += wrap.wrap(t("{module} printed {size} while it was graded (--verbose shows the first lines).",
                                 lang, module=module, size=size), width)
            continue
        lines += wrap.wrap(t("{module} printed {size} while it was graded; the first lines:", lang,
                             module=module, size=size), width)
        for line in safe_text.terminal_lines(entry["head"], None, limit=300):
            lines += wrap.wrap_hanging(line, width, "  | ")
        if entry["more"]:
            lines.append("  | …")
    return lines


def _footer(report, lang):
    visible_passed, visible_total = report.count("visible")
    hidden_passed, hidden_total = report.count("hidden")
    seed = safe_text.terminal_line(report.seed)
    if not hidden_total:  # a note of the grade says why no hidden test ran
        return t("Visible tests ({folder}) passed {visible_passed}/{visible_total}; seed {seed}.",
                 lang, folder=_visible_folder(), visible_passed=visible_passed, visible_total=visible_total, seed=seed)
    return t("Visible tests ({folder}) passed {visible_passed}/{visible_total}; hidden tests "
             "passed {hidden_passed}/{hidden_total}; seed {seed}.", lang, folder=_visible_folder(),
             visible_passed=visible_passed, visible_total=visible_total, hidden_passed=hidden_passed,
             hidden_total=hidden_total, seed=seed)


def _visible_folder():
    """Where the visible suites are, as a student finds them from the repository's root."""
    folder = active_assignment.current().visible_dir
    try:
        return folder.relative_to(locations.REPO_ROOT).as_posix() + "/"
    except ValueError:
        return str(folder)


def render(report, mode="compact", lang=None, show_output=None, width=None, height=None, audience="staff"):
    """The report as text, no line wider than ``width`` (default: the terminal's).
    ``height`` (compact mode, ``watch``'s screen): at most that many lines where the
    table, the diagnosis and the footer fit; the failed tests fill what is left.
    ``audience``: "student" for a student's grade of their own work (see :func:`isolation_lines`).
    ``show_output=False`` is the old spelling of ``mode='quiet'``."""
    if show_output is False:
        mode = "quiet"
    report = tidy(report)
    lang = lang or getattr(report, "lang", None) or "en"
    width = terminal_width(width)
    lines = module_table(report, lang, with_diagnosis=mode != "quiet", width=width,
                         height=height if mode == "compact" else None)
    if mode == "quiet":
        return "\n".join(lines)
    failed = [test for test in report.tests if not test.passed]
    diagnosed = {entry.get("test") for entry in (report.diagnosis or {}).values() if isinstance(entry, dict)}
    failed.sort(key=lambda test: test.name not in diagnosed)  # stable: each module's diagnosed test first
    blocks = []
    if mode == "verbose":
        blocks = [["", t("Every test:", lang)]] + _test_blocks(report.tests, lang, None, width)
    elif failed:
        blocks = [[""] + wrap.wrap(t("Failed tests ({count}); each module's first thing to fix is listed first:",
                                     lang, count=len(failed)), width)]
        blocks += _test_blocks(failed, lang, OUTPUT_LINES, width, group=True)
    printed = printed_lines(report, lang, mode == "verbose", width)
    tail = ["", _footer(report, lang)]
    if mode != "verbose" and len(report.tests) > len(failed) and height is None:
        tail.append(t("Passed tests are not listed: --verbose shows every test.", lang))
    tail += isolation_lines(report.isolation, lang, audience)
    tail += [safe_text.terminal_line(note) for note in report.notes]
    warning = t("WARNING", lang)
    flags = [f"{warning}: {safe_text.terminal_line(flag)}" for flag in report.flags]
    if height is not None and mode == "compact":  # on a screen, what the table says already goes first
        tail = _within(lines, tail, flags, printed, height, width)
    else:
        tail = ([""] + printed if printed else []) + _wrapped(tail + flags, width)
    if height is not None and mode == "compact":
        blocks = _fitting(blocks, height - len(lines) - len(tail), len(failed), lang, width)
    return "\n".join(lines + [line for block in blocks for line in block] + tail)


def _wrapped(lines, width):
    return [piece for line in lines for piece in (wrap.wrap(line, width) if line else [""])]


def _within(head, tail, flags, printed, height, width):
    """The footer on a screen of ``height`` lines under ``head``: the flags always, the
    rest (the counts, the sandbox line, the notes, what was printed) while it fits."""
    flags = _wrapped(flags, width)
    optional = [""] + (printed + [""] if printed else []) + _wrapped(tail[1:], width)
    while optional and len(head) + len(optional) + len(flags) > height:
        optional.pop()
    return optional + flags if optional != [""] else flags


def _fitting(blocks, room, failed, lang, width):
    """As many of ``blocks`` (a heading, then one per failed test) as fit in ``room``
    lines, then a line saying where the others are."""
    if sum(map(len, blocks)) <= room:
        return blocks
    note = wrap.wrap(t("({count} failed test(s) in all, not every one fits here: `python -m autograder grade` "
                       "lists them)", lang, count=failed), width)
    kept, used = [], 0
    for block in blocks:
        if used + len(block) > room - len(note):
            break
        kept.append(block)
        used += len(block)
    if len(kept) < 2:  # no test fits, its heading alone says nothing
        return [[""] + note] if room > len(note) else []
    return kept + [note]


# -- watch's screen ---------------------------------------------------------------------------
def changes(previous, report):
    """(fixed, newly failing): names of the tests whose outcome turned, in report order."""
    before = {(test.module, test.name): test.passed for test in previous.tests}
    fixed, broken = [], []
    for test in report.tests:
        was = before.get((test.module, test.name))
        if was is False and test.passed:
            fixed.append(test.name)
        elif was is True and not test.passed:
            broken.append(test.name)
    return fixed, broken


def change_lines(previous, report, lang, width=80):
    """What changed since ``previous``: per kind one list of names, wrapped to ``width``
    and cut to CHANGE_LINES lines."""
    if previous is None:
        return []
    fixed, broken = changes(previous, report)
    if not fixed and not broken:
        return [t("No test changed since the last grade.", lang)]
    def names_of(names):
        return "; ".join(safe_text.terminal_line(name, limit=300) for name in names)

    lines = []
    for text in (t("Fixed since the last grade ({count}): {names}", lang, count=len(fixed), names=names_of(fixed))
                 if fixed else None,
                 t("Newly failing since the last grade ({count}): {names}", lang, count=len(broken),
                   names=names_of(broken)) if broken else None):
        if text:
            wrapped = wrap.wrap(text, width, hang="  ")
            if len(wrapped) > CHANGE_LINES:
                wrapped = wrapped[:CHANGE_LINES - 1] + [cut(wrapped[CHANGE_LINES - 1], width - 2) + " …"]
            lines += wrapped
    return lines


def draw_watch(report, status, mode, lang, audience):
    """The report and ``status`` (lines): in a terminal, redrawn in place to fit its
    screen (its last line left for the running test); elsewhere printed whole."""
    columns, rows = shutil.get_terminal_size((80, 24))
    status = [piece for line in status for piece in wrap.wrap(line, terminal_width(columns))]
    if not sys.stdout.isatty():
        safe_text.print_report(render(report, mode=mode, lang=lang, audience=audience) + "\n" + "\n".join(status))
        return
    text = render(report, mode=mode, lang=lang, width=columns, audience=audience,
                  height=max(rows - 1 - len(status), 8) if mode == "compact" else None)
    lines = safe_text.terminal_block("\n".join([text] + status)).split("\n")
    sys.stdout.write(HOME + "".join(line + ERASE_LINE + "\n" for line in lines) + ERASE_BELOW)
    sys.stdout.flush()
