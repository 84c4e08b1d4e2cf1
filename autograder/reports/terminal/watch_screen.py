"""``watch``'s screen: redrawn in place to fit the terminal, with what changed
since the last grade."""
import shutil
import sys

from autograder.i18n import text as t
from autograder.reports import safe_text, wrap
from autograder.reports.terminal import layout, styles
from autograder.reports.terminal.fixes import cut

HOME, ERASE_LINE, ERASE_BELOW = "\x1b[H", "\x1b[K", "\x1b[J"
CHANGE_LINES = 2  # what the fixed (or newly failing) tests may take on watch's screen


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
    width = layout.terminal_width(columns)
    status = styles.lines(piece for line in status for piece in wrap.wrap(line, width))
    if not sys.stdout.isatty():
        styles.write(layout.report_lines(report, mode=mode, lang=lang, width=layout.terminal_width(),
                                         audience=audience) + status)
        return
    shown = layout.report_lines(report, mode=mode, lang=lang, width=width, audience=audience,
                                height=max(rows - 1 - len(status), 8) if mode == "compact" else None,
                                screen=rows - 1 - len(status))
    system = styles.colour_system(sys.stdout)
    plain = safe_text.terminal_block(styles.plain(shown + status))
    text = styles.ansi(shown + status, system) if system and plain == styles.plain(shown + status) else plain
    sys.stdout.write(HOME + "".join(line + ERASE_LINE + "\n" for line in text.split("\n")) + ERASE_BELOW)
    sys.stdout.flush()
