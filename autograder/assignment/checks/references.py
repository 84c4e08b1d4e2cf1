"""The reference runs the suites compare students with: a scenario run with
PyTorch's own ``GradScaler('cpu')``. A run depends on its spec alone, so it goes
through the judge's cache (:mod:`autograder.judging.reference_cache`): in a
class it is computed once, not once per student."""
import torch

from autograder.assignment import scenarios
from autograder.authoring import reference_cache


def gradscaler(**options):
    return torch.amp.GradScaler("cpu", **options)


def with_gradscaler(name, spec):
    """``scenarios.<name>`` run with PyTorch's GradScaler on ``spec``."""
    return reference_cache.cached(("gradscaler", name), spec,
                                  lambda: getattr(scenarios, name)(gradscaler, spec))
