"""Module 1 scenario: what only the worker can see -- object identity.

The contract promises that ``unscale_gradients`` returns a *new* list of *new*
tensors, even where dividing changes nothing (scale 1). Identity does not
survive the trip from the worker to the judge, so the worker checks it here
and returns plain booleans.
"""
import torch

from autograder.assignment.scenarios.parts import generator
from autograder.authoring import BOOL, ListOf, Record


def unscale_aliasing(unscale_gradients, spec):
    """``{"same_list": bool, "shared": [bool per entry]}``: is the returned list the
    input list, and does each returned tensor share the input's storage?"""
    gen = generator(spec["seed"])
    gradients = [torch.randn(3, generator=gen), None, torch.randn(2, 2, generator=gen).half()]
    returned = unscale_gradients(gradients, spec["scale"])
    shared = []
    for before, after in zip(gradients, returned if isinstance(returned, list) else []):
        shared.append(bool(torch.is_tensor(before) and torch.is_tensor(after)
                           and (after is before or after.data_ptr() == before.data_ptr())))
    return {"same_list": returned is gradients, "shared": shared}


UNSCALE_ALIASING_ANSWER = Record({"same_list": BOOL, "shared": ListOf(BOOL)})  # what the judge accepts back
