"""Which test a grade is running, on one line of the terminal, once a test has
kept it silent for a second (an endless loop, a slow call): the student sees
where the time goes instead of a frozen screen.

The line goes to standard error, only where that is a terminal (a pipe or a
CI log gets the report alone), is rewritten in place (carriage return, erase
line) and is erased before anything else is printed. Test titles come from the
grader's suites in the student's language; they are shown escaped and cut to
the terminal's width.
"""
import shutil
import sys
import time

from rich.cells import cell_len

from autograder.i18n import text as t
from autograder.reports import safe_text

SILENCE_S = 1.0
ERASE = "\r\x1b[2K"


class RunningTest:
    """``on_wait`` for :mod:`autograder.judge_process`: call it with the grade's
    :class:`~autograder.judge_process.launcher.Progress`; :meth:`clear` when it ends."""

    def __init__(self, lang, stream=None):
        self.lang = lang
        self.stream = stream or sys.stderr
        self.enabled = _is_terminal(self.stream)
        self.shown = ""

    def __call__(self, progress):
        if not self.enabled or progress.current is None:
            return False
        seconds = time.monotonic() - progress.since
        if seconds < SILENCE_S and not self.shown:
            return False
        module, title = progress.current
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        title = safe_text.terminal_line(title, 300)
        while True:  # the title is cut to the width, the seconds stay
            text = t("Running {module}: {test} ({seconds} s)", self.lang,
                     module=safe_text.terminal_line(module, 40), test=title, seconds=int(seconds))
            if cell_len(text) <= width or len(title) <= 1:
                break
            title = title[:-2] + "…"
        if text != self.shown:
            self.stream.write(ERASE + text)
            self.stream.flush()
            self.shown = text
        return False

    def say(self, text):
        """Show ``text`` on the line now (cut to the width) until the next test is shown."""
        if self.enabled:
            width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
            while cell_len(text) > width:
                text = text[:-1]
            self.stream.write(ERASE + text)
            self.stream.flush()
            self.shown = text

    def clear(self):
        if self.shown:
            self.stream.write(ERASE)
            self.stream.flush()
            self.shown = ""


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
