"""What a student or TA reads in the terminal (and in the Actions log).

Three levels: ``quiet`` (the score table and each module's first thing to fix),
``compact`` (the default: the failed tests, each module's diagnosed one first
and repeated feedback folded, then the summary) and ``verbose`` (every test,
then the summary). The summary comes last, as a test runner's does, so that the
last screen holds the scores and what to fix first (:mod:`.layout`); on a
screen too short for every first thing to fix, the longest are worded shorter
(:mod:`.fixes`). ``watch`` redraws its screen in place (:mod:`.watch_screen`).
Colour where the terminal shows it (:mod:`.styles`).

Feedback, flags, notes and names may hold student text: each piece goes
through :mod:`autograder.reports.safe_text` and reaches rich as plain
``Text`` (never markup), so nothing printed here can act as a workflow command
or a terminal control sequence.
"""
import shutil
import sys

from autograder.reports.terminal import styles
from autograder.reports.terminal.fixes import cut  # noqa: F401
from autograder.reports.terminal.layout import MIN_WIDTH, isolation_lines, report_lines, terminal_width  # noqa: F401
from autograder.reports.terminal.table import preload, score_cells  # noqa: F401
from autograder.reports.terminal.tests_shown import OUTPUT_LINES, feedback_lines, printed_lines  # noqa: F401
from autograder.reports.terminal.watch_screen import (  # noqa: F401
    CHANGE_LINES, ERASE_BELOW, ERASE_LINE, HOME, change_lines, changes, draw_watch)


def render(report, mode="compact", lang=None, show_output=None, width=None, height=None, audience="staff",
           screen=None):
    """The report as text, no line wider than ``width`` (default: the terminal's).
    ``screen``: the lines its summary may take at the end (see :func:`report_lines`);
    ``height`` (compact mode): ``watch``'s screen of that many lines.
    ``audience``: "student" for a student's grade of their own work (see :func:`isolation_lines`).
    ``show_output=False`` is the old spelling of ``mode='quiet'``."""
    if show_output is False:
        mode = "quiet"
    return styles.plain(report_lines(report, mode, lang, terminal_width(width), height, audience, screen))


def show(report, mode="compact", lang=None, audience="staff", after=(), stream=None):
    """Print the report and the lines ``after`` it on ``stream`` (standard output), in
    colour where it shows colour; on a terminal its summary fits the last screen."""
    stream = stream or sys.stdout
    try:
        rows = shutil.get_terminal_size((80, 24)).lines if stream.isatty() else None
    except (AttributeError, ValueError):
        rows = None
    after = styles.lines(after)
    shown = report_lines(report, mode, lang, terminal_width(), None, audience,
                         None if rows is None else rows - 1 - len(after))
    styles.write(shown + after, stream)
