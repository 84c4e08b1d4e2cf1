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

A single grade (``grade``, each of ``watch``'s) runs its modules apart
(:func:`run`'s ``apart``): in as many lanes as there are CPUs, the judge
running one and a process forked from it each other, once the suites are
collected, each module against its own boxes. A test makes dozens of calls
that wake its box and wait for it, so one lane keeps one CPU at most busy;
lanes side by side use every CPU of a laptop or a CI runner. A class is
graded a student per CPU already (:mod:`autograder.batch.slots`), so its
grades run their modules in turn.
"""
import contextlib
import io
import os
import pathlib
import pickle
import select
import signal
import sys

from autograder import active_assignment
from autograder.i18n import _
from autograder.judging import reference_cache, test_loop
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


def _run_items(session, plugin, apart=False):
    if plugin.collection_errors:  # as pytest's own loop: nothing runs, never a grade out of fewer points
        return
    items = plugin.selected(session.items)
    lanes = _lanes(items, plugin) if apart else []
    if len(lanes) > 1:
        _run_apart(lanes, plugin)
    else:
        test_loop.run_items(items, plugin, TEST_TIMEOUT_S)


def _lanes(items, plugin):
    """The modules' tests as lanes, one a CPU at most: ``[[(module, its items in order), ...], ...]``,
    modules dealt to the lane with the fewest tests, the largest module first, the lane with the
    most tests first; [] where they cannot run apart (one CPU, no fork, boxes without a channel of
    their own, a test of no known module)."""
    sandboxes = plugin.sandboxes()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if not hasattr(os, "fork") or cpus < 2 \
            or not all(hasattr(sandbox.boxes, "new_channel") for sandbox in sandboxes.values()):
        return []
    groups = {}
    for item in items:
        marker = item.get_closest_marker("module")
        groups.setdefault(marker.args[0] if marker and marker.args else None, []).append(item)
    if not set(groups) <= set(sandboxes):
        return []
    lanes = [[] for _ in range(min(cpus, len(groups)))]
    for module, group in sorted(groups.items(), key=lambda entry: -len(entry[1])):
        min(lanes, key=lambda lane: sum(len(tests) for _module, tests in lane)).append((module, group))
    return sorted(lanes, key=lambda lane: -sum(len(tests) for _module, tests in lane))


def _run_apart(lanes, plugin):
    """The first lane's tests in this process, each other lane's in a process forked now, with a
    channel of its own to the zygote for the boxes it starts. What a child hands back (results, what
    the report reads of its sandboxes, the reference runs it computed) joins this process's, which
    then closes the boxes it asked for (the child closed them already: their keepers hung up).
    Pickled between two processes of the judge: nothing in it is an object of a box's making (the
    wire decodes answers into plain values)."""
    import gc

    from autograder.judging.plugin import report_lane_done
    from autograder.sandbox.boxes import boxes_from_channel

    sandboxes, children = plugin.sandboxes(), []
    gc.freeze()  # a collection in a child would write to (and so copy) every page of the judge's heap
    try:
        for lane in lanes[1:]:
            channel = sandboxes[lane[0][0]].boxes.new_channel()
            answer_r, answer_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # never back into the judge's own code: the child ends here, whatever happens
                try:
                    os.close(answer_r)
                    _serve_lane(lane, plugin, sandboxes, boxes_from_channel(channel), answer_w)
                finally:
                    os._exit(70)
            os.close(answer_w)
            if channel is not None:
                channel.close()
            children.append((lane, pid, answer_r))
        test_loop.run_items(_items_of(lanes[0]), plugin, TEST_TIMEOUT_S)
        report_lane_done()
        answers = _answers([answer_r for _lane, _pid, answer_r in children])
    except BaseException:
        for _lane, pid, _answer_r in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        raise
    finally:
        for _lane, pid, answer_r in children:
            os.close(answer_r)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    for lane, _pid, answer_r in children:
        modules = ", ".join(module for module, _items in lane)
        kind, value = answers.get(answer_r, ("failed", "it ended without an answer"))
        if kind != "ok":
            if kind == "cancelled":
                from autograder.sandbox.call_clock import Cancelled

                raise Cancelled()
            raise KeyboardInterrupt() if kind == "interrupted" else \
                RuntimeError(f"the grading process of {modules}'s tests failed: {value}")
        results, kept, references = value
        plugin.results.extend(results)
        for module, (isolation, delegation, printed) in kept.items():
            sandbox = sandboxes[module]  # what the report reads of it (its boxes were closed there)
            sandbox.isolation, sandbox.delegation, (sandbox.printed.head, sandbox.printed.dropped) = \
                isolation, delegation, printed
        reference_cache.keep(references)


def _items_of(lane):
    return [item for _module, items in lane for item in items]


def _serve_lane(lane, plugin, sandboxes, boxes, answer_w):
    """(The forked process) run the lane's tests, close its boxes, answer."""
    from autograder.judging.plugin import report_lane_done
    from autograder.sandbox.call_clock import Cancelled
    from autograder.sandbox.client import close_all
    from autograder.sandbox.confine import namespaces

    namespaces.die_with_parent()
    own = [sandboxes[module] for module, _items in lane]
    for sandbox in own:
        sandbox.boxes = boxes
    plugin.results = []
    before = set(reference_cache.entries())
    try:
        try:
            test_loop.run_items(_items_of(lane), plugin, TEST_TIMEOUT_S)
        finally:
            report_lane_done()
            close_all(own)
        kept = {sandbox.module_name: (sandbox.isolation, sandbox.delegation,
                                      (sandbox.printed.head, sandbox.printed.dropped)) for sandbox in own}
        answer = ("ok", (plugin.results, kept,
                         {key: value for key, value in reference_cache.entries().items() if key not in before}))
    except Cancelled:
        answer = ("cancelled", None)
    except KeyboardInterrupt:
        answer = ("interrupted", None)
    except BaseException as exc:  # noqa: B036 - the judge says the grader failed
        answer = ("failed", f"{type(exc).__name__}: {exc}"[:1000])
    with open(answer_w, "wb") as stream:
        stream.write(pickle.dumps(answer))
    os._exit(0)


def _answers(pipes):
    """A child's answer pipe -> (kind, value), read from each pipe until it closes."""
    buffers = {answer_r: [] for answer_r in pipes}
    answers, open_ = {}, set(buffers)
    while open_:
        for answer_r in select.select(list(open_), [], [])[0]:
            chunk = os.read(answer_r, 1 << 20)
            if chunk:
                buffers[answer_r].append(chunk)
                continue
            open_.discard(answer_r)
            with contextlib.suppress(Exception):  # noqa: BLE001 - no answer: the lane's tests failed
                answers[answer_r] = pickle.loads(b"".join(buffers[answer_r]))
    return answers


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


def run(sandboxes, seed, include_hidden, modules=None, apart=False):
    """The suites' results for one submission's ``sandboxes`` (closed afterwards); ``apart``:
    each module's tests in a process of its own, where there are CPUs for them."""
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
            _run_items(collected.session, plugin, apart)
        else:
            plugin = GradingPlugin(sandboxes, seed, modules)
            args = suite_args(include_hidden, modules)
            if args is not None:
                _pytest_session(args, plugin, lambda session: _run_items(session, plugin, apart))
    finally:
        close_all(sandboxes.values())
    results = plugin.results
    if plugin.collection_errors:
        results.append(TestResult(
            name=_("test collection"), module="grader", max_score=0.0, score=0.0, passed=False,
            output="", detail=_("Some grader tests could not be loaded; tell the course staff."),
            visibility="visible"))
    return results
