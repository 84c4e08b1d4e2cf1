"""What a call costs the student: the box's own time, never its neighbours'.

The box's keeper (as root, the zygote) counts, outside the box
(:func:`autograder.sandbox.confine.limits.box_count`), and what it can count decides
the rule -- one per mode:

* **The box's cgroup counts its CPU time** (as root: every process that ever ran
  in the box, whoever reaped it, however it ended; ``whole``). A call is charged
  that CPU time while the box is runnable, and the wall-clock time while it
  sleeps (a ``time.sleep``, a lock it holds itself). Time spent waiting for a CPU
  that other boxes hold is not charged: a box of busy processes next door slows
  an honest student's calls but cannot make them time out.
* **No such count** (a user without root: the box is in a user namespace, and no
  cgroup is delegated to it). The keeper sees only the box's live processes, and a process that ends takes its
  CPU time along (its parent may not reap it: a box that ignores SIGCHLD has it
  reaped by the kernel itself). So a call is charged its wall-clock time (or the
  CPU time its live processes count, where that is more), and whenever a count
  finds a process of the box other than the worker, the wall-clock time since the
  previous count too: what the box left running between calls is charged to the
  next call that counts (docs/sandbox.md says what this mode cannot see). Wall-clock time passes for every process
  of the box alike, reaped or not.

Counts are taken when a call starts if the last one is :data:`POLL_S` old or older,
every :data:`POLL_S` while it runs, and when it ends. A call answered within one
tick of the kernel's CPU count (:data:`TICK_S`) is charged its wall time without
asking the keeper (asking costs the judge and the keeper a round trip on every
call), and that charge is kept with the box's mark (``prepaid``): what the box
spent since the last count is charged to the next count, less what those calls
paid. Whatever a box spends between calls is thus charged to a call at most
:data:`POLL_S` of calls later; a call whose box spent its whole limit in the
background ends before it begins. Where there is no keeper (spawned workers on
macOS and Windows) or it stops answering, the clock falls back to the wall.

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
import collections
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


# What a keeper counts (Box.usage); a count without ``whole`` and ``others`` is a cgroup's.
Count = collections.namedtuple("Count", "cpu running whole others", defaults=(True, 0))
# The box's count where the previous call's clock left it: ``at`` the moment it was
# taken, ``prepaid`` the wall time charged since then to calls that asked nothing.
Mark = collections.namedtuple("Mark", "cpu at prepaid")


class CallClock:
    """``since``: the box's :class:`Mark` where the previous call's clock stopped (None:
    a new box, counted from now)."""

    def __init__(self, box, since=None):
        self.box = box
        self.started = self.last_time = time.monotonic()
        self.charged = 0.0
        self.counting = True
        if since is not None:
            self.last_cpu, self.counted_at, self.prepaid = since
            if self.started - since.at < POLL_S:
                return  # counted a moment ago: quick calls in a row ask nothing
        count = box.usage() if box is not None else None
        if count is None:
            self.counting = False
            return
        count = Count(*count)
        if since is None:
            self.last_cpu, self.counted_at, self.prepaid = count.cpu, self.started, 0.0
        else:  # what the box did since the last count is this call's
            self._take(count, self.started)

    def backstop(self, limit):
        """The wall-clock moment a call with this ``limit`` ends regardless."""
        return self.started + (limit * WALL_FACTOR + WALL_SLACK if self.counting else limit)

    def finish(self):
        """The call's total charge once it ended (see the module's docstring for quick calls)."""
        now = time.monotonic()
        if self.counting and self.counted_at <= self.started and now - self.started < TICK_S:
            self.charged += now - self.started
            self.prepaid += now - self.started
            self.last_time = now
            return self.charged
        return self.update()

    def update(self):
        """Count now and charge what the box did since the last count; returns the total charged."""
        now = time.monotonic()
        elapsed, self.last_time = now - self.last_time, now
        count = self.box.usage() if self.counting and self.box is not None else None
        if count is None:
            self.counting = False
            self.charged += elapsed
            return self.charged
        self._take(Count(*count), now)
        return self.charged

    def _take(self, count, now):
        """Charge what the box did from the last count to this one, taken at ``now``."""
        used = max(0.0, count.cpu - self.last_cpu - self.prepaid)
        inside = max(0.0, now - max(self.counted_at, self.started))  # of it, within this call
        if count.whole:
            working = count.running or used > _BUSY * inside
            self.charged += used if working else max(used, inside)
        else:
            seen_busy = now - self.counted_at - self.prepaid if count.others else 0.0
            self.charged += max(used, inside, seen_busy)
        self.last_cpu, self.counted_at, self.prepaid = count.cpu, now, 0.0

    def mark(self):
        """The box's :class:`Mark` for its next call's clock (None: it is not counted)."""
        return Mark(self.last_cpu, self.counted_at, self.prepaid) if self.counting else None


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
