"""What a hidden test uses to judge plain data coming back from the sandbox.

A failed check raises :class:`Mistake` with a catalog message written for the
student: what is wrong (dtype, shape, a ``None`` in the wrong place, values
off), with the failing numbers where they help -- hidden inputs are drawn from
each run's seed, so got/expected values reveal nothing reusable -- and, where
the ratio between them is a known mistake (K, 1/K, the scale ...), its name.
Never the test's source.
"""
import contextlib
import math

import torch

from autograder.judging import call_errors, todo_graph as todos
from autograder.i18n import _
from autograder.sandbox.client import Outcome


class Mistake(AssertionError):
    """A student-facing failure of one check. ``message`` is an
    :class:`autograder.i18n.Message` (or plain text); ``todo`` names the TODO the
    symptom points at when it is not the test's own (see autograder.judging.todo_graph).
    ``hint_applies`` False: the test's hint names another mistake than this one
    (see :func:`hint_only_if`), so the feedback leaves it out."""

    def __init__(self, message, todo=None, hint_applies=True):
        super().__init__(message)
        self.message = message
        self.todo = todo
        self.hint_applies = hint_applies

    def __str__(self):
        return str(self.message)


@contextlib.contextmanager
def hint_only_if(condition):
    """A test's hint names one mistake (say, a sum in too narrow a precision); a check inside
    this block that fails while ``condition`` is False found another one, and its
    feedback goes without that hint."""
    try:
        yield
    except Mistake as mistake:
        if not condition:
            mistake.hint_applies = False
        raise


@contextlib.contextmanager
def builds_on(todo, check):
    """This test's checks use what TODO ``todo`` builds (say, a clip that calls the student's own
    norm): when a check inside the block fails without naming a TODO of its own, ``check()`` asks
    the student's code for TODO ``todo`` about the same inputs, and when it finds a mistake there
    (raises :class:`Mistake`, or the call raised) the failure is blamed on TODO ``todo``, with
    that mistake as its cause. Nested blocks ask the innermost first."""
    try:
        yield
    except Mistake as mistake:
        if mistake.todo is not None:
            raise
        try:
            check()
        except Mistake as cause:
            evidence = cause.message
        except StudentCodeFailed as failed:
            if todos.stub_todo(failed.error.type, failed.error.message):
                raise failed from None  # that TODO is not written yet: the test says so
            if failed.error.kind != "exception":
                raise mistake from None  # a hang or a crash says nothing about TODO ``todo``'s result
            evidence = call_errors.describe(failed.error, failed.module_file)
        else:
            raise
        if str(evidence) == str(mistake.message):  # the same check, failing on the earlier TODO's result
            raise Mistake(evidence, todo) from None
        raise Mistake(_("{symptom}\n  The cause: {evidence}", symptom=mistake.message, evidence=evidence),
                      todo) from None


class StudentCodeFailed(Exception):
    """The student's code raised, hung, crashed or could not be imported."""

    def __init__(self, error, module_file):
        super().__init__(str(call_errors.describe(error, module_file)))
        self.error = error
        self.module_file = module_file


def _holds(condition):
    try:
        return bool(condition)
    except Exception:  # noqa: BLE001 - e.g. a tensor of many values compared with a number: not what is expected
        return False


def expect(condition, message, todo=None):
    if not _holds(condition):
        raise Mistake(message, todo)


def equals(got, want):
    """``got == want`` for a value that came back from a box, which may be anything the wire
    carries: one that cannot say (a tensor of many values against a number) is not equal."""
    try:
        return _holds(got == want)
    except Exception:  # noqa: BLE001 - e.g. tensors of shapes that do not broadcast
        return False


def value_of(outcome: Outcome, module_file):
    """The call's value, or :class:`StudentCodeFailed` if there is none."""
    if not outcome.ok:
        raise StudentCodeFailed(outcome.error, module_file)
    return outcome.value


def raised_type(outcome: Outcome, module_file):
    """The exception class name when the call raised, None when it returned. A stub's
    ``NotImplementedError("TODO n: ...")`` is no answer: it raises :class:`StudentCodeFailed`, as a
    hang does, so that the test reads "TODO n is not written yet" and the diagnosis names the
    first TODO not written rather than this test's, as if a written TODO raised the wrong exception."""
    if outcome.ok:
        return None
    if outcome.error.kind != "exception" or todos.stub_todo(outcome.error.type, outcome.error.message):
        raise StudentCodeFailed(outcome.error, module_file)
    return outcome.error.type


# Relative tolerance of one elementwise operation, by dtype: two rounding steps.
_EPS = {torch.float64: 2.3e-16, torch.float32: 1.2e-7, torch.float16: 9.8e-4, torch.bfloat16: 7.9e-3}
_TINY = {torch.float64: 1e-300, torch.float32: 1e-37, torch.float16: 1.3e-7, torch.bfloat16: 1e-37}


def dtype_tolerance(dtype, steps=2):
    return steps * _EPS.get(dtype, 1.2e-7), _TINY.get(dtype, 1e-37)


def expect_tensor(value, what, dtype=None, shape=None, todo=None):
    expect(isinstance(value, torch.Tensor),
           _("{what} should be a torch.Tensor, got {got}.", what=what, got=type(value).__name__), todo)
    if dtype is not None:
        expect(value.dtype == dtype, _("{what} should have dtype {want}, got {got}.", what=what,
                                       want=str(dtype), got=str(value.dtype)), todo)
    if shape is not None:
        expect(tuple(value.shape) == tuple(shape),
               _("{what} should have shape {want}, got {got}.", what=what, want=str(tuple(shape)),
                 got=str(tuple(value.shape))), todo)
    return value


def _shown(value):
    if torch.is_tensor(value):
        value = value.detach()
        if value.numel() > 8:
            return f"tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
        return str(value.double().tolist() if value.dim() else float(value))
    return repr(value)


def _describe(actual, expected, reveal):
    if not reveal:
        return ""
    return _("\n  got:      {got}\n  expected: {want}", got=_shown(actual), want=_shown(expected))


# Ratios that name a known mistake: got / expected == one of these.
def known_ratio(ratio, factors, rel_tol=1e-3):
    """The name of the factor ``ratio`` equals (``factors``: name -> value), or None."""
    if not (isinstance(ratio, float) and math.isfinite(ratio)) or ratio == 0:
        return None
    for name, value in factors.items():
        if value and value != 1 and math.isclose(ratio, value, rel_tol=rel_tol):
            return name
    return None


def numbers_message(what, got, want, factors=None):
    """'{what}: got X, expected Y (got/expected = r, which is exactly K: ...)'. Hidden
    inputs are random per run, so showing the failing quantity gives nothing away."""
    try:
        got_f, want_f = float(got), float(want)
    except (TypeError, ValueError, RuntimeError):
        return _("{what}: got {got}, expected {want}.", what=what, got=_shown(got), want=_shown(want))
    ratio = got_f / want_f if want_f not in (0.0,) and math.isfinite(want_f) and math.isfinite(got_f) else None
    if ratio is None:
        return _("{what}: got {got:.6g}, expected {want:.6g}.", what=what, got=got_f, want=want_f)
    name = known_ratio(ratio, factors or {})
    if name:
        return _("{what}: got {got:.6g}, expected {want:.6g} (ratio {ratio:.4g}, which is exactly {factor}).",
                 what=what, got=got_f, want=want_f, ratio=ratio, factor=name)
    return _("{what}: got {got:.6g}, expected {want:.6g} (ratio {ratio:.4g}).", what=what, got=got_f,
             want=want_f, ratio=ratio)


def expect_close(actual, expected, what, rtol, atol, reveal=False, todo=None):
    """Elementwise closeness; non-finite entries must match exactly (inf sign, NaN)."""
    expect_tensor(actual, what, shape=expected.shape, todo=todo)
    a, e = actual.double(), expected.double()
    finite = torch.isfinite(e)
    extra = _describe(actual, expected, reveal)
    expect(torch.equal(torch.isnan(a), torch.isnan(e)),
           _("{what}: NaN entries are not where they should be.{extra}", what=what, extra=extra), todo)
    expect(torch.equal(a[torch.isinf(e)], e[torch.isinf(e)]) and torch.equal(torch.isinf(a), torch.isinf(e)),
           _("{what}: inf entries are not where they should be.{extra}", what=what, extra=extra), todo)
    close = torch.isclose(a[finite], e[finite], rtol=rtol, atol=atol)
    if not bool(close.all()):
        worst = ((a[finite] - e[finite]).abs() / (e[finite].abs() + atol)).max().item()
        ratio = _typical_ratio(a[finite], e[finite])
        detail = (_(" Typical got/expected ratio: {ratio:.4g}.", ratio=ratio) if ratio is not None else "")
        raise Mistake(_("{what}: {off} of {count} values are off (largest relative error {worst:.2e}, "
                        "allowed {allowed:.1e}).{detail}{extra}", what=what, off=int((~close).sum()),
                        count=int(finite.sum()), worst=worst, allowed=rtol, detail=detail, extra=extra), todo)


def _typical_ratio(actual, expected):
    """The median of got/expected over clearly non-zero entries (None if there are none)."""
    chosen = expected.abs() > 1e-30
    if not bool(chosen.any()):
        return None
    return float((actual[chosen] / expected[chosen]).median())


def expect_same_tensors(actual, expected, what, rtol, atol, reveal=False, todo=None):
    """Two lists of tensors (or None), compared pairwise."""
    expect(isinstance(actual, (list, tuple)),
           _("{what} should be a list, got {got}.", what=what, got=type(actual).__name__), todo)
    expect(len(actual) == len(expected),
           _("{what} should have {want} entries, got {got}.", what=what, want=len(expected), got=len(actual)), todo)
    for index, (a, e) in enumerate(zip(actual, expected)):
        item = f"{what}[{index}]" if isinstance(what, str) else _("{what}[{index}]", what=what, index=index)
        if e is None:
            expect(a is None, _("{what} should be None.", what=item), todo)
            continue
        expect(a is not None, _("{what} is None but should be a tensor.", what=item), todo)
        expect_close(a, e, item, rtol, atol, reveal, todo)


def expect_relative_error(actual, expected, what, tolerance, todo=None):
    """For whole trajectories: ||actual - expected|| / ||expected|| within tolerance,
    parameter by parameter."""
    expect(isinstance(actual, list) and len(actual) == len(expected),
           _("{what}: expected {count} tensors.", what=what, count=len(expected)), todo)
    for index, (a, e) in enumerate(zip(actual, expected)):
        expect_tensor(a, _("{what}[{index}]", what=what, index=index), shape=e.shape, todo=todo)
        # Position by position: the same NaN and the same signed infinity where the
        # reference has one, and the finite rest compared as usual.
        same_kind = all(bool(torch.equal(test(a), test(e))) for test in (torch.isnan, torch.isposinf, torch.isneginf))
        expect(same_kind, _("{what}[{index}] has non-finite values where the reference has none (or the reverse).",
                            what=what, index=index), todo)
        finite = torch.isfinite(e)
        a, e = a.double()[finite], e.double()[finite]
        scale = e.norm().item() or 1.0
        error = (a - e).norm().item() / scale
        expect(error <= tolerance, _("{what}[{index}] is off by {error:.1e} (relative), allowed {allowed:.0e}.",
                                     what=what, index=index, error=error, allowed=tolerance), todo)


def expect_updates_close(actual, expected, initial, what, tolerance, todo=None, factors=None):
    """Compare what training *changed*: per tensor ||Δactual - Δexpected|| / ||Δexpected||,
    Δ measured from ``initial``. Where the reference did not move a tensor, the
    student's must not move either. ``factors`` (name -> value) name a known
    mistake when the update is off by exactly that factor."""
    expect(isinstance(actual, list) and len(actual) == len(expected),
           _("{what}: expected {count} tensors.", what=what, count=len(expected)), todo)
    for index, (a, e, start) in enumerate(zip(actual, expected, initial)):
        expect_tensor(a, _("{what}[{index}]", what=what, index=index), shape=e.shape, todo=todo)
        expect(bool(torch.isfinite(a).all()) or not bool(torch.isfinite(e).all()),
               _("{what}[{index}] has non-finite values after training.", what=what, index=index), todo)
        moved, wanted = (a.double() - start.double()), (e.double() - start.double())
        if float(wanted.norm()) == 0.0:
            expect(float(moved.norm()) == 0.0,
                   _("{what}[{index}] changed although no step should have touched it.", what=what,
                     index=index), todo)
            continue
        error = float((moved - wanted).norm() / wanted.norm())
        if error > tolerance:
            ratio = float(moved.norm() / wanted.norm())
            name = known_ratio(ratio, factors or {}, rel_tol=1e-2)
            if name:
                raise Mistake(_("{what}[{index}]: the update is off by {error:.1e} (relative), allowed "
                                "{allowed:.0e}; it is {ratio:.4g} times the expected one, which is exactly "
                                "{factor}.", what=what, index=index, error=error, allowed=tolerance,
                                ratio=ratio, factor=name), todo)
            raise Mistake(_("{what}[{index}]: the update is off by {error:.1e} (relative), allowed {allowed:.0e} "
                            "(its size is {ratio:.4g} times the expected one).", what=what, index=index,
                            error=error, allowed=tolerance, ratio=ratio), todo)


def expect_float_close(actual, expected, what, rel_tol, abs_tol=0.0, reveal=True, todo=None, factors=None):
    expect(isinstance(actual, (int, float)) and not isinstance(actual, bool),
           _("{what} should be a Python number, got {got}.", what=what, got=type(actual).__name__), todo)
    if math.isinf(expected) or math.isnan(expected):
        expect(actual == expected or (math.isnan(expected) and math.isnan(actual)),
               _("{what} should be {want}, got {got}.", what=what, want=repr(expected), got=repr(actual)), todo)
        return
    expect(math.isclose(actual, expected, rel_tol=rel_tol, abs_tol=abs_tol),
           numbers_message(what, actual, expected, factors) if reveal else _("{what} is off.", what=what), todo)


def describe_raised(names):
    """'no exception' or 'NotImplementedError: TODO <n>: ...' from scenarios.exception_names."""
    if not names:
        return _("no exception")
    message = (names[-1] or "").rstrip(".")  # messages put their own full stop after it
    unwritten = todos.stub_todo(names[0], message)
    if unwritten:  # a stub's TODO: say so in the run's language, not in the stub's words
        return _("NotImplementedError (TODO {todo} is not written yet)", todo=unwritten)
    return f"{names[0]}: {message}" if message else names[0]


def raised_instead(raised):
    """What a call did instead of raising what it should, as a clause for
    "... should raise X, but {outcome}." (never a bare value: "got no exception"
    does not translate). ``raised``: a :func:`raised_type` name, a scenario's
    exception names, or None / [] when nothing was raised."""
    if isinstance(raised, (list, tuple)):
        raised = describe_raised(raised) if raised else None
    if not raised:
        return _("no exception was raised")
    return _("it raised {error}", error=raised.rstrip(". ") if isinstance(raised, str) else raised)


def raised_is(names, class_name):
    """Did the scenario record an exception that is (a subclass of) ``class_name``?"""
    return bool(names) and class_name in names[:-1]
