"""A call's arguments come back from the box only when the judge asks for them
(``Sandbox.call_watching_inputs``): the tests that check "inputs left untouched"
see what the call did to them; every other call is answered with its value alone."""
import pytest
import torch

from autograder.sandbox.boxes import start_boxes
from autograder.sandbox.client import Limits, Sandbox
from support import toy

# The slow tier (docs/maintaining.md): its one test starts a zygote of its own (the toy
# assignment's: what comes back from a box is the sandbox's, whatever the assignment).
pytestmark = pytest.mark.slow

IN_PLACE = '''
def divide(values, scale):
    for gradient in values:
        gradient.div_(scale)
    values.append(None)
    return values
'''


def test_the_arguments_come_back_only_when_asked_for(tmp_path):
    spec = toy.box_spec(tmp_path, IN_PLACE)
    with toy.active():
        boxes = start_boxes()
    try:
        sandbox = Sandbox(toy.MODULE, spec, boxes, Limits())
        try:
            plain = sandbox.call("divide", [torch.tensor([4.0, 8.0])], 4.0)
            assert plain.ok and plain.args_after == [] and plain.kwargs_after == {}
            assert torch.equal(plain.value[0], torch.tensor([1.0, 2.0])) and plain.value[1] is None

            watched = sandbox.call_watching_inputs("divide", [torch.tensor([4.0, 8.0])], scale=4.0)
            assert watched.ok
            changed, = watched.args_after  # the list as the call left it: divided in place, one entry longer
            assert len(changed) == 2 and changed[1] is None and torch.equal(changed[0], torch.tensor([1.0, 2.0]))
            assert watched.kwargs_after == {"scale": 4.0}
        finally:
            sandbox.close()
    finally:
        boxes.close()
