"""What a hidden test uses to judge plain data coming back from the sandbox.

A failed check raises :class:`Mistake` with a message written for the student:
it names what is wrong (dtype, shape, a ``None`` in the wrong place, values off)
and never the expected numbers of a hidden input. Visible tests may pass
``reveal=True`` to show values.
"""
import math

import torch

from autograder.sandbox.client import Outcome


class Mistake(AssertionError):
    """A student-facing failure of one check."""


class StudentCodeFailed(Exception):
    """The student's code raised, hung, crashed or could not be imported."""

    def __init__(self, error, module_file):
        super().__init__(error.describe(module_file))
        self.error = error
        self.module_file = module_file


def expect(condition, message):
    if not condition:
        raise Mistake(message)


def value_of(outcome: Outcome, module_file):
    """The call's value, or :class:`StudentCodeFailed` if there is none."""
    if not outcome.ok:
        raise StudentCodeFailed(outcome.error, module_file)
    return outcome.value


def raised_type(outcome: Outcome, module_file):
    """The exception class name when the call raised, None when it returned."""
    if outcome.ok:
        return None
    if outcome.error.kind != "exception":
        raise StudentCodeFailed(outcome.error, module_file)
    return outcome.error.type


# Relative tolerance of one elementwise operation, by dtype: two rounding steps.
_EPS = {torch.float64: 2.3e-16, torch.float32: 1.2e-7, torch.float16: 9.8e-4, torch.bfloat16: 7.9e-3}
_TINY = {torch.float64: 1e-300, torch.float32: 1e-37, torch.float16: 1.3e-7, torch.bfloat16: 1e-37}


def dtype_tolerance(dtype, steps=2):
    return steps * _EPS.get(dtype, 1.2e-7), _TINY.get(dtype, 1e-37)


def expect_tensor(value, what, dtype=None, shape=None):
    expect(isinstance(value, torch.Tensor),
           f"{what} should be a torch.Tensor, got {type(value).__name__}.")
    if dtype is not None:
        expect(value.dtype == dtype, f"{what} should have dtype {dtype}, got {value.dtype}.")
    if shape is not None:
        expect(tuple(value.shape) == tuple(shape),
               f"{what} should have shape {tuple(shape)}, got {tuple(value.shape)}.")
    return value


def _describe(actual, expected, reveal):
    if not reveal:
        return ""
    return f"\n  got:      {actual}\n  expected: {expected}"


def expect_close(actual, expected, what, rtol, atol, reveal=False):
    """Elementwise closeness; non-finite entries must match exactly (inf sign, NaN)."""
    expect_tensor(actual, what, shape=expected.shape)
    a, e = actual.double(), expected.double()
    finite = torch.isfinite(e)
    expect(torch.equal(torch.isnan(a), torch.isnan(e)),
           f"{what}: NaN entries are not where they should be." + _describe(actual, expected, reveal))
    expect(torch.equal(a[torch.isinf(e)], e[torch.isinf(e)]) and torch.equal(torch.isinf(a), torch.isinf(e)),
           f"{what}: inf entries are not where they should be." + _describe(actual, expected, reveal))
    close = torch.isclose(a[finite], e[finite], rtol=rtol, atol=atol)
    if not bool(close.all()):
        worst = ((a[finite] - e[finite]).abs() / (e[finite].abs() + atol)).max().item()
        raise Mistake(f"{what}: {int((~close).sum())} of {int(finite.sum())} values are off "
                      f"(largest relative error {worst:.2e}, allowed {rtol:.1e})."
                      + _describe(actual, expected, reveal))


def expect_same_tensors(actual, expected, what, rtol, atol, reveal=False):
    """Two lists of tensors (or None), compared pairwise."""
    expect(isinstance(actual, (list, tuple)), f"{what} should be a list, got {type(actual).__name__}.")
    expect(len(actual) == len(expected),
           f"{what} should have {len(expected)} entries, got {len(actual)}.")
    for index, (a, e) in enumerate(zip(actual, expected)):
        if e is None:
            expect(a is None, f"{what}[{index}] should be None.")
            continue
        expect(a is not None, f"{what}[{index}] is None but should be a tensor.")
        expect_close(a, e, f"{what}[{index}]", rtol, atol, reveal)


def expect_relative_error(actual, expected, what, tolerance):
    """For whole trajectories: ||actual - expected|| / ||expected|| within tolerance,
    parameter by parameter."""
    expect(isinstance(actual, list) and len(actual) == len(expected),
           f"{what}: expected {len(expected)} tensors.")
    for index, (a, e) in enumerate(zip(actual, expected)):
        expect_tensor(a, f"{what}[{index}]", shape=e.shape)
        expect(bool(torch.isfinite(a).all()) == bool(torch.isfinite(e).all()),
               f"{what}[{index}] has non-finite values where the reference has none (or the reverse).")
        if not bool(torch.isfinite(e).all()):
            continue
        scale = e.double().norm().item() or 1.0
        error = (a.double() - e.double()).norm().item() / scale
        expect(error <= tolerance,
               f"{what}[{index}] is off by {error:.1e} (relative), allowed {tolerance:.0e}.")


def expect_updates_close(actual, expected, initial, what, tolerance):
    """Compare what training *changed*: per tensor ||Δactual - Δexpected|| / ||Δexpected||,
    Δ measured from ``initial``. Where the reference did not move a tensor, the
    student's must not move either."""
    expect(isinstance(actual, list) and len(actual) == len(expected),
           f"{what}: expected {len(expected)} tensors.")
    for index, (a, e, start) in enumerate(zip(actual, expected, initial)):
        expect_tensor(a, f"{what}[{index}]", shape=e.shape)
        expect(bool(torch.isfinite(a).all()) or not bool(torch.isfinite(e).all()),
               f"{what}[{index}] has non-finite values after training.")
        moved, wanted = (a.double() - start.double()), (e.double() - start.double())
        if float(wanted.norm()) == 0.0:
            expect(float(moved.norm()) == 0.0, f"{what}[{index}] changed although no step should have "
                                               f"touched it.")
            continue
        error = float((moved - wanted).norm() / wanted.norm())
        expect(error <= tolerance, f"{what}[{index}]: the update is off by {error:.1e} (relative), "
                                   f"allowed {tolerance:.0e}.")


def expect_float_close(actual, expected, what, rel_tol, abs_tol=0.0, reveal=False):
    expect(isinstance(actual, (int, float)) and not isinstance(actual, bool),
           f"{what} should be a Python number, got {type(actual).__name__}.")
    if math.isinf(expected) or math.isnan(expected):
        expect(actual == expected or (math.isnan(expected) and math.isnan(actual)),
               f"{what} should be {expected}." if reveal or math.isinf(expected)
               else f"{what} is wrong.")
        return
    expect(math.isclose(actual, expected, rel_tol=rel_tol, abs_tol=abs_tol),
           f"{what} is off." + _describe(actual, expected, reveal))


def describe_raised(names):
    """'no exception' or 'NotImplementedError: TODO 10: ...' from scenarios.exception_names."""
    if not names:
        return "no exception"
    message = names[-1]
    return f"{names[0]}: {message}" if message else names[0]


def raised_is(names, class_name):
    """Did the scenario record an exception that is (a subclass of) ``class_name``?"""
    return bool(names) and class_name in names[:-1]
