"""The judge's reference runs are computed once and shared (judging/reference_cache.py):
every caller gets the same plain values, fresh, whether computed or found."""
import pytest
import torch

from autograder.judging import reference_cache


def setup_function():
    reference_cache.clear()


def _counted(value):
    calls = []

    def compute():
        calls.append(1)
        return value() if callable(value) else value

    return compute, calls


def test_computed_once_and_every_caller_gets_its_own_copy():
    spec = {"seed": 3, "scaler": {"init_scale": 8.0}, "inject": {"1": "inf"}}
    compute, calls = _counted(lambda: {"parameters": [torch.nn.Parameter(torch.tensor([1.5, -2.0]))],
                                       "scales": (8.0, 4.0), "stopped": None, "norm": float("inf")})
    first = reference_cache.cached("run", spec, compute)
    first["parameters"][0].add_(100.0)  # a check that changes what it got
    second = reference_cache.cached("run", dict(reversed(list(spec.items()))), compute)  # same spec, other order
    assert calls == [1]
    assert type(second["parameters"][0]) is torch.Tensor  # plain data, the first caller's too
    assert type(first["parameters"][0]) is torch.Tensor
    assert torch.equal(second["parameters"][0], torch.tensor([1.5, -2.0]))
    assert second["scales"] == (8.0, 4.0) and second["stopped"] is None and second["norm"] == float("inf")
    assert reference_cache.cached("run", {"seed": 4}, compute) is not None and calls == [1, 1]
    assert reference_cache.cached("other kind", spec, compute) is not None and calls == [1, 1, 1]


def test_what_the_codec_cannot_carry_is_never_kept():
    marker = object()
    compute, calls = _counted(lambda: {"thing": marker})
    assert reference_cache.cached("run", {"seed": 1}, compute)["thing"] is marker
    assert reference_cache.cached("run", {"seed": 1}, compute)["thing"] is marker
    assert calls == [1, 1]
    compute, calls = _counted([1, 2])
    reference_cache.cached("run", {"not json": {1, 2}}, compute)
    reference_cache.cached("run", {"not json": {1, 2}}, compute)
    assert calls == [1, 1]


@pytest.mark.slow
def test_gradscaler_update_rule_from_the_cache_is_the_rule_run_afresh():
    """update_scale's reference (GradScaler's own update) is run once per case; the
    cached answer is the fresh one, types included (a float scale, an int tracker)."""
    from autograder.assignment.checks import loss_scaler_checks as checks

    cases = [(1024.0, 0, False, 2.0, 0.5, 1), (96.0, 4, True, 3.0, 0.25, 5), (3e30, 0, False, 10.0, 0.5, 1),
             (48.0, 9, False, 4.0, 0.125, 5)]
    for case in cases:
        fresh = checks._gradscaler_update(*case)
        assert checks.gradscaler_rule(*case) == fresh  # computed
        cached = checks.gradscaler_rule(*case)           # found
        assert cached == fresh and type(cached[0]) is float and type(cached[1]) is int
    assert len(reference_cache._known) == len(cases)
