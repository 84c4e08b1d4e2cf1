"""The table of hidden points the template ships (autograder/assignment_points.py)
matches what the hidden suites really hold."""
import json
import pathlib
import subprocess
import sys

import pytest

from autograder import MODULES, assignment_points, engine

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def suite_points():
    proc = subprocess.run([sys.executable, str(HERE / "suite_points.py")], capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("POINTS ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(lines[-1][len("POINTS "):])


def test_hidden_points_table_matches_the_hidden_suites(suite_points):
    if not engine.hidden_tests_available():
        pytest.skip("no hidden suites here to compare with (a student template)")
    real = {module: suite_points.get(f"{module}|hidden", 0) for module in MODULES}
    assert real == {module: assignment_points.hidden_points(module) for module in MODULES}, (
        "autograder/assignment_points.py HIDDEN_POINTS is out of date; the hidden suites hold " + repr(real))
    assert set(assignment_points.HIDDEN_POINTS) == set(MODULES)


def test_every_module_has_visible_and_hidden_points(suite_points):
    for module in MODULES:
        assert suite_points.get(f"{module}|visible", 0) > 0, module
        assert assignment_points.hidden_points(module) > 0, module
    assert assignment_points.hidden_points("gpu_lab") == 0
