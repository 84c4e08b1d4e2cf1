"""The loop that runs the collected tests of one grade.

pytest's own per-test protocol builds three reports per test (setup, call,
teardown), each through a dozen hooks, and most of that work is thrown away:
the grade keeps one :class:`~autograder.judging.results.TestResult` built
from what the test raised. For a class of students those reports cost more
than the judge's own checks (benchmarks/bench_grade_many.py), so where this
pytest allows it, a test runs here on pytest's own pieces:

* fixtures are set up and torn down by pytest's ``SetupState``, exactly as in
  its protocol (the plugin's ``student`` and ``seed``, the assignment's
  fixtures, a suite's autouse fixtures);
* the test itself runs through the ``pytest_pyfunc_call`` hook, as pytest calls it;
* what setup or the call raised is recorded by the grading plugin, as its
  ``pytest_runtest_makereport`` hook would have recorded it;
* the per-test backstop that pytest-timeout gives the protocol is a SIGALRM
  timer here, failing the test with the same ``Timeout`` message.

Those pieces are pytest internals (``item._request``, ``session._setupstate``):
where one is missing, or where SIGALRM does not exist, every test goes
through pytest's full protocol instead, and grades the same
(tests/engine/judging/test_suites_collected.py grades both ways and compares).
"""
import contextlib
import signal
import threading

import pytest


def available(session):
    """Whether this pytest and this platform let the loop run tests itself."""
    state = getattr(session, "_setupstate", None)
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and all(hasattr(state, name) for name in ("setup", "teardown_exact")))


def _fits(item):
    return hasattr(item, "_request") and hasattr(item, "_initrequest") and hasattr(item, "runtest")


@contextlib.contextmanager
def _backstop(seconds):
    """Fail the running test after ``seconds`` (the judge's own code stuck:
    every sandbox call has a shorter limit of its own)."""
    def expired(_signum, _frame):
        pytest.fail(f"Timeout >{seconds:g}s", pytrace=False)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _raised(call):
    """Run ``call``; return what it raised (None if nothing). Ctrl-C and
    pytest.exit() end the grade, as they end pytest's protocol."""
    try:
        call()
    except (KeyboardInterrupt, pytest.exit.Exception):
        raise
    except BaseException as exc:  # noqa: B036 - a failed or skipped test is a result
        return exc
    return None


def run_test(item, following, plugin, timeout):
    """Set up, call and tear down one test; ``plugin`` records its result."""
    state = item.session._setupstate
    plugin.begin(item)  # first: a cancelled grade (watch) stops here, before the request is made
    if not item._request:  # a test that already ran in this process (watch)
        item._initrequest()
    try:
        with _backstop(timeout):
            error = _raised(lambda: state.setup(item))
            if error is not None:
                plugin.record(item, False, error)
            else:
                error = _raised(item.runtest)
                error = plugin.take_raised(item) if error is None else error
                plugin.record(item, error is None, error)
    finally:
        # A teardown error never changes a grade (pytest's protocol reports it apart).
        _raised(lambda: state.teardown_exact(following))
        item._request = False
        item.funcargs = None


def tear_down_everything(session):
    """Finish every node and fixture still set up in ``session`` (nothing, normally:
    each run's last test tears everything down)."""
    state = getattr(session, "_setupstate", None)
    if hasattr(state, "teardown_exact"):
        _raised(lambda: state.teardown_exact(None))


def run_items(items, plugin, timeout):
    """Every item in order, on the loop above where it fits, else pytest's protocol."""
    for index, item in enumerate(items):
        following = items[index + 1] if index + 1 < len(items) else None
        if _fits(item) and available(item.session):
            run_test(item, following, plugin, timeout)
        else:
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
