"""Ending a grade the way Ctrl-C ends it, whatever ended its command line.

A terminal's Ctrl-C reaches every process of the foreground group, so the
judge process (B) stops its boxes while the command line (A) waits for it.
SIGTERM (``kill``, a cancelled CI job) and SIGHUP (a closed terminal) reach A
alone: A turns them into the same interrupt, asks B to stop with SIGTERM, waits
for it, and only then removes the folders B's grades worked in. B turns
SIGTERM into the same interrupt, once (its clean-up must not be cut short), and
gets SIGTERM as well when A dies outright (``die_with_parent``).
"""
import contextlib
import signal
import subprocess
import sys
import threading

STOP_SIGNALS = ("SIGTERM", "SIGHUP")


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


class Received:
    """The stop signal an :func:`as_interrupt` block turned into KeyboardInterrupt, if any.

    Python runs a signal's handler between two bytecodes of whatever runs then; when
    that is code whose exceptions Python ignores (a weakref callback of an import's
    lock, a ``__del__``: "Exception ignored in ..."), the interrupt is printed and
    lost, and the block goes on as if the signal never came. A loop that waits calls
    :meth:`check` on each turn: it raises the interrupt again there. Reached only when
    it was lost: had it propagated, the loop would have ended."""

    def __init__(self):
        self.signum = None
        self.holding = False

    def check(self):
        if self.signum is not None:
            raise KeyboardInterrupt(f"signal {self.signum}")

    @contextlib.contextmanager
    def held(self):
        """A step a stop signal must not cut in two -- starting a process whose
        handle would be lost with the interrupt: a signal during it is only
        recorded, and the next :meth:`check` raises it."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False


@contextlib.contextmanager
def as_interrupt(names=STOP_SIGNALS, once=False, first=None, ignore_after=False):
    """(A) While this lasts, SIGTERM and SIGHUP (``names``) raise KeyboardInterrupt as
    Ctrl-C does (in the main thread; elsewhere signals cannot be handled and nothing
    changes). ``once``: the first of them sets all of them to be ignored before it
    raises, so that a second one -- a terminal's Ctrl-C and the command line's SIGTERM
    arrive together -- cannot cut short the clean-up the first one started.
    ``ignore_after`` (with ``once``): once one came, they stay ignored when the block
    ends too, for a clean-up that goes on after it (grade-many's report). ``first``:
    called by the handler before it raises (say, to pass the stop on to a judge process
    at once, whether or not the interrupt is lost). Yields a :class:`Received` for the
    block's waiting loops."""
    numbers = [getattr(signal, name) for name in names if hasattr(signal, name)]
    received = Received()

    def interrupt(signum, frame):
        if once:
            for number in numbers:
                signal.signal(number, signal.SIG_IGN)
        received.signum = signum
        if first is not None:
            first()
        if not received.holding:
            _interrupt(signum, frame)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for number in numbers:
            previous[number] = signal.signal(number, interrupt)
    try:
        yield received
    finally:
        if not (once and ignore_after and received.signum is not None):
            for number, handler in previous.items():
                signal.signal(number, handler)


@contextlib.contextmanager
def judge_boxes():
    """(B, :func:`autograder.judge_process.launcher.judge_main`) The judge process's box factory: its zygote forked
    before B has read anything of a job. From then on SIGTERM -- A's, passed on, or
    A's death -- interrupts B as Ctrl-C does, once, so that the clean-up it starts
    runs to its end; the boxes are closed however B ends."""
    if sys.platform.startswith("linux"):
        from autograder.sandbox.confine import namespaces

        namespaces.die_with_parent(signal.SIGTERM)
    from autograder.sandbox import boxes as box_factories

    boxes = box_factories.fork_zygote_here() if box_factories.use_zygote() else box_factories.SpawnBoxes()

    def once(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _interrupt(signum, frame)

    signal.signal(signal.SIGTERM, once)  # after the fork: the zygote keeps SIGTERM's default
    try:
        yield boxes
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        boxes.close()


def ask_to_stop(process):
    """(A) Ask judge process ``process`` to stop as on Ctrl-C, without waiting."""
    with contextlib.suppress(OSError):
        process.send_signal(signal.SIGTERM)


def stop(process, wait_s):
    """(A) Ask judge process ``process`` to stop as on Ctrl-C and wait for it;
    killed past ``wait_s`` seconds."""
    ask_to_stop(process)
    try:
        process.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
