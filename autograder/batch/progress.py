"""Progress of a grade-many run on stderr: a rich progress bar on a terminal, a
line per student in CI logs (where a redrawn bar would only clutter the log)."""
import collections
import sys

from autograder.batch.jobs import OK
from autograder.reports.safe_text import terminal_line


class Progress:
    """A bar with the elapsed time, an estimate of the rest and the problems so far
    on a terminal; one escaped line per student otherwise."""

    def __init__(self, total, stream=None, enabled=True):
        self.total = total
        self.done = 0
        self.counts = collections.Counter()
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar = self._task = None
        if self.enabled and self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, \
                TimeElapsedColumn, TimeRemainingColumn

            self._bar = Bar(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            TimeRemainingColumn(), TextColumn("{task.fields[problems]}"),
                            console=Console(file=self.stream, highlight=False), transient=False)
            self._task = self._bar.add_task("grading", total=total, problems="")
            self._bar.start()

    def update(self, student, status, score=None):
        self.done += 1
        self.counts[status] += 1
        if not self.enabled:
            return
        if self._bar is not None:
            problems = ", ".join(f"{count} {name}" for name, count in sorted(self.counts.items()) if name != OK)
            self._bar.update(self._task, advance=1, problems=f"({problems})" if problems else "")
            if self.done >= self.total:
                self._bar.stop()
            return
        shown = status if score is None else f"{score}"
        # Folder names are the students': no control character or workflow command gets through.
        self.stream.write(terminal_line(f"[{self.done}/{self.total}] {student}: {shown}") + "\n")
        self.stream.flush()
