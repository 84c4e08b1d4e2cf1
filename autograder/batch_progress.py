"""Progress of a grade-many run on stderr: a bar on a terminal, a line per student in CI logs."""
import collections
import sys
import time

from autograder.batch_jobs import OK
from autograder.reports.safe_text import terminal_line


class Progress:
    """A one-line bar on a terminal, one line per student otherwise (CI logs)."""

    def __init__(self, total, stream=None, enabled=True):
        self.total = total
        self.done = 0
        self.counts = collections.Counter()
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()

    def _eta(self):
        if not self.done:
            return "--:--"
        remaining = (time.monotonic() - self.started) / self.done * (self.total - self.done)
        return f"{int(remaining // 60):02d}:{int(remaining % 60):02d}"

    def update(self, student, status, score=None):
        self.done += 1
        self.counts[status] += 1
        if not self.enabled:
            return
        problems = ", ".join(f"{count} {name}" for name, count in sorted(self.counts.items()) if name != OK)
        if self.tty:
            width = 28
            filled = int(width * self.done / self.total)
            line = (f"\rgrading [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
                    f"  eta {self._eta()}" + (f"  ({problems})" if problems else ""))
            self.stream.write(line.ljust(90)[:120])
            if self.done == self.total:
                self.stream.write("\n")
        else:
            shown = status if score is None else f"{score}"
            # Folder names are the students': no control character or workflow command gets through.
            self.stream.write(terminal_line(f"[{self.done}/{self.total}] {student}: {shown}") + "\n")
        self.stream.flush()
