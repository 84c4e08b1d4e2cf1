"""Whatever a box answers, within what the wire and the declared shapes let through, the
suites judge it: each visible and hidden test passes, or fails with a Mistake or the
student's failure -- never with an exception of the checks' own, which a report shows as
"the grader could not check this result".

Fuzz (tests/support/forged_answers.py): a stand-in student module answers every call as the
reference solution (or a single-mistake mutant of it) would, through the wire's codec,
except one call -- or every call -- whose answer is forged: parts of it replaced by values
like them or by anything at all (tensors of every dtype and shape, NaN, huge numbers,
strings, nested dicts and lists, opaque objects), kept only where the run's declared shape
lets it through; a direct call's value and arguments may become anything the wire carries."""
import importlib
import inspect
import random
import traceback

import pytest

from support import mutants_amp_training_step
from support import mutants_amp_update
from support import mutants_loss_scaler
from autograder.judging.judge import Mistake, StudentCodeFailed
from support.forged_answers import ForgingStudent, solution
from support.helpers import MODULES, mutate
from support.torch_threads import one_torch_thread  # noqa: F401 - the fuzz's thousands of small steps

# the suites are imported here, outside the grader's plugin that declares their marks
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")
SUITES = {
    "amp_update": ("visible.test_visible_amp_update", "hidden.test_hidden_amp_update",
                   "hidden.test_hidden_amp_update_plan"),
    "loss_scaler": ("visible.test_visible_loss_scaler", "hidden.test_hidden_loss_scaler",
                    "hidden.test_hidden_loss_scaler_scaler"),
    "amp_training_step": ("visible.test_visible_amp_training_step", "hidden.test_hidden_amp_training_step"),
}
MUTANTS = {"amp_update": mutants_amp_update.CASES, "loss_scaler": mutants_loss_scaler.CASES,
           "amp_training_step": mutants_amp_training_step.CASES}
ROUNDS = 6


def suite_tests(module):
    """(name, call(student)) of every graded test of ``module``'s suites."""
    for suite in SUITES[module]:
        loaded = importlib.import_module(f"autograder.assignment.{suite}")
        for name, function in sorted(vars(loaded).items()):
            if name.startswith("test_") and callable(function):
                wanted = inspect.signature(function).parameters
                yield f"{suite}::{name}", (lambda student, function=function, wanted=wanted: function(**{
                    key: value for key, value in (("student", student), ("seed", 7), ("submission_source", ""))
                    if key in wanted}))


def judged(test, student):
    """(passed, what the checks raised besides a Mistake or the student's failure, or None)."""
    try:
        test(student)
    except (Mistake, StudentCodeFailed):
        return False, None
    except Exception as exc:  # noqa: BLE001 - what the fuzz looks for
        return False, "".join(traceback.format_exception(exc)[-6:])
    return True, None


def forge(module, reference, rounds, label, honest_passes):
    problems, answers = [], {}  # the reference's scenario answers, shared by its students
    for name, test in suite_tests(module):
        honest = ForgingStudent(module, reference, random.Random(0), answers=answers)
        passed, raised = judged(test, honest)
        if raised is not None or (honest_passes and not passed):
            problems.append(f"{label} {name} unforged: {raised or 'fails'}")
            continue
        for index in range(rounds):
            rng = random.Random(f"{label}:{name}:{index}")
            at = "every" if index % 3 == 2 else rng.randrange(max(honest.calls, 1))
            student = ForgingStudent(module, reference, rng, forge_at=at, changes=rng.choice((1, 1, 2, 3, 6)),
                                     answers=answers)
            raised = judged(test, student)[1]
            if raised is not None:
                problems.append(f"{label} {name} (forged call {at}):\n{raised}")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_forged_answers_never_break_the_checks(module):
    problems = forge(module, solution(module), ROUNDS, "solution", honest_passes=True)
    assert not problems, "\n\n".join(problems[:5])


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_forged_answers_of_wrong_solutions_never_break_the_checks(module):
    """The same near the answers of the mutants (runs that stop, skip, differ). An endless
    loop's mutant is left out: its answers are the reference's, and in this process, outside
    any box, its loop would never end."""
    problems = []
    for mutant in (case for case in MUTANTS[module] if not case.limits):
        problems += forge(module, solution(module, mutate(module, *mutant.replacements)), 2, mutant.name,
                          honest_passes=False)
    assert not problems, "\n\n".join(problems[:5])
