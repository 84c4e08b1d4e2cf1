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
"""
import os
import time

WALL_FACTOR, WALL_SLACK = 4.0, 5.0
TICK_S = 1.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)
POLL_S = 0.25
GRACE_S = 1.0  # an answer that has begun: the least time it gets to arrive whole
_BUSY = 0.05  # CPU per wall second above which a box counts as working


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
