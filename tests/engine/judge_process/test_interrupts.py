"""autograder/judge_process/interrupts.py: stop signals turned into Ctrl-C's interrupt."""
import subprocess
import sys
import textwrap

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
