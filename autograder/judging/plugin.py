"""The pytest plugin that turns the visible and hidden suites into graded results.

It provides the fixtures the suites use (one sandbox per student module, a
per-test seed) and, for every test, records a :class:`~autograder.judging.results.TestResult`
with points, visibility, the module tag and feedback built from the test's
hint and the failure -- never from a hidden test's source or its expected values.

A test during which the grader's own code failed is not graded (:meth:`GradingPlugin._grader_fault`):
an exception of the judge's that is no verdict (not a failed check, not the student's code
failing), or a failure the sandbox found to be ours (``Sandbox.faults``). It is worth nothing
either way (score and maximum 0), says so in the student's words, and keeps what it was worth
and where our code failed (``TestResult.fault``) for the staff.
"""
import json
import os
import sys
import time
import traceback
import zlib

import pytest

from autograder import active_assignment, locations
from autograder.judging import call_errors, feedback
from autograder.i18n import _, render
from autograder.judging.judge import Mistake, StudentCodeFailed
from autograder.judging.results import TestResult
from autograder.sandbox import assignment_side, call_clock
from autograder.sandbox.client import Sandbox, StudentError
from autograder.intake.submission import source_of


_progress = {"fd": None}


def report_progress_to(path):
    """Append a line ``[module, title, lane]`` (JSON) to the file ``path`` as each test starts,
    for the command line to show which test runs (None: stop); a lane is the process
    that runs it (:class:`autograder.judge_process.launcher.Progress`)."""
    if _progress["fd"] is not None:
        os.close(_progress["fd"])
        _progress["fd"] = None
    if path:
        _progress["fd"] = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))


def _report_progress(module, title):
    if _progress["fd"] is not None:
        line = json.dumps([module, title, os.getpid()], ensure_ascii=False) + "\n"
        try:
            os.write(_progress["fd"], line.encode("utf-8"))
        except OSError:
            pass  # nobody is watching any more


def report_lane_done():
    """This process runs no more tests of the grade (it ran one module's apart)."""
    _report_progress(None, None)


def per_test_seed(run_seed, nodeid):
    """A test's own seed: stable across test order, different for every run seed."""
    return zlib.crc32(f"{run_seed}:{nodeid.split('::')[-1]}".encode()) & 0x7FFFFFFF


def _marker_value(item, name, default=None):
    marker = item.get_closest_marker(name)
    return marker.args[0] if marker and marker.args else default


def _title(item):
    """The test's name as students read it: its docstring's first line, a catalog id."""
    doc = (getattr(item.function, "__doc__", None) or "").strip().splitlines()
    return _(doc[0].strip().rstrip(".")) if doc else item.name.replace("test_", "", 1).replace("_", " ")


class GradingPlugin:
    """``sandboxes``: module name -> :class:`~autograder.sandbox.client.Sandbox`
    (the engine made them; the plugin never starts a process itself)."""

    def __init__(self, sandboxes, run_seed, modules=None):
        self.collection_errors = []
        self._descriptions = {}  # nodeid -> what _described found (kept across reset)
        self.reset(sandboxes, run_seed, modules)

    def reset(self, sandboxes, run_seed, modules=None):
        """Grade another submission with the tests already collected
        (:func:`autograder.judging.suites.run` in a batch's grading process)."""
        self._sandboxes = dict(sandboxes)
        self.modules = set(modules) if modules else None  # --module: grade only these
        self.run_seed = run_seed
        self.results = []
        self._current = None  # the test being run (its fixtures read it)
        self._started = {}
        self._raised = {}  # nodeid -> what the test raised (see pytest_pyfunc_call)
        self._faults_before = {}  # module -> how many grader faults its sandbox had when the test began
        self._sources = {}  # module -> the submission's source text, read once per grade

    def sandboxes(self):
        """module -> the :class:`~autograder.sandbox.client.Sandbox` this grade's tests call."""
        return self._sandboxes

    def selected(self, items):
        """The collected ``items`` this grade runs (all, or --module's)."""
        if self.modules is None:
            return list(items)
        return [item for item in items if _marker_value(item, "module") in self.modules]

    # -- fixtures -----------------------------------------------------------
    def sandbox(self, module):
        if module not in self._sandboxes:  # a test naming no known module: nothing to call
            self._sandboxes[module] = Sandbox(str(module), {"present": False}, boxes=None)
        return self._sandboxes[module]

    # The fixtures read the running test from the plugin (set by :meth:`begin`), not
    # from pytest's ``request``: a request fixture is rebuilt, signature and all,
    # for every fixture of every test. ``student`` and ``submission_source`` are the
    # same for every test of a suite file (its ``module`` marker), so they are set up
    # once per file: each grade's last test tears them down with everything else.
    @pytest.fixture(scope="module")
    def student(self):
        """The sandboxed student module named by the test file's ``module`` marker."""
        return self.sandbox(_marker_value(self._current, "module"))

    @pytest.fixture
    def seed(self):
        return per_test_seed(self.run_seed, self._current.nodeid)

    @pytest.fixture(scope="module")
    def submission_source(self):
        """The student's source text of this test's module ('' if missing)."""
        module = _marker_value(self._current, "module")
        if module not in self._sources:
            self._sources[module] = source_of(self.sandbox(module).spec)
        return self._sources[module]

    # -- hooks --------------------------------------------------------------
    def pytest_collection_modifyitems(self, config, items):
        if self.modules is None:
            return
        chosen = self.selected(items)
        dropped = [item for item in items if item not in chosen]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = chosen

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(report.nodeid or "collection")

    def begin(self, item):
        """A test starts (its duration counts from its fixtures' setup), unless the grade
        was cancelled (:func:`autograder.sandbox.call_clock.cancel_when`)."""
        call_clock.check_cancelled()
        self._current = item
        self._started[item.nodeid] = time.monotonic()
        self._faults_before = {module: len(sandbox.faults) for module, sandbox in self._sandboxes.items()}
        if _progress["fd"] is not None:
            module, _visible, _points, _todo, _hint, title = self._described(item)
            _report_progress(module, render(title))

    def take_raised(self, item):
        """What the test's call raised, kept by :meth:`pytest_pyfunc_call` (None: nothing)."""
        return self._raised.pop(item.nodeid, None)

    def record(self, item, passed, error, report=None):
        """The test's result: ``error`` is what its setup or call raised (None: passed)."""
        self._record(item, passed, error, report)

    def pytest_runtest_setup(self, item):
        self.begin(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        # A failed check is kept as it was raised: feedback is built from the
        # exception alone, and pytest's report of it (traceback, filtered and
        # formatted) would cost more than most tests. pytest's own outcomes
        # (a timeout's Failed, skips) are BaseExceptions and pass through.
        try:
            return (yield)
        except Exception as exc:  # noqa: BLE001 - every failure is a result
            self._raised[pyfuncitem.nodeid] = exc
            return True

    # pytest's protocol (where judging/test_loop.py does not run the tests itself)
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        raised = self.take_raised(item) if report.when == "call" else None
        if raised is not None:
            self.record(item, False, raised)
        elif report.when == "call" or (report.when == "setup" and report.failed):
            self.record(item, report.passed, call.excinfo.value if call.excinfo else None, report)

    # -- feedback -----------------------------------------------------------
    def _described(self, item):
        """What the test's markers and docstring say about it (the same for every grade)."""
        described = self._descriptions.get(item.nodeid)
        if described is None:
            module = _marker_value(item, "module") or "grader"
            # A test that names no exercise module (e.g. a suite file replaced by a
            # student) is reported but worth nothing.
            points = (_points(_marker_value(item, "points", 1)) if module in active_assignment.current().modules
                      else 0.0)
            described = self._descriptions[item.nodeid] = (
                module, _marker_value(item, "visibility", "hidden") == "visible", points,
                _todo(_marker_value(item, "todo", 0)), _marker_value(item, "hint", None), _title(item))
        return described

    def _record(self, item, passed, error, report=None):
        """``error``: what the test raised (None: passed, or no exception to show)."""
        module, visible, points, todo, hint, title = self._described(item)
        if not passed and os.environ.get("AUTOGRADER_DEBUG"):
            shown = report.longreprtext if report is not None else "".join(traceback.format_exception(error))
            print(f"--- {item.nodeid}\n{shown}", file=sys.__stderr__)
        result = TestResult(
            name=title, module=module, max_score=points, score=points if passed else 0.0,
            passed=passed, output="", visibility="visible" if visible else "hidden",
            test_id=item.nodeid.split("::")[-1], todo=todo, blamed=0 if passed else todo,
            hint=hint,
            duration=round(time.monotonic() - self._started.get(item.nodeid, time.monotonic()), 3))
        fault = self._grader_fault(error, visible)
        if fault is not None:
            _not_graded(result, fault, module)
        elif not passed:
            self._failure(result, error, visible)
        self.results.append(result)

    def _grader_fault(self, error, visible):
        """The grader's own failure during this test (a StudentError of kind grader), or None:
        a failure the sandbox found to be ours in any call the test made, else what the test
        raised when it is no verdict -- not a failed check, not the student's code failing, not
        the test's time running out. The judge's process runs no student code, so what it raises
        is ours (a comparison a value cannot answer is a failed check: judge.expect, judge.equals)."""
        if isinstance(error, StudentCodeFailed) and error.error.kind == "grader":
            return error.error
        for module, sandbox in self._sandboxes.items():
            if len(sandbox.faults) > self._faults_before.get(module, 0):
                return sandbox.faults[self._faults_before.get(module, 0)]
        verdict = isinstance(error, (StudentCodeFailed, Mistake)) or (visible and isinstance(error, AssertionError))
        if error is None or verdict or (type(error).__name__ == "Failed" and "Timeout" in str(error)):
            return None
        return StudentError("grader", type(error).__name__, str(error)[:300],
                            where=locations.grader_frame(error, assignment_side.grader_roots()))

    @staticmethod
    def _failure(result, error, visible):
        """Fill in what went wrong (``detail``), the error behind it and the TODO it points at."""
        if error is None:
            result.detail = _("The test did not complete.")
        elif isinstance(error, StudentCodeFailed):
            result.error = error.error
            unwritten = feedback.unwritten_todo(result.error)
            if unwritten:
                result.blamed = unwritten
        elif isinstance(error, Mistake):
            result.detail = error.message
            if _todo(error.todo):
                result.blamed = _todo(error.todo)
            if not getattr(error, "hint_applies", True):
                result.hint = None
        elif type(error).__name__ == "Failed" and "Timeout" in str(error):
            result.detail = _("The test ran out of time.")
        elif visible and isinstance(error, AssertionError):
            result.detail = str(error)


def _not_graded(result, fault, module):
    """``result`` as a test the grader failed to check: worth nothing, the student told so, what
    it was worth and where our code failed kept for the staff."""
    result.fault = {"type": fault.type, "where": fault.where, "message": fault.message, "points": result.max_score}
    result.score = result.max_score = 0.0
    result.passed, result.blamed, result.hint, result.error = False, 0, None, None
    result.detail = call_errors.describe(fault, f"{module}.py")


def _points(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 1.0
    return number if number == number and 0 <= number < 1000 else 1.0


def _todo(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 100 else 0
