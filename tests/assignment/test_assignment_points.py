"""The table of hidden points the template ships (HIDDEN_POINTS in
autograder/assignment/description.py) matches what the hidden suites really hold."""
import json
import subprocess
import sys

import pytest

from autograder import active_assignment
from autograder.assignment import description
from autograder.judging import engine
from support.helpers import ROOT

ASSIGNMENT = active_assignment.current()
MODULES = ASSIGNMENT.modules

SUPPORT = ROOT / "tests" / "support"


@pytest.fixture(scope="module")
def suite_points():
    proc = subprocess.run([sys.executable, str(SUPPORT / "suite_points.py")], capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("POINTS ")]
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(lines[-1][len("POINTS "):])


def test_the_chapters_description_reaches_the_engine_whole():
    """What the seam reads of this folder's description is the description's own, and every
    module it names for the engine to import imports (the fast tier's test of the chapter)."""
    chapter = active_assignment.load("autograder.assignment")
    assert chapter.modules == tuple(description.MODULES)
    assert chapter.hidden_points == description.HIDDEN_POINTS
    for name in (chapter.grade_hooks, chapter.worker_side, *chapter.suite_plugins):
        assert chapter.resolve(name), name


def test_hidden_points_table_matches_the_hidden_suites(suite_points):
    if not engine.hidden_tests_available():
        pytest.skip("no hidden suites here to compare with (a student template)")
    real = {module: suite_points.get(f"{module}|hidden", 0) for module in MODULES}
    assert real == {module: ASSIGNMENT.hidden_points_of(module) for module in MODULES}, (
        "HIDDEN_POINTS in autograder/assignment/description.py is out of date; the hidden suites hold " + repr(real))
    assert set(ASSIGNMENT.hidden_points) == set(MODULES)


def test_every_module_has_visible_and_hidden_points(suite_points):
    for module in MODULES:
        assert suite_points.get(f"{module}|visible", 0) > 0, module
        assert ASSIGNMENT.hidden_points_of(module) > 0, module
    assert ASSIGNMENT.hidden_points_of("gpu_lab") == 0


def test_points_not_run_travel_through_results_json():
    """A grade without hidden tests stores what it did not run; the job summary
    rebuilt from results.json (classroom-report) still shows it and no check mark."""
    from autograder.reports import results_file, summary_md, terminal
    from autograder.judging.results import GradeReport, TestResult

    tests = [TestResult(name="amp_update: t", module="amp_update", max_score=8, score=8, passed=True, output="",
                        visibility="visible")]
    report = GradeReport(tests=tests, seed=1, lang="en", hidden_not_run={"amp_update": 23})
    data = report.to_gradescope()
    assert data["extra_data"]["hidden_not_run"] == {"amp_update": 23}
    read = results_file.report_from(data)
    assert read.hidden_not_run == {"amp_update": 23}
    summary = summary_md.render(read)
    row = next(line for line in summary.splitlines() if line.startswith("| `amp_update` |"))
    assert "23 hidden points not run" in row and "✅" not in row
    assert "✓" not in terminal.render(read, width=120) and "23 hidden points" in terminal.render(read, width=120)
    full = GradeReport(tests=tests, seed=1, lang="en")  # the hidden tests ran: done is done
    assert "✓" in terminal.render(full, width=120) and "✅" in summary_md.render(full)
