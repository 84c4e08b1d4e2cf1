"""A submission cannot turn its own failure into the grader's (docs/sandbox.md, *Whose failure*).

The box runs our decoder, our encoder and the scenarios' trusted code next to the student's,
and the student's code can break any of them in its own process so that the exception comes
out of our code, with no frame of the student's file on its way -- at the very line where a
real bug of ours was (Python 3.10's ``a2b_base64(strict_mode=)``). The worker then claims a
grader fault; the judge reruns that code of ours without the student's, finds nothing, and
charges the call to the student as before: no test leaves the maximum, no point is gained."""
import pytest

from autograder.judging import engine
from support import toy

pytestmark = pytest.mark.hostile
BASE = toy.SOLUTION
HOSTILE = {
    # our decoder of the call's inputs, replaced by a C function that raises TypeError
    "inputs": 'import sys\nsys.modules["autograder.sandbox.wire"].decode_value = len\n' + BASE,
    # our encoder of the answer, likewise
    "answer": 'import sys\nsys.modules["autograder.sandbox.wire"].encode_value = len\n' + BASE,
    # the base64 our tensor encoder calls, at the line of a real encoder's call; add answers a tensor
    "base64": "import binascii\nbinascii.b2a_base64 = len\n" + BASE.replace(
        "def add(a, b):\n    return a + b", "def add(a, b):\n    import torch\n    return torch.tensor(a + b)"),
    # every error report claims the 3.10 decoder's failure, whatever was raised
    "claim": 'import sys\nworker = sys.modules["autograder.sandbox.worker"]\n'
             'worker.claim = lambda *args: {"phase": "inputs", "type": "TypeError", '
             '"where": "autograder/sandbox/wire.py:132"}\n'
             + BASE.replace("return a + b", 'raise TypeError("a2b_base64() takes no keyword arguments")'),
}


@pytest.mark.parametrize("trick", sorted(HOSTILE))
def test_a_forged_grader_fault_earns_nothing(tmp_path, toy_boxes, trick):
    with toy.active():
        report = engine.grade_submission(toy.submission(tmp_path / "sub", HOSTILE[trick]), seed=5, boxes=toy_boxes)
    assert report.grader_faults() == [], [(test.name, test.fault) for test in report.grader_faults()]
    assert report.max_score == 5  # nothing left out of the maximum
    add = next(test for test in report.tests if test.test_id == "test_add")
    assert not add.passed and add.score == 0
    assert add.error is not None and add.error.kind == "exception"  # the student's code raised, as charged before
    assert "grader could not check" not in add.output and "Your code raised" in add.output


@pytest.mark.slow
def test_a_scenario_broken_from_inside_the_box_is_the_students(grade_dir):
    """Module 1's aliasing scenario draws its gradients with torch.randn in the box: the student's
    module replaced it, so our scenario's own line raises. The judge reruns the scenario with a
    stand-in and with the reference, where torch is whole: the failure stays the student's."""
    from support.helpers import solution_source

    honest = grade_dir(modules=["amp_update"], include_hidden=False)
    source = "import torch\ntorch.randn = len\n" + solution_source("amp_update")
    report = grade_dir({"amp_update": source}, modules=["amp_update"], include_hidden=False)
    assert report.grader_faults() == [] and report.max_score == honest.max_score > 0
    failed = [test for test in report.tests if not test.passed]
    assert failed and all(test.error is not None and test.error.kind == "exception" for test in failed)
    assert report.score < honest.score
