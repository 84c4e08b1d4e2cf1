"""Checks behind the amp_update tests (TODO 1-3), shared by the visible and the
hidden suite (nothing here is secret: the hidden suite's inputs and cases stay
in autograder/assignment/hidden/): drawing the inputs from a
seed, float64 references, comparing what the student returned and naming the
known mistakes (got/expected ratios, wrong norms, wrong clip coefficients).

A plan check (TODO 3) that fails runs inside blaming_upstream, which asks the
student's own unscale_gradients and global_grad_norm about the very same
gradients: when one of them is wrong there, the failure is blamed on its TODO
(1 or 2) and says what that function returned; otherwise the plan itself is at fault."""
import contextlib
import math

import torch

from autograder.authoring import (_, Mistake, builds_on, dtype_tolerance, expect, expect_tensor, known_ratio,
                                  numbers_message, value_of)

FILE = "amp_update.py"
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
SHAPES = ((7,), (3, 5), (2, 3, 4), (), (1, 9))
PLAN_KEYS = ("gradients", "grad_norm", "clip_coefficient", "should_step", "next_scale", "reason")


# -- inputs and references ------------------------------------------------------------------
def draw_gradients(gen, count, dtypes=DTYPES, magnitude=1.0, none_every=3):
    """A list of gradients with some None entries. Shapes, dtypes and None
    positions follow the index (the same cases every run); only the values come
    from the seed, so a given implementation passes or fails whatever the seed."""
    gradients = []
    for index in range(count):
        if none_every and index % none_every == 1:
            gradients.append(None)
            continue
        shape, dtype = SHAPES[index % len(SHAPES)], dtypes[index % len(dtypes)]
        gradients.append((torch.randn(shape, generator=gen) * magnitude).to(dtype))
    return gradients


def every_dtype_and_shape(gen, magnitude):
    """One gradient for each dtype and each shape, 0-dim included."""
    return [(torch.randn(shape, generator=gen) * magnitude).to(dtype) for dtype in DTYPES for shape in SHAPES]


def unscaled_reference(gradients, scale):
    return [None if g is None else (g.double() / scale).to(g.dtype) for g in gradients]


def clipped_reference(real, coefficient):
    return [None if g is None else (g.double() * coefficient).to(g.dtype) for g in real]


def flat_norm(gradients):
    squares = sum(float(g.double().square().sum()) for g in gradients if g is not None)
    return math.sqrt(squares)


def coefficient_for(norm, max_norm):
    return min(1.0, max_norm / (norm + 1e-12))


def scale_factors(scale):
    """got/expected ratios that name an unscaling mistake."""
    return {_("scale² (the gradients were multiplied by scale instead of divided by it)"): scale * scale,
            _("scale (the gradients were not divided by scale)"): scale,
            _("1/scale (the gradients were divided by scale twice)"): 1.0 / scale}


# -- comparing ---------------------------------------------------------------------------------
def kind_of(value):
    return "None" if value is None else type(value).__name__


def expect_values(actual, expected, what, factors=None, todo=None, extra_rtol=0.0):
    """Values of one tensor (dtype and shape already checked); on failure: how many
    are off, inf/NaN that appeared or vanished, the typical got/expected ratio (named
    when it is a known mistake) and one wrong entry as an example."""
    rtol, atol = dtype_tolerance(expected.dtype)
    rtol += extra_rtol
    a, e = actual.detach().double().reshape(-1), expected.detach().double().reshape(-1)
    both = torch.isfinite(a) & torch.isfinite(e)
    good = torch.zeros_like(both)
    good[both] = torch.isclose(a[both], e[both], rtol=rtol, atol=atol)
    good |= (torch.isnan(a) & torch.isnan(e)) | (torch.isinf(a) & (a == e))
    if bool(good.all()):
        return
    wrong = int((~good).sum())
    appeared = int((~torch.isfinite(a) & torch.isfinite(e)).sum())
    vanished = int((torch.isfinite(a) & ~torch.isfinite(e)).sum())
    ratio_note = ""
    chosen = both & (e.abs() > 1e-30)
    if bool(chosen.any()):
        ratio = float((a[chosen] / e[chosen]).median())
        name = known_ratio(ratio, factors or {}, rel_tol=max(1e-3, 2 * rtol))
        if ratio == 0.0 and bool((a[chosen] == 0).all()):
            ratio_note = _(" Every finite value came out 0.")
        elif name:
            ratio_note = _(" Typical got/expected ratio {ratio:.4g}, which is exactly {factor}.", ratio=ratio,
                           factor=name)
        else:
            ratio_note = _(" Typical got/expected ratio {ratio:.4g}.", ratio=ratio)
    position = int((~good).nonzero()[0])
    raise Mistake(_("{what} ({dtype}): {wrong} of {count} values are off.{appeared}{vanished}{ratio} For example, "
                    "entry {position}: got {got:.6g}, expected {want:.6g}.", what=what, dtype=str(expected.dtype),
                    wrong=wrong, count=e.numel(),
                    appeared=_(" {count} of them came out inf or NaN.", count=appeared) if appeared else "",
                    vanished=_(" {count} inf/NaN values came out finite.", count=vanished) if vanished else "",
                    ratio=ratio_note, position=position, got=float(a[position]), want=float(e[position])), todo)


def expect_tensor_values(actual, expected, what, factors=None, todo=None):
    """One tensor: its type, dtype and shape, then its values (expect_values)."""
    expect_tensor(actual, what, dtype=expected.dtype, shape=expected.shape, todo=todo)
    expect_values(actual, expected, what, factors, todo)


def check_gradients(actual, expected, what, factors=None, todo=None, extra_rtol=0.0):
    expect(isinstance(actual, list), _("{what} should be a list, got {got}.", what=what, got=kind_of(actual)), todo)
    expect(len(actual) == len(expected), _("{what} should have {want} entries (one per parameter), got {got}.",
                                           what=what, want=len(expected), got=len(actual)), todo)
    for index, (a, e) in enumerate(zip(actual, expected)):
        item = _("{what}[{index}]", what=what, index=index)
        if e is None:
            expect(a is None, _("{what} should stay None (that parameter has no gradient), got {got}.",
                                what=item, got=kind_of(a)), todo)
            continue
        expect(a is not None, _("{what} is None, but that parameter has a gradient.", what=item), todo)
        expect_tensor(a, item, dtype=e.dtype, shape=e.shape, todo=todo)
        expect_values(a, e, item, factors, todo, extra_rtol)


def same_tensors(a, b):
    return (a is None) == (b is None) and (a is None or (
        torch.is_tensor(a) and a.dtype == b.dtype and a.shape == b.shape
        and torch.equal(torch.nan_to_num(a, nan=1.5), torch.nan_to_num(b, nan=1.5))
        and torch.equal(torch.isnan(a), torch.isnan(b))))


def expect_inputs_untouched(after, before, scale, todo=None):
    """``after``: the input list as the call left it; ``before``: copies taken before."""
    expect(isinstance(after, list) and len(after) == len(before),
           _("the input list was changed by the call (entries added or removed)."), todo)
    for index, (a, e) in enumerate(zip(after, before)):
        if same_tensors(a, e):
            continue
        if torch.is_tensor(a) and torch.is_tensor(e) and a.shape == e.shape and bool(torch.isfinite(e).all()):
            chosen = e.double().abs() > 1e-30
            if bool(chosen.any()):
                ratio = float((a.double()[chosen] / e.double()[chosen]).median())
                name = known_ratio(ratio, {_("1/scale: the input now holds g / scale (divided in place, or written back into the list)"): 1.0 / scale})
                if name:
                    raise Mistake(_("the input gradient at position {index} was changed by the call: it is now "
                                    "{ratio:.4g} times what was passed in, which is exactly {factor}.",
                                    index=index, ratio=ratio, factor=name), todo)
        raise Mistake(_("the input gradient at position {index} was changed by the call (now {got}, "
                        "was a tensor of dtype {dtype}).", index=index,
                        got=str(a.dtype) if torch.is_tensor(a) else kind_of(a),
                        dtype=str(e.dtype) if torch.is_tensor(e) else "None"), todo)


def named_value(got, want, candidates):
    """The name of the candidate that explains ``got`` (much closer to it than
    ``want`` is, and itself clearly different from ``want``), or None."""
    gap = abs(got - want)
    for name, value in candidates.items():
        if math.isinf(got) or math.isinf(value):
            if got == value and not math.isinf(want):
                return name
            continue
        if abs(value - want) > 0.5 * gap and abs(got - value) <= 0.05 * gap:
            return name
    return None


def close_numbers_message(what, got, want, factors=None):
    """numbers_message, with the relative error when got/expected rounds to 1."""
    if math.isfinite(got) and want and abs(got / want - 1) < 1e-2:
        return _("{what}: got {got:.7g}, expected {want:.7g} (relative error {error:.1e}).", what=what, got=got,
                 want=want, error=abs(got / want - 1))
    return numbers_message(what, got, want, factors)


def expect_norm_value(norm, want, what, candidates=None, todo=None, rel_tol=1e-5, factors=None):
    got = float(norm)
    if math.isclose(got, want, rel_tol=rel_tol, abs_tol=1e-30):
        return
    name = named_value(got, want, candidates or {})
    if name:
        raise Mistake(_("{what}: got {got:.6g}, expected {want:.6g}; what came back is {mistake}.", what=what,
                        got=got, want=want, mistake=name), todo)
    raise Mistake(close_numbers_message(what, got, want, factors), todo)


def own_dtype_norm(gradients):
    """The norm whose squares are summed in each gradient's own dtype (inf where FP16 squares overflow)."""
    low = 0.0
    for g in gradients:
        if g is not None:
            low += float(g.square().sum().float())
    return math.sqrt(low)


def squares_in_own_dtype(got, gradients):
    """Does the norm ``got`` come from squares summed in the gradients' own dtype (not FP32)? True
    when it is not finite or nearer that value than the right one: the condition of the hints
    that say "convert to FP32 before squaring"."""
    right, low = flat_norm(gradients), own_dtype_norm(gradients)
    return not math.isfinite(got) or abs(got - low) < abs(got - right)


def norm_candidates(gradients):
    """Values that common wrong norms give for ``gradients``."""
    present = [g for g in gradients if g is not None]
    norms = [float(g.double().norm()) for g in present]
    candidates = {}
    if len(norms) > 1 and norms[-1] == max(norms):
        candidates[_("the norm of the last tensor alone, which is also the largest: a maximum, or a sum of squares "
                     "that was overwritten instead of accumulated")] = norms[-1]
    candidates.update({
        _("the largest per-tensor norm, not one norm over all tensors"): max(norms),
        _("the last tensor's norm alone (the sum of squares was overwritten instead of accumulated)"): norms[-1],
        _("the sum of the per-tensor norms, not the square root of the sum of all squares"): sum(norms),
        _("the sum of squares without the square root"): sum(n * n for n in norms),
        _("the norm with the squares summed in the gradients' own dtype instead of FP32"): own_dtype_norm(present),
    })
    return candidates


# -- calling -----------------------------------------------------------------------------------
def norm_of(student, gradients, todo=None):
    norm = value_of(student.call("global_grad_norm", gradients), FILE)
    expect_tensor(norm, _("the norm"), dtype=torch.float32, shape=(), todo=todo)
    return norm


def plan_of(student, *args, **kwargs):
    return plan_value(student.call("plan_mixed_precision_update", *args, **kwargs))


def plan_value(outcome):
    plan = value_of(outcome, FILE)
    expect(isinstance(plan, dict),
           _("plan_mixed_precision_update should return a dict, got {got}.", got=kind_of(plan)))
    missing = [key for key in PLAN_KEYS if key not in plan]
    expect(not missing, _("the plan has no {keys} entry.", keys=", ".join(repr(key) for key in missing)))
    return plan


def unscale_fault(student, scaled, scale):
    """Raises a Mistake when the student's unscale_gradients (TODO 1) is wrong on these very gradients."""
    if not (isinstance(scale, (int, float)) and scale > 0):
        return
    outcome = student.call_watching_inputs("unscale_gradients", scaled, scale)
    if not outcome.ok:
        if outcome.error.kind == "exception":
            raise Mistake(_("unscale_gradients raises {error} on these gradients.", error=outcome.error.headline()))
        return
    check_gradients(outcome.value, unscaled_reference(scaled, scale), _("unscale_gradients on the same gradients"),
                    scale_factors(scale))
    expect_inputs_untouched(outcome.args_after[0] if outcome.args_after else None, scaled, scale)


def norm_fault(student, scaled, scale):
    """Raises a Mistake when the student's global_grad_norm (TODO 2) is wrong on the real gradients."""
    if not (isinstance(scale, (int, float)) and scale > 0):
        return
    real = unscaled_reference(scaled, scale)
    if not all(g is None or bool(torch.isfinite(g).all()) for g in real):
        return
    outcome = student.call("global_grad_norm", real)
    if not outcome.ok:
        if outcome.error.kind == "exception":
            raise Mistake(_("global_grad_norm raises {error} on the real gradients.", error=outcome.error.headline()))
        return
    norm = expect_tensor(outcome.value, _("global_grad_norm of the real gradients"), dtype=torch.float32, shape=())
    expect_norm_value(norm, flat_norm(real), _("global_grad_norm of the real gradients"), norm_candidates(real))


@contextlib.contextmanager
def blaming_upstream(student, scaled, scale):
    """A plan check that fails is blamed on TODO 1 or 2 when that function is the cause (TODO 1 asked first)."""
    with builds_on(2, lambda: norm_fault(student, scaled, scale)), \
            builds_on(1, lambda: unscale_fault(student, scaled, scale)):
        yield


def expect_number(value, what):
    expect(isinstance(value, (int, float)) and not isinstance(value, bool),
           _("{what} should be a Python number, got {got}.", what=what, got=kind_of(value)))


def grad_norm_value(plan):
    norm = expect_tensor(plan["grad_norm"], _("grad_norm"), dtype=torch.float32)
    expect(norm.numel() == 1, _("grad_norm should hold one number, got shape {shape}.", shape=str(tuple(norm.shape))))
    return float(norm)


def expect_finite_plan(plan, scaled, scale, max_norm, extra_rtol=2e-6):
    """Every value of a plan whose gradients are all finite."""
    real = unscaled_reference(scaled, scale)
    norm = flat_norm(real)
    coefficient = coefficient_for(norm, max_norm)
    expect(plan["should_step"] is True,
           _("should_step should be True for finite gradients, got {got!r}.", got=plan["should_step"]))
    expect(plan["reason"] == "finite_gradient",
           _("reason should be 'finite_gradient', got {got!r}.", got=plan["reason"]))
    got_norm = grad_norm_value(plan)
    candidates = {
        _("the norm of the scaled gradients: it was measured before unscaling"): norm * scale,
        _("the norm after clipping: grad_norm must be the norm before clipping"): norm * coefficient,
    }
    expect_norm_value(got_norm, norm, _("grad_norm"), candidates, factors=scale_factors(scale))
    got = plan["clip_coefficient"]
    expect(isinstance(got, float), _("clip_coefficient should be a Python float, got {got}.", got=kind_of(got)))
    if not math.isclose(got, coefficient, rel_tol=1e-5):
        if got > 1.0:
            raise Mistake(_("clip_coefficient: got {got:.6g}, expected {want:.6g}: grad_norm {norm:.6g} is below "
                            "max_norm {max_norm:.6g}, and a coefficient above 1 would enlarge the gradients.",
                            got=got, want=coefficient, norm=norm, max_norm=max_norm))
        if got < 1.0 and coefficient == 1.0:
            raise Mistake(_("clip_coefficient: got {got:.6g}, expected 1: grad_norm {norm:.6g} is below max_norm "
                            "{max_norm:.6g}, so nothing is clipped.", got=got, norm=norm, max_norm=max_norm))
        if got == 1.0:
            raise Mistake(_("clip_coefficient: got 1, expected {want:.6g}: grad_norm {norm:.6g} is above "
                            "max_norm {max_norm:.6g}, so the gradients must be clipped.",
                            want=coefficient, norm=norm, max_norm=max_norm))
        raise Mistake(close_numbers_message(_("clip_coefficient"), got, coefficient, {
            _("max_norm / norm without the 1e-12"): (max_norm / norm) / coefficient if norm else 0.0}))
    check_gradients(plan["gradients"], clipped_reference(real, coefficient), _("the clipped gradients"), {
        _("1/clip_coefficient (the gradients were not clipped)"): 1.0 / coefficient,
        _("clip_coefficient (the gradients were clipped twice)"): coefficient}, extra_rtol=extra_rtol)
    expect_number(plan["next_scale"], _("next_scale"))
    expect(plan["next_scale"] == scale, numbers_message(_("next_scale after a finite step (it must stay the scale)"),
                                                        plan["next_scale"], scale))


def expect_skip_plan(plan, scaled, scale, backoff):
    """Every value of a plan that must skip (some gradient is inf or NaN)."""
    expect(plan["should_step"] is False,
           _("should_step should be False when a gradient is inf or NaN, got {got!r}.", got=plan["should_step"]))
    expect(plan["reason"] == "non_finite_gradient",
           _("reason should be 'non_finite_gradient', got {got!r}.", got=plan["reason"]))
    expect_number(plan["next_scale"], _("next_scale"))
    expect(math.isclose(plan["next_scale"], scale * backoff, rel_tol=1e-9),
           numbers_message(_("next_scale after an overflow"), plan["next_scale"], scale * backoff, {
               _("1/backoff_factor (the scale was not backed off)"): 1.0 / backoff,
               _("0.5/backoff_factor (0.5 was used instead of the backoff_factor passed in)"): 0.5 / backoff}))
    got = plan["clip_coefficient"]
    expect(isinstance(got, float) and got == 0.0,
           _("clip_coefficient should be the float 0.0 on a skip, got {got!r}.", got=got))
    norm = grad_norm_value(plan)
    expect(math.isinf(norm) and norm > 0, _("grad_norm should be +inf on a skip, got {got}.", got=norm))
    check_gradients(plan["gradients"], unscaled_reference(scaled, scale), _("the gradients on a skip"),
                    scale_factors(scale))
