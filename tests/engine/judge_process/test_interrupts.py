"""autograder/judge_process/interrupts.py: stop signals turned into Ctrl-C's interrupt."""
import subprocess
import sys
import textwrap

import pytest
from support.helpers import ROOT

# Both signals pending at once, as when a terminal's Ctrl-C reaches the batch's judge
# and the command line's SIGTERM follows at once; then a clean-up that runs bytecode.
_TWO_AT_ONCE = textwrap.dedent("""
    import os, signal, sys, time
    sys.path.insert(0, sys.argv[1])
    from autograder.judge_process import interrupts
    stops = {signal.SIGINT, signal.SIGTERM}
    with interrupts.as_interrupt(("SIGINT", "SIGTERM"), once=sys.argv[2] == "once"):
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, stops)
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
            time.sleep(5)
        except KeyboardInterrupt:
            for _ in range(100000):  # the clean-up: bytecode the second handler could interrupt
                pass
            print("cleaned up")
    print("restored" if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else "not restored")
""")


def _run(mode):
    return subprocess.run([sys.executable, "-c", _TWO_AT_ONCE, str(ROOT), mode], capture_output=True, text=True,
                          timeout=60)


def test_with_once_a_second_stop_signal_does_not_cut_the_clean_up_short():
    done = _run("once")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cleaned", "up", "restored"]


def test_without_once_the_second_signal_interrupts_the_clean_up():
    """What ``once`` is for: grade-many's judge gets both on Ctrl-C, and a second interrupt in its
    clean-up could end it before it had answered for every student."""
    done = _run("plain")
    assert done.returncode != 0 and "KeyboardInterrupt" in done.stderr
    assert "cleaned up" not in done.stdout


# The signal lands in code whose exceptions Python ignores (here a __del__; in a real run, the
# weakref callback of an import's lock): its KeyboardInterrupt is printed and lost.
_LOST = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, sys.argv[1])
    from autograder.judge_process import interrupts

    class Swallows:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs between these bytecodes, inside __del__
                pass

    with interrupts.as_interrupt(first=lambda: print("told")) as received:
        try:
            Swallows()
            print("lost")
            received.check()
            print("not raised again")
        except KeyboardInterrupt:
            print("raised again")
""")


def test_an_interrupt_lost_where_python_ignores_exceptions_is_raised_again():
    """grade-many's command line once went on grading a class after its SIGTERM: the signal
    came while it imported the class report's packages, inside a lock's weakref callback.
    Its waiting loops call Received.check, which raises the lost interrupt again, and the
    judge process is told to stop by the handler itself (``first``), lost or not."""
    done = subprocess.run([sys.executable, "-c", _LOST, str(ROOT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Exception ignored" in done.stderr and "KeyboardInterrupt" in done.stderr
    assert done.stdout.split() == ["told", "lost", "raised", "again"]


def test_watch_checks_for_a_lost_interrupt_while_it_waits_for_a_save(tmp_path):
    """Between two grades `watch` waits for a save; a SIGTERM lost meanwhile (a closed
    terminal) must still end the session: the wait calls the check on each turn."""
    from autograder.judge_process.interrupts import Received
    from autograder.judge_process.saved_files import FolderWatch

    received = Received()
    turns = []

    def between():
        turns.append(1)
        if len(turns) == 3:
            received.signum = 15  # what the handler records before its interrupt is lost
        received.check()

    with pytest.raises(KeyboardInterrupt, match="signal 15"):
        FolderWatch(tmp_path).wait(poll_s=0.01, between=between)
    assert len(turns) == 3


# A stop signal in the middle of a held step (starting the judge): recorded, told on
# at once, raised at the next check -- never inside the step.
_HELD = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, sys.argv[1])
    from autograder.judge_process import interrupts

    with interrupts.as_interrupt(first=lambda: print("told")) as received:
        try:
            with received.held():
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(1000):  # the handler runs between these bytecodes
                    pass
                print("step finished")
            received.check()
            print("not raised")
        except KeyboardInterrupt:
            print("raised after the step")
""")


def test_a_signal_during_a_held_step_is_raised_after_it():
    """grade-many's command line once died of a SIGTERM that came while it started its
    judge process, before it had a handle to stop it with: the start is held."""
    done = subprocess.run([sys.executable, "-c", _HELD, str(ROOT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["told", "step finished", "raised after the step"]


def test_ignore_after_keeps_nothing_ignored_when_no_signal_came():
    """grade-many's command line keeps the stop signals ignored after its judge only when one came
    (tests/engine/batch/test_batch_unanswered.py): a class graded to its end gives them back."""
    import signal

    from autograder.judge_process import interrupts

    before = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGHUP)}
    with interrupts.as_interrupt(once=True, ignore_after=True):
        assert signal.getsignal(signal.SIGTERM) not in (before[signal.SIGTERM], signal.SIG_IGN)
    assert {number: signal.getsignal(number) for number in before} == before
