"""What a call costs the student: the box's own time, never its neighbours'.

A call is charged the CPU time its box used while it was runnable, and the
wall-clock time it spent asleep (waiting on nothing, a ``time.sleep``, a lock
it holds itself). Time spent waiting for a CPU that other boxes hold is not
charged: a box of busy processes next door slows an honest student's calls
but cannot make them time out. The keeper counts (outside the box); where
there is no keeper (spawned workers on macOS and Windows) or it stops
answering, the clock falls back to the wall.

A call answered within one tick of the kernel's CPU count (:data:`TICK_S`) is
charged its wall time without asking the keeper: the count could not tell
anything finer, and asking costs the judge and the keeper a round trip and a
walk of /proc on every call. The box's mark stays where it was, so CPU time it
spent in the background is still charged to the next call that is measured.

A generous wall-clock backstop (:data:`WALL_FACTOR` times the limit plus
:data:`WALL_SLACK`) still ends every call, whatever the counts say.

What a call may spend is the module's :class:`Allowance`: the call limit, until
one call of the module ran out of time or printed too much; from then on a
short limit (an endless loop costs its first call's limit, then fractions of a
second) and a quarter of the output. A correct call takes milliseconds however
it is written, and the short limit is never below ten times the slowest call
the module answered.

What a call printed is read from the module's log by :class:`PrintedOutput`: a
worker's stdout and stderr go to one log file per module (the judge's, in the
grading area; :mod:`autograder.intake.submission`). The judge never shows it
raw: it keeps the first lines (:data:`HEAD_BYTES`, for ``--verbose``) and how
much was printed in all, and it tells a call that prints past its allowance
from one that loops: a print inside an endless loop is a print storm, and the
student should hear about the print, not a loop. The kernel's own bound is
RLIMIT_FSIZE on the log (``Limits.max_file_bytes``): past it a write fails
(Python ignores SIGXFSZ). Every box of a module appends to the same log, so the
judge empties it once it has grown past :data:`KEEP_BYTES` (its head kept
first): a module that prints a lot in many calls never meets the kernel's bound.

A call also ends when its grade is cancelled (:func:`cancel_when`: ``watch``
grades a newer save instead): the wait raises :class:`Cancelled`.
"""
import os
import time

WALL_FACTOR, WALL_SLACK = 4.0, 5.0
TICK_S = 1.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
POLL_S = 0.25
GRACE_S = 1.0  # an answer that has begun: the least time it gets to arrive whole
_BUSY = 0.05  # CPU per wall second above which a box counts as working
HEAD_BYTES = 4096        # what is kept of a module's first output
HEAD_LINES = 20          # what --verbose shows of it
KEEP_BYTES = 4 * 2**20   # a module's log is emptied past this (its head kept first)


class CallClock:
    """``since``: the box's CPU count where the previous call's clock stopped. The box
    is idle between calls, so that count saves asking the keeper again; anything
    the box burnt in between (a thread of its own) is charged to this call."""

    def __init__(self, box, since=None):
        self.box = box
        self.started = self.last_time = time.monotonic()
        usage = (since, False) if since is not None else box.usage()
        self.counting = usage is not None
        self.last_cpu = usage[0] if usage else 0.0
        self.charged = 0.0

    def backstop(self, limit):
        """The wall-clock moment a call with this ``limit`` ends regardless."""
        return self.started + (limit * WALL_FACTOR + WALL_SLACK if self.counting else limit)

    def finish(self):
        """The call's total charge once it ended (see the module's docstring for quick calls)."""
        now = time.monotonic()
        if self.counting and self.last_time == self.started and now - self.started < TICK_S:
            self.charged += now - self.last_time
            self.last_time = now
            return self.charged
        return self.update()

    def update(self):
        """Charge the time since the last update; returns the total charged."""
        now = time.monotonic()
        elapsed, self.last_time = now - self.last_time, now
        usage = self.box.usage() if self.counting and self.box is not None else None
        if usage is None:
            self.counting = False
            self.charged += elapsed
            return self.charged
        cpu, running = usage
        used, self.last_cpu = max(0.0, cpu - self.last_cpu), cpu
        working = running or used > _BUSY * elapsed
        self.charged += used if working else max(used, elapsed)
        return self.charged


class Allowance:
    """What each call of one module may spend (seconds charged, bytes printed)."""

    def __init__(self, call_timeout, after_timeout, output_bytes):
        self.call_timeout, self.after_timeout, self.full_output = call_timeout, after_timeout, output_bytes
        self.overrun = False   # a call ran out of time or printed too much
        self.slowest = 0.0     # the most one answered call was charged

    def seconds(self, asked=None):
        """``(limit, short)``: the limit of the next call (``asked``: the test's own, if any)
        and whether it is the short one."""
        limit = asked or self.call_timeout
        short = max(self.after_timeout, 10 * self.slowest)
        return (short, True) if self.overrun and short < limit else (limit, False)

    def output_bytes(self):
        return self.full_output // 4 if self.overrun else self.full_output

    def answered(self, charged):
        self.slowest = max(self.slowest, charged)

    def overran(self):
        self.overrun = True


class PrintedOutput:
    """The log at ``path`` of one module's boxes (None: nothing is logged)."""

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

    def printed_by_call(self):
        """Bytes the running (or last) call printed so far."""
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

    def summary(self):
        """``{"bytes": n, "head": text, "more": bool}`` (None when nothing was printed): the
        head decoded as UTF-8, bad bytes replaced, cut to HEAD_LINES lines."""
        self._read_head()
        total = self.dropped + self.size()
        if not total:
            return None
        lines = self.head.decode("utf-8", "replace").splitlines()
        return {"bytes": total, "head": "\n".join(lines[:HEAD_LINES]),
                "more": total > len(self.head) or len(lines) > HEAD_LINES}


class Cancelled(KeyboardInterrupt):
    """The grade was cancelled: it unwinds as Ctrl-C does, closing its boxes,
    and no test records it as its own failure."""


_cancel_file = [None]


def cancel_when(path):
    """From now on a grade is cancelled once the file ``path`` exists (None: never)."""
    _cancel_file[0] = path


def check_cancelled():
    """Raise :class:`Cancelled` if the grade was cancelled (a stat, only where ``watch`` asked)."""
    if _cancel_file[0] is not None and os.path.exists(_cancel_file[0]):
        raise Cancelled()
