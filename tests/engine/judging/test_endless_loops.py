"""An endless loop costs seconds, a print storm is called one, and what a student
printed is shown (bounded, escaped) instead of dropped.

Once one call of a module has run out of time, the module's later calls get a
short limit: a correct function of that module, however slowly written (element
by element in Python), still gets its points, and the looping one costs a
fraction of a second a call instead of the full limit.
"""
import time

import pytest
import torch

from support.helpers import ROOT, box_specs, solution_source

from autograder.i18n import render
from autograder.reports import terminal
from autograder.sandbox.client import Limits, Sandbox, StudentError
from autograder.judging import call_errors

VARIANTS = ROOT / "tests" / "variants"
SLOW_CORRECT = (VARIANTS / "amp_update_element_loops.py").read_text(encoding="utf-8")
LOOPING_NORM = SLOW_CORRECT.replace("def global_grad_norm(gradients):\n",
                                    "def global_grad_norm(gradients):\n    while True:\n        pass\n")
STORM = solution_source("amp_update").replace(
    "    gradients = [None if gradient is None else gradient / scale for gradient in scaled_gradients]\n",
    "    while True:\n        print('gradients', scaled_gradients)\n")
FIRST_LIMIT = 1.0  # the looping call's own limit; a box starved of CPU runs to 4x it + 5 s


@pytest.fixture(scope="module")
def looping_norm_grade(shared_boxes, tmp_path_factory):
    from autograder.judging.engine import grade_submission
    from support.helpers import make_submission

    assert LOOPING_NORM != SLOW_CORRECT
    folder = make_submission(tmp_path_factory.mktemp("looping"), {"amp_update": LOOPING_NORM})
    started = time.monotonic()
    report = grade_submission(folder, seed=11, boxes=shared_boxes, limits=Limits(call_timeout=FIRST_LIMIT))
    return report, time.monotonic() - started


@pytest.mark.slow
def test_after_one_timeout_a_loop_costs_a_short_limit_per_call(looping_norm_grade):
    report, elapsed = looping_norm_grade
    tests = [test for test in report.tests if test.module == "amp_update"]
    said = [render(call_errors.describe(test.error, "amp_update.py"), "en") for test in tests if test.error is not None]
    full = [text for text in said if f"within {FIRST_LIMIT:g} s" in text]
    short = [text for text in said if "within 0.5 s (once one call" in text]
    assert len(full) == 1, said
    assert len(short) >= 10 and len(full) + len(short) == len(said), said
    # a full limit per looping call would cost len(said) x FIRST_LIMIT
    assert elapsed < FIRST_LIMIT + 2.0 * len(short) + 20, f"{elapsed:.0f} s for {len(said)} looping calls"


@pytest.mark.slow
def test_the_slow_correct_functions_of_a_looping_module_keep_their_points(looping_norm_grade):
    report, _elapsed = looping_norm_grade
    tests = [test for test in report.tests if test.module == "amp_update"]
    first_timeout = next(index for index, test in enumerate(tests) if test.error is not None)
    unscale = [test for test in tests if test.todo == 1]
    assert any(index > first_timeout for index, test in enumerate(tests) if test.todo == 1), \
        "no unscale test runs after the loop: this checks nothing"
    assert unscale and all(test.passed for test in unscale), [(t.test_id, t.output[-200:]) for t in unscale
                                                              if not t.passed]
    modules = report.by_module()
    assert modules["loss_scaler"][0] == modules["loss_scaler"][1]
    assert modules["amp_training_step"][0] == modules["amp_training_step"][1]


@pytest.mark.slow
def test_a_print_storm_is_reported_as_output_and_cut_short(tmp_path, shared_boxes):
    specs = box_specs(tmp_path, {"amp_update": STORM})
    sandbox = Sandbox("amp_update", specs["amp_update"], shared_boxes, Limits())
    try:
        outcomes = [sandbox.call("unscale_gradients", [torch.ones(3, dtype=torch.float16)], 2.0)
                    for _ in range(3)]
        assert [(o.ok, o.error.kind, o.error.message) for o in outcomes] == \
            [(False, "output", "256 KiB"), (False, "output", "64 KiB"), (False, "output", "64 KiB")]
        assert sandbox.spent < 10, sandbox.spent
        english = render(call_errors.describe(outcomes[0].error, "amp_update.py"), "en")
        chinese = render(call_errors.describe(outcomes[0].error, "amp_update.py"), "zh")
        assert "printed more than 256 KiB" in english and "loop" in english
        assert "256 KiB" in chinese and "print" in chinese and english != chinese
        summary = sandbox.printed.summary()
        assert summary["bytes"] > 256 * 1024 and summary["more"] is True
        head = summary["head"].splitlines()
        assert 0 < len(head) <= 20 and head[0].startswith("gradients [tensor(")
    finally:
        sandbox.close()


CHATTY = solution_source("amp_update").replace(
    "def unscale_gradients(scaled_gradients, scale):\n",
    "print('loaded\\x1b[31m red ::error::forged')\n\n\ndef unscale_gradients(scaled_gradients, scale):\n"
    "    print('unscale', len(scaled_gradients))\n")


@pytest.mark.slow
def test_what_a_module_printed_is_shown_escaped_and_bounded(grade_dir):
    report = grade_dir({"amp_update": CHATTY}, seed=3)
    assert report.score == report.max_score  # printing costs nothing
    printed = report.printed["amp_update"]
    assert printed["head"].splitlines()[0] == "loaded\x1b[31m red ::error::forged"
    assert len(printed["head"].splitlines()) == 20 and printed["more"] is True
    assert set(report.printed) == {"amp_update"}
    verbose = terminal.render(report, mode="verbose", lang="en", width=80)
    assert "amp_update printed" in verbose and "the first lines:" in verbose
    assert "  | loaded\\x1b[31m red ::error::forged" in verbose and "\x1b" not in verbose
    assert verbose.count("  | unscale ") == 19
    compact = terminal.render(report, mode="compact", lang="zh", width=80)
    assert "amp_update" in compact and "--verbose" in compact and "loaded" not in compact
    assert "printed" not in terminal.render(report, mode="quiet", lang="en", width=80)
    again = type(report).from_gradescope(report.to_gradescope())  # through results.json, as `grade` shows it
    assert again.printed == report.printed


@pytest.mark.slow
@pytest.mark.parametrize("statement", ["import loss_scaler", "from loss_scaler import LossScaler",
                                       "from exercises.loss_scaler import LossScaler"])
def test_importing_another_exercise_is_explained(grade_dir, statement):
    source = statement + "\n" + solution_source("amp_training_step")
    report = grade_dir({"amp_training_step": source}, seed=4)
    tests = [test for test in report.tests if test.module == "amp_training_step"]
    assert tests and not any(test.passed for test in tests)
    error = tests[0].error
    english, chinese = (render(call_errors.describe(error, "amp_training_step.py"), lang) for lang in ("en", "zh"))
    other = "exercises/" if "exercises" in statement else "loss_scaler.py"
    assert f"amp_training_step.py imports {other}" in english and "on its own" in english
    assert other in chinese and "单独评分" in chinese
    assert "imports" in tests[0].output and "on its own" in report.diagnosis["amp_training_step"]["message"]


def test_an_import_of_anything_else_is_left_as_python_said_it():
    for error in (StudentError("import", "ModuleNotFoundError", "No module named 'numpy'"),
                  StudentError("exception", "ModuleNotFoundError", "No module named 'amp_update_helpers'"),
                  StudentError("exception", "ValueError", "No module named 'loss_scaler'")):
        assert "on its own" not in render(call_errors.describe(error, "amp_update.py"), "en")


@pytest.mark.slow
def test_a_print_storm_at_import_is_the_modules_one_problem(grade_dir):
    report = grade_dir({"amp_update": "while True:\n    print('loading', list(range(50)))\n"}, seed=8)
    tests = [test for test in report.tests if test.module == "amp_update"]
    assert tests and not any(test.passed for test in tests)
    error = tests[0].error
    assert (error.kind, error.type) == ("import", "PrintedTooMuch")
    assert "Importing amp_update.py printed more than 256 KiB" in render(call_errors.describe(error, "amp_update.py"), "en")
    assert "printed more than 256 KiB" in tests[0].output and "ProcessExit" not in tests[0].output
    assert "printed more than 256 KiB" in report.diagnosis["amp_update"]["message"]
    assert all(test.error is None or test.error.kind == "import" for test in tests)
    assert report.printed["amp_update"]["head"].startswith("loading [0, 1, 2")
