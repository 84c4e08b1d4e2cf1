"""The pytest plugin that turns the visible and hidden suites into graded results.

It provides the fixtures the suites use (one sandbox per student module, a
per-test seed) and, for every test, records a :class:`~autograder.results.TestResult`
with points, visibility, the module tag and feedback built from the test's
hint and the failure -- never from a hidden test's source or its expected values.
"""
import os
import sys
import time
import zlib

import pytest

from autograder.judge import Mistake, StudentCodeFailed
from autograder.results import TestResult
from autograder.sandbox.client import Sandbox
from autograder.static_checks import find_delegation
from autograder.submission import source_of

_MAX_OUTPUT = 2500


def per_test_seed(run_seed, nodeid):
    """A test's own seed: stable across test order, different for every run seed."""
    return zlib.crc32(f"{run_seed}:{nodeid.split('::')[-1]}".encode()) & 0x7FFFFFFF


def _marker_value(item, name, default=None):
    marker = item.get_closest_marker(name)
    return marker.args[0] if marker and marker.args else default


def _title(item):
    doc = (item.function.__doc__ or "").strip().splitlines()
    return doc[0].strip().rstrip(".") if doc else item.name.replace("test_", "", 1).replace("_", " ")


class GradingPlugin:
    """``sandboxes``: module name -> :class:`~autograder.sandbox.client.Sandbox`
    (the engine made them; the plugin never starts a process itself)."""

    def __init__(self, sandboxes, run_seed):
        self._sandboxes = dict(sandboxes)
        self.run_seed = run_seed
        self.results = []
        self.collection_errors = []
        self._started = {}

    # -- fixtures -----------------------------------------------------------
    def sandbox(self, module):
        if module not in self._sandboxes:  # a test naming no known module: nothing to call
            self._sandboxes[module] = Sandbox(str(module), {"present": False}, boxes=None)
        return self._sandboxes[module]

    @pytest.fixture
    def student(self, request):
        """The sandboxed student module named by the test file's ``module`` marker."""
        return self.sandbox(_marker_value(request.node, "module"))

    @pytest.fixture
    def seed(self, request):
        return per_test_seed(self.run_seed, request.node.nodeid)

    @pytest.fixture
    def submission_source(self, request):
        """The student's source text of this test's module ('' if missing)."""
        return source_of(self.sandbox(_marker_value(request.node, "module")).spec)

    @pytest.fixture
    def no_delegation(self, submission_source):
        """Module 2 earns nothing while it delegates to PyTorch's scaler."""
        found = find_delegation(submission_source)
        if found:
            line, what = found
            raise Mistake(f"loss_scaler.py line {line} uses {what}. Module 2 must be built by hand "
                          f"(no torch.amp.GradScaler, torch.cuda.amp/torch.cpu.amp scalers or "
                          f"torch._amp_* ops), so it earns no points until that is removed.")

    # -- hooks --------------------------------------------------------------
    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(report.nodeid or "collection")

    def pytest_runtest_setup(self, item):
        self._started[item.nodeid] = time.monotonic()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or (report.when == "setup" and report.failed):
            self._record(item, report, call)

    # -- feedback -----------------------------------------------------------
    def _record(self, item, report, call):
        module = _marker_value(item, "module") or "grader"
        visible = _marker_value(item, "visibility", "hidden") == "visible"
        points = float(_marker_value(item, "points", 1))
        hint = _marker_value(item, "hint", "")
        passed = report.passed
        if not passed and os.environ.get("AUTOGRADER_DEBUG"):
            print(f"--- {item.nodeid}\n{report.longreprtext}", file=sys.__stderr__)
        output = "Passed." if passed else self._feedback(item, call, hint, visible, module)
        self.results.append(TestResult(
            name=f"{module}: {_title(item)}", module=module, max_score=points,
            score=points if passed else 0.0, passed=passed, output=output[:_MAX_OUTPUT],
            visibility="visible" if visible else "hidden", test_id=item.nodeid.split("::")[-1],
            duration=round(time.monotonic() - self._started.get(item.nodeid, time.monotonic()), 3)))

    @staticmethod
    def _feedback(item, call, hint, visible, module):
        excinfo = call.excinfo
        lines = [hint] if hint else []
        if excinfo is None:
            lines.append("The test did not complete.")
        elif isinstance(excinfo.value, StudentCodeFailed):
            error = excinfo.value.error
            lines.append(error.describe(f"{module}.py"))
            if error.traceback:
                lines.append("Traceback (your code only):\n" + error.traceback.strip())
        elif isinstance(excinfo.value, Mistake):
            lines.append(str(excinfo.value))
        elif excinfo.typename == "Failed" and "Timeout" in str(excinfo.value):
            lines.append("The test ran out of time.")
        elif visible and isinstance(excinfo.value, AssertionError):
            lines.append(str(excinfo.value))
        else:
            # A bug on our side or an input the checks did not expect: say so,
            # without the test's code or values.
            lines.append(f"The grader could not check this result ({excinfo.typename}). "
                         f"If your code looks right, tell the course staff the seed of this run.")
        return "\n".join(lines)

