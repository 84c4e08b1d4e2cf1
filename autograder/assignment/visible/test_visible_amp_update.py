"""Visible tests for amp_update: the chapter's four Step 4 tests, graded, the public tests' other
checks, and one test for each clause of the contract the chapter's tests leave open (the norm of
nothing and of inf, the finite check after unscaling, the gradients on a skip, a coefficient of
1 below max_norm), so that a local grade sees every mistake that costs points.
Their inputs are fixed; the hidden suite draws its own.

A plan test (TODO 3) whose numbers are wrong first asks the student's own
unscale_gradients and global_grad_norm about the same gradients; when one of
them is wrong there, the failure is blamed on its TODO (1 or 2)."""
import math

import pytest
import torch

from autograder.assignment.checks.amp_update_checks import (PLAN_KEYS, blaming_upstream, check_gradients,
                                                            expect_finite_plan, expect_norm_value, expect_skip_plan,
                                                            expect_tensor_values, kind_of, norm_candidates,
                                                            scale_factors, squares_in_own_dtype, unscaled_reference)
from autograder.authoring import (_, Mistake, equals, expect, expect_close, expect_tensor, hint_only_if,
                                  numbers_message, value_of)

pytestmark = [pytest.mark.module("amp_update"), pytest.mark.visibility("visible")]
FILE = "amp_update.py"


def plan_of(student, *args, **kwargs):
    plan = value_of(student.call("plan_mixed_precision_update", *args, **kwargs), FILE)
    expect(isinstance(plan, dict),
           _("plan_mixed_precision_update should return a dict, got {got}.", got=kind_of(plan)))
    missing = [key for key in PLAN_KEYS if key not in plan]
    expect(not missing, _("the plan has no {keys} entry.", keys=", ".join(repr(key) for key in missing)))
    extra = sorted(str(key) for key in plan if key not in PLAN_KEYS)
    expect(not extra, _("the plan has keys the contract does not define: {keys}.", keys=", ".join(extra)))
    return plan


@pytest.mark.points(1)
@pytest.mark.todo(1)
@pytest.mark.hint(_("unscale_gradients: divide each gradient by scale into a new tensor (no in-place division); "
                    "keep None in its place."))
def test_unscale_without_mutation(student):
    """unscale_gradients restores the real scale and leaves its input alone"""
    source = torch.tensor([6.0, 8.0])
    outcome = student.call_watching_inputs("unscale_gradients", [source, None], 2.0)
    gradients = value_of(outcome, FILE)
    expect(isinstance(gradients, list) and len(gradients) == 2,
           _("expected a list of 2 entries, got {got}.", got=repr(gradients)))
    expect_tensor_values(gradients[0], torch.tensor([3.0, 4.0]), _("gradients[0]"), scale_factors(2.0))
    expect(gradients[1] is None, _("gradients[1] should stay None, got {got}.", got=kind_of(gradients[1])))
    inputs = outcome.args_after[0] if outcome.args_after else None
    after = inputs[0] if isinstance(inputs, list) and inputs else None
    expect_tensor(after, _("the input tensor after the call"))
    expect(torch.equal(after, source), _("the input tensor was changed by the call: it is now {got}, it was "
                                         "{want}.", got=str(after.tolist()), want=str(source.tolist())))


@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: add each tensor's FP32 sum of squares to the running sum, then take one "
                    "square root at the end."))
def test_global_norm_across_parameters(student):
    """global_grad_norm of [3, 4] and [12] is 13"""
    norm = value_of(student.call("global_grad_norm", [torch.tensor([3.0, 4.0]), torch.tensor([12.0])]), FILE)
    expect_tensor(norm, _("the norm"), dtype=torch.float32, shape=())
    known = {5.0: _("the norm of [3, 4] alone"),
             12.0: _("the norm of [12] alone, the largest and the last tensor: a maximum, or a sum of squares that "
                     "was overwritten instead of accumulated"),
             17.0: _("the sum of the two tensors' norms"), 169.0: _("the sum of squares without the square root")}
    got = float(norm)
    mistake = next((name for value, name in known.items() if math.isclose(got, value, rel_tol=1e-6)), None)
    if mistake:
        raise Mistake(_("the norm: got {got:g}, expected 13 = sqrt(3² + 4² + 12²); {got:g} is {mistake}.",
                        got=got, mistake=mistake))
    expect_close(norm, torch.tensor(13.0), _("the norm"), 1e-6, 0.0, reveal=True)


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("plan_mixed_precision_update: unscale, check finiteness, then the norm of the real gradients "
                    "and clipping by min(1, max_norm / (norm + 1e-12))."))
def test_finite_update_and_clipping(student):
    """a finite [6, 8] at scale 2 with max_norm 2.5 is clipped by 0.5 and stepped"""
    scaled = [torch.tensor([6.0, 8.0])]
    plan = plan_of(student, scaled, scale=2.0, max_norm=2.5)
    with blaming_upstream(student, scaled, 2.0):
        expect(plan["should_step"] is True, _("should_step should be True, got {got!r}.", got=plan["should_step"]))
        norm = plan["grad_norm"]
        expect_tensor(norm, _("grad_norm"), dtype=torch.float32)
        expect(norm.numel() == 1, _("grad_norm should hold one number, got shape {shape}.",
                                    shape=str(tuple(norm.shape))))
        expect(math.isclose(float(norm), 5.0, rel_tol=1e-6), numbers_message(
            _("grad_norm (the norm of the real gradient [3, 4])"), float(norm), 5.0, {
                # here the clip coefficient is also 1/scale: either mistake gives 0.5
                _("both the clip coefficient 0.5 and 1/scale: the norm after clipping (report the one before), "
                  "or gradients divided by the scale twice"): 0.5,
                _("the scale 2 (this is the norm of the scaled gradients, measured before unscaling)"): 2.0,
                _("scale² (the gradients were multiplied by scale instead of divided by it)"): 4.0}))
        coefficient = plan["clip_coefficient"]
        expect(isinstance(coefficient, float), _("clip_coefficient should be a Python float, got {got}.",
                                                 got=kind_of(coefficient)))
        if abs(coefficient - 1.0) < 1e-6:
            raise Mistake(_("clip_coefficient: got 1.0, expected 0.5 = max_norm 2.5 / norm 5: the norm is above "
                            "max_norm, so the gradients must be clipped."))
        if abs(coefficient - 2.0) < 1e-6:
            raise Mistake(_("clip_coefficient: got 2.0, expected 0.5 = max_norm 2.5 / norm 5: the division is "
                            "inverted (norm / max_norm)."))
        expect(abs(coefficient - 0.5) < 1e-6,
               numbers_message(_("clip_coefficient (max_norm 2.5 / norm 5)"), coefficient, 0.5))
        expect(isinstance(plan["gradients"], list) and len(plan["gradients"]) == 1,
               _("gradients should be a list of 1 entry, got {got}.", got=kind_of(plan["gradients"])))
        expect_tensor_values(plan["gradients"][0], torch.tensor([1.5, 2.0]), _("gradients[0] (clipped)"),
                             {_("2 = 1/clip coefficient (the gradients were not clipped)"): 2.0})
        expect(equals(plan["next_scale"], 2.0) and plan["reason"] == "finite_gradient",
               _("next_scale should stay 2.0 and reason be 'finite_gradient', got {scale!r} and {reason!r}.",
                 scale=plan["next_scale"], reason=plan["reason"]))


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("plan_mixed_precision_update: a non-finite gradient skips the step (should_step False) and "
                    "backs the scale off to scale * backoff_factor."))
def test_overflow_skips_update(student):
    """an inf gradient skips the step and backs the scale off from 1024 to 512"""
    scaled = [torch.tensor([float("inf")])]
    plan = plan_of(student, scaled, scale=1024.0, max_norm=1.0)
    with blaming_upstream(student, scaled, 1024.0):
        expect(plan["should_step"] is False, _("should_step should be False, got {got!r}.", got=plan["should_step"]))
        expect(plan["next_scale"] == 512.0, _("next_scale should be 512.0 (1024 * 0.5), got {got!r}.",
                                              got=plan["next_scale"]))
        expect(plan["reason"] == "non_finite_gradient",
               _("reason should be 'non_finite_gradient', got {got!r}.", got=plan["reason"]))


# -- the public tests' other checks (exercises/tests/test_amp_update.py), graded here too ------------
@pytest.mark.points(1)
@pytest.mark.todo(1)
@pytest.mark.hint(_("unscale_gradients: every gradient comes back as a new tensor g / scale in its own dtype (FP16 "
                    "stays FP16, BF16 stays BF16), for every positive scale: at scale 1 too (a copy, never the input "
                    "tensor), below 1, and above FP16's maximum 65504 (keep scale a Python number: as an FP16 tensor "
                    "65536 is inf)."))
def test_unscale_keeps_dtype(student):
    """FP16 and BF16 gradients come back unscaled in their own dtype, as new tensors, at scales 4, 65536, 0.25 and 1"""
    scaled = [torch.tensor([2.0, -4.0], dtype=torch.float16), torch.tensor([8.0], dtype=torch.bfloat16)]
    gradients = value_of(student.call("unscale_gradients", scaled, 4.0), FILE)
    expect(isinstance(gradients, list) and len(gradients) == 2,
           _("unscale_gradients should return a list of 2 entries, got {got}.", got=kind_of(gradients)))
    for index, (got, want) in enumerate(zip(gradients, (torch.tensor([0.5, -1.0], dtype=torch.float16),
                                                        torch.tensor([2.0], dtype=torch.bfloat16)))):
        expect_tensor_values(got, want, _("gradients[{index}]", index=index), scale_factors(4.0))
    for scaled, scale in (([torch.tensor([30000.0, -2048.0, 8.0], dtype=torch.float16), None,
                            torch.tensor([65536.0, -131072.0])], 65536.0),
                          ([torch.tensor([1.0, -2.0]), torch.tensor([0.5], dtype=torch.bfloat16)], 0.25)):
        gradients = value_of(student.call("unscale_gradients", scaled, scale), FILE)
        check_gradients(gradients, unscaled_reference(scaled, scale),
                        _("unscale_gradients(gradients, scale={scale:g})", scale=scale), scale_factors(scale))
    seen = value_of(student.scenario("unscale_aliasing", {"seed": 38, "scale": 1.0}), FILE)
    expect(not seen["same_list"] and not any(seen["shared"]),
           _("unscale_gradients(..., scale={scale:g}) returned the input list, or tensors that share memory "
             "with the inputs: build a new list of new tensors, also when scale is 1.", scale=1.0))


@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: convert each gradient to FP32 before squaring: FP16 squares above 65504 "
                    "overflow to inf."))
def test_global_norm_fp16_does_not_overflow(student):
    """global_grad_norm of FP16 [300, 400] is 500, not inf"""
    gradients = [torch.tensor([300.0, 400.0], dtype=torch.float16)]
    norm = value_of(student.call("global_grad_norm", gradients), FILE)
    expect_tensor(norm, _("the norm"), dtype=torch.float32, shape=())
    if squares_in_own_dtype(float(norm), gradients):
        expect(math.isclose(float(norm), 500.0, rel_tol=1e-6),
               _("the norm of FP16 [300, 400]: got {got:g}, expected 500 = sqrt(300² + 400²); 300² = 90000 is above "
                 "FP16's largest value 65504, so square in FP32.", got=float(norm)))
    with hint_only_if(False):  # another mistake than FP16 squares: the norm names it
        expect_norm_value(norm, 500.0, _("the norm of FP16 [300, 400]"), norm_candidates(gradients))


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("plan_mixed_precision_update: unscale first; the norm and the clip coefficient come from the "
                    "real-scale gradients."))
def test_clipping_uses_the_real_scale_norm(student):
    """with scale 65536, [3, 4] × 65536 clips by max_norm 1 / real norm 5 = 0.2"""
    scaled = [torch.tensor([3.0, 4.0]) * 65536.0]
    plan = plan_of(student, scaled, scale=65536.0, max_norm=1.0)
    with blaming_upstream(student, scaled, 65536.0):
        coefficient = plan["clip_coefficient"]
        expect(isinstance(coefficient, float), _("clip_coefficient should be a Python float, got {got}.",
                                                 got=kind_of(coefficient)))
        expect(math.isclose(coefficient, 0.2, rel_tol=1e-6),
               numbers_message(_("clip_coefficient (max_norm 1 / real norm 5)"), coefficient, 0.2,
                               {_("1/65536 (the norm of the still-scaled gradients was used)"): 1 / 65536}))
        expect(isinstance(plan["gradients"], list) and len(plan["gradients"]) == 1,
               _("gradients should be a list of 1 entry, got {got}.", got=kind_of(plan["gradients"])))
        expect_tensor_values(plan["gradients"][0], torch.tensor([0.6, 0.8]), _("gradients[0] (clipped)"),
                             scale_factors(65536.0))


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("finite check: NaN counts as non-finite too, in every tensor, not only the first one "
                    "(torch.isfinite(...).all() on each)."))
def test_nan_in_a_later_tensor_skips(student):
    """a NaN in the last of three gradients (one None between) skips the step"""
    scaled = [torch.tensor([1.0, 2.0]), None, torch.tensor([3.0, float("nan")])]
    plan = plan_of(student, scaled, scale=8.0, max_norm=1.0, backoff_factor=0.25)
    expect(plan["should_step"] is False,
           _("should_step should be False when the last gradient holds a NaN, got {got!r}.", got=plan["should_step"]))
    expect(plan["reason"] == "non_finite_gradient",
           _("reason should be 'non_finite_gradient', got {got!r}.", got=plan["reason"]))
    expect(plan["next_scale"] == 2.0, _("next_scale should be 8 × backoff_factor 0.25 = 2.0, got {got!r}.",
                                        got=plan["next_scale"]))
    norm = plan["grad_norm"]
    norm_text = repr(float(norm)) if isinstance(norm, torch.Tensor) and norm.numel() == 1 else kind_of(norm)
    expect(equals(plan["clip_coefficient"], 0.0) and norm_text == "inf",
           _("on a skip clip_coefficient should be 0.0 and grad_norm inf, got {coefficient!r} and {norm}.",
             coefficient=plan["clip_coefficient"], norm=norm_text))


# -- the contract's clauses the chapter's tests leave open, one test each ------------------------
@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: skip None entries; with nothing to add the norm is the 0-dim FP32 zero, and the "
                    "norm of gradients holding inf or NaN is not finite (keep the plain sum of squares, no sentinel)."))
def test_global_norm_of_none_nothing_and_inf(student):
    """global_grad_norm skips None, is 0 for [] and not finite for an inf gradient"""
    for gradients, label, want in (([None, torch.tensor([0.0, 2.0])], "[None, [0, 2]]", 2.0), ([], "[]", 0.0),
                                   ([None, None], "[None, None]", 0.0)):
        norm = value_of(student.call("global_grad_norm", gradients), FILE)
        expect_tensor(norm, _("global_grad_norm({case})", case=label), dtype=torch.float32, shape=())
        expect(float(norm) == want, _("global_grad_norm({case}) should be {want:g}, got {got:.6g}.", case=label,
                                      want=want, got=float(norm)))
    norm = value_of(student.call("global_grad_norm", [torch.tensor([1.0, 2.0]), None,
                                                      torch.tensor([3.0, float("inf")])]), FILE)
    expect_tensor(norm, _("the norm"), dtype=torch.float32, shape=())
    expect(not math.isfinite(float(norm)),
           _("global_grad_norm of gradients holding one {value} returned {got:.6g}: the norm of a non-finite "
             "gradient is not finite (the plan skips before it ever asks for a norm, so nothing else needs a "
             "finite stand-in).", value="inf", got=float(norm)))


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("finite check: check every element of the real (unscaled) gradients with torch.isfinite: an FP16 "
                    "gradient divided by a scale below 1 can overflow, and an FP16 sum can overflow although every "
                    "element is finite."))
def test_finite_check_after_unscaling_element_by_element(student):
    """FP16 40000 at scale 0.5 skips (unscaled it is inf); FP16 3 × 30000 steps (only their sum overflows)"""
    scaled = [torch.tensor([40000.0, 1.0], dtype=torch.float16)]
    plan = plan_of(student, scaled, scale=0.5, max_norm=1.0)
    with blaming_upstream(student, scaled, 0.5):
        expect(plan["should_step"] is False,
               _("{value:g} (FP16) / 0.5 is inf in FP16, so the step must be skipped; should_step is {got!r}.",
                 value=40000.0, got=plan["should_step"]))
    large = [torch.full((3,), 30000.0, dtype=torch.float16)]
    plan = plan_of(student, large, scale=1.0, max_norm=1e6)
    with blaming_upstream(student, large, 1.0):
        expect(plan["should_step"] is True,
               _("FP16 [30000, 30000, 30000] is finite in every element (only its FP16 sum, 90000, overflows), so "
                 "the step goes through; should_step is {got!r}.", got=plan["should_step"]))
        expect_finite_plan(plan, large, 1.0, 1e6)


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("skip branch: return the unscaled (not clipped) gradients, grad_norm inf, clip_coefficient 0.0 "
                    "and next_scale = scale * backoff_factor."))
def test_skip_returns_the_unscaled_gradients(student):
    """a skipped plan returns the unscaled gradients, not clipped ones, with grad_norm inf"""
    scaled = [torch.tensor([8.0, float("inf"), -4.0]), None, torch.tensor([2.0, 6.0])]
    plan = plan_of(student, scaled, scale=2.0, max_norm=0.1, backoff_factor=0.25)
    with blaming_upstream(student, scaled, 2.0):
        expect_skip_plan(plan, scaled, 2.0, 0.25)


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("clipping: the coefficient is min(1.0, max_norm / (norm + 1e-12)): exactly 1.0 when the norm is "
                    "below max_norm (the gradients are then the unscaled ones), and the 1e-12 keeps all-zero "
                    "gradients from dividing by zero."))
def test_clip_coefficient_is_one_below_max_norm(student):
    """below max_norm the clip coefficient is 1.0, also for all-zero gradients"""
    for scaled, scale, max_norm in (([torch.tensor([6.0, 8.0])], 2.0, 10.0),
                                    ([torch.zeros(3), None, torch.zeros(2, dtype=torch.float16)], 1024.0, 1.0)):
        plan = plan_of(student, scaled, scale=scale, max_norm=max_norm)
        with blaming_upstream(student, scaled, scale):
            expect_finite_plan(plan, scaled, scale, max_norm)
