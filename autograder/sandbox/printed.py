"""What a student module printed: its box's log, seen from the judge.

A worker's stdout and stderr go to one log file per module (the judge's, in the
grading area; :mod:`autograder.intake.submission`). The judge never shows it
raw: it keeps the first lines (:data:`HEAD_BYTES`, for ``--verbose``) and how
much was printed in all, and it tells a call that prints past
:data:`autograder.sandbox.client.Limits.call_output_bytes` from one that loops
(:meth:`PrintedOutput.grew_past`): a print inside an endless loop is a print
storm, and the student should hear about the print, not a loop.

The kernel's own bound is RLIMIT_FSIZE on the log (``Limits.max_file_bytes``):
past it a write fails (Python ignores SIGXFSZ). The log of every box of a module
is the same file, appended to, so the judge empties it once it has grown past
:data:`KEEP_BYTES` (its head kept here first): a module that prints a lot in
many calls never reaches the kernel's bound.
"""
import os

HEAD_BYTES = 4096        # what is kept of the first output
HEAD_LINES = 20          # what --verbose shows of it
KEEP_BYTES = 4 * 2**20   # the log is emptied past this (its head kept first)


class PrintedOutput:
    """The log at ``path`` (None: nothing is logged, e.g. a module never taken in)."""

    def __init__(self, path):
        self.path = path
        self.head = b""      # the first HEAD_BYTES printed
        self.dropped = 0     # bytes emptied out of the log so far
        self.mark = 0        # the log's size when the running call started

    def size(self):
        if not self.path:
            return 0
        try:
            return os.stat(self.path).st_size
        except OSError:
            return 0

    def start_call(self):
        self.mark = self.size()

    def grew_past(self, limit):
        """Whether the running call printed more than ``limit`` bytes so far."""
        return self.size() - self.mark > limit

    def printed_by_call(self):
        return max(0, self.size() - self.mark)

    def end_call(self):
        """After each call: empty a log grown past KEEP_BYTES, its head kept first."""
        size = self.size()
        if size > KEEP_BYTES:
            self._read_head()
            try:
                os.truncate(self.path, 0)
                self.dropped += size
            except OSError:
                pass

    def _read_head(self):
        if self.dropped or len(self.head) >= HEAD_BYTES:
            return  # what was printed first is kept already
        try:
            with open(self.path, "rb") as log:
                self.head = log.read(HEAD_BYTES)
        except OSError:
            pass

    def total(self):
        """Bytes printed in all."""
        return self.dropped + self.size()

    def summary(self):
        """``{"bytes": n, "head": text}`` (None when nothing was printed): the head
        decoded as UTF-8, bad bytes replaced, cut to HEAD_LINES lines."""
        self._read_head()
        total = self.total()
        if not total:
            return None
        text = self.head.decode("utf-8", "replace")
        lines = text.splitlines()
        return {"bytes": total, "head": "\n".join(lines[:HEAD_LINES]),
                "more": total > len(self.head) or len(lines) > HEAD_LINES}
