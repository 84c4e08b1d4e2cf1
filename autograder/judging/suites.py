"""The graded suites under pytest: collected once, run against each submission's boxes.

pytest's start (arguments, plugins, the ini file) and its collection (test
modules, fixtures, markers) cost more than most of the tests themselves. A
single grade pays them once, as before; a batch pays them once for the whole
class: :func:`kept_collected` collects in the batch's judge process and keeps the
session while the batch runs, and each grading process forked from it only runs
the collected items against its own sandboxes (:func:`run`). Both go through
the same loop, :func:`_run_items` (:mod:`autograder.judging.test_loop`: pytest's
fixtures and test call without its per-test reports).

The child's copy of the session is its own (fork): nothing one student's
tests set up, cached or recorded reaches the next student.
"""
import contextlib
import io
import os
import pathlib
import sys

from autograder import active_assignment
from autograder.i18n import _
from autograder.judging import test_loop
from autograder.judging.results import TestResult

SUITE_INI = pathlib.Path(__file__).resolve().parent / "suite.ini"
TEST_TIMEOUT_S = 240  # backstop only: every sandbox call has its own, shorter limit


def hidden_tests_available():
    return active_assignment.current().hidden_tests_available()


def suite_files(folder, modules):
    """The suite files of ``folder``; with ``modules`` (--module) only theirs: a suite
    file names its module (``test_visible_<module>*.py``), and the plugin still
    deselects any test of another module that such a file holds."""
    if not modules:
        return [str(folder)]
    return [str(path) for path in sorted(folder.glob("test_*.py")) if any(module in path.stem for module in modules)]


def suite_args(include_hidden, modules=None):
    """pytest's arguments for the suites (None: no suite file to run)."""
    assignment = active_assignment.current()
    paths = suite_files(assignment.visible_dir, modules)
    if include_hidden and hidden_tests_available():
        paths += suite_files(assignment.hidden_dir, modules)
    if not paths:  # e.g. --module of the optional credit: no suite to run (never pytest's own default)
        return None
    return paths + [
        "-c", str(SUITE_INI), "--rootdir", str(assignment.folder),
        "--confcutdir", str(assignment.folder), "--import-mode=importlib",
        "-p", "no:cacheprovider", "-p", "pytest_timeout", "-o", f"timeout={TEST_TIMEOUT_S}",
        # No assertion rewriting: the suites judge with expect(), and pytest would
        # otherwise load its own compiled caches of them from the grader's tree.
        "--assert=plain",
        # Feedback is built from the exception itself; pytest's own tracebacks
        # only cost time (kept with AUTOGRADER_DEBUG for staff).
        "--tb=" + ("long" if os.environ.get("AUTOGRADER_DEBUG") else "no"),
        "-q", "-rN", "--no-header", "-p", "no:unraisableexception", "-p", "no:threadexception", "-W", "ignore::UserWarning",
        # Student code never runs in this process: nothing to capture or log per test.
        "--capture=no", "-p", "no:logging",
    ]


class _OwnLoop:
    """A pytest plugin: once collected, the session is handed to ``body``
    instead of pytest's test loop. What ``body`` raises (Ctrl-C included) is kept
    for the caller: pytest would report a KeyboardInterrupt and return."""

    def __init__(self, body):
        self.body = body
        self.value = None
        self.raised = None

    def pytest_runtestloop(self, session):
        try:
            self.value = self.body(session)
        except BaseException as exc:  # noqa: B036 - re-raised by _pytest_session's caller
            self.raised = exc
        return True


def _pytest_session(args, plugin, body):
    """Start pytest on ``args`` with ``plugin`` (a GradingPlugin) and the assignment's
    plugins, collect, call ``body(session)``; returns its value. pytest's own
    output is dropped, and no plugin a student could install loads."""
    import pytest

    loop = _OwnLoop(body)
    saved_env = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            pytest.main(args, plugins=[plugin, *active_assignment.current().plugins(), loop])
    finally:
        if saved_env is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved_env
    if loop.raised is not None:
        raise loop.raised
    return loop.value


def collect(include_hidden):
    """The suites' collected test items, none run (None when pytest could not start)."""
    from autograder.judging.plugin import GradingPlugin

    args = suite_args(include_hidden)
    if args is None:
        return []
    return _pytest_session(args, GradingPlugin({}, 0), lambda session: list(session.items))


def _run_items(session, plugin):
    if plugin.collection_errors:  # as pytest's own loop: nothing runs, never a grade out of fewer points
        return
    test_loop.run_items(plugin.selected(session.items), plugin, TEST_TIMEOUT_S)


class _Collected:
    def __init__(self, include_hidden, session, plugin):
        self.include_hidden = include_hidden
        self.session = session
        self.plugin = plugin


_collected = None  # the batch judge's session, while kept_collected() runs


def kept_collected(include_hidden, work):
    """Collect every suite once, then return ``work()``: grading processes forked
    meanwhile run the collected tests (:func:`run`) instead of collecting again.
    If collection cannot start, ``work()`` runs all the same (each child then
    collects for itself)."""
    from autograder.judging.plugin import GradingPlugin

    args = suite_args(include_hidden)
    if args is None:
        return work()
    plugin = GradingPlugin({}, 0)
    outer_stdout = sys.stdout
    ran = []

    def body(session):
        global _collected
        ran.append(True)
        _collected = _Collected(include_hidden, session, plugin)
        try:
            with contextlib.redirect_stdout(outer_stdout):
                return work()
        finally:
            _collected = None

    value = _pytest_session(args, plugin, body)
    return value if ran else work()


def run(sandboxes, seed, include_hidden, modules=None):
    """The suites' results for one submission's ``sandboxes`` (closed afterwards)."""
    from autograder.judging.plugin import GradingPlugin
    from autograder.sandbox.client import close_all

    collected = _collected if _collected is not None and _collected.include_hidden == include_hidden else None
    try:
        if collected is not None:
            plugin = collected.plugin
            # Whatever an earlier grade left set up (it ended in the grader's own error
            # before its last teardown) goes first: no fixture of it -- a sandbox of the
            # previous submission above all -- may serve this one.
            test_loop.tear_down_everything(collected.session)
            plugin.reset(sandboxes, seed, modules)
            _run_items(collected.session, plugin)
        else:
            plugin = GradingPlugin(sandboxes, seed, modules)
            args = suite_args(include_hidden, modules)
            if args is not None:
                _pytest_session(args, plugin, lambda session: _run_items(session, plugin))
    finally:
        close_all(sandboxes.values())
    results = plugin.results
    if plugin.collection_errors:
        results.append(TestResult(
            name=_("test collection"), module="grader", max_score=0.0, score=0.0, passed=False,
            output="", detail=_("Some grader tests could not be loaded; tell the course staff."),
            visibility="visible"))
    return results
