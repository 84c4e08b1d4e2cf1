"""Visible tests for amp_update: the chapter's four Step 4 tests, graded.

A plan test (TODO 3) whose numbers are wrong first asks the student's own
unscale_gradients and global_grad_norm about the same gradients; when one of
them is wrong there, the failure is blamed on its TODO (1 or 2)."""
import math

import pytest
import torch

from autograder.assignment.checks.amp_update_checks import (blaming_upstream, expect_tensor_values,
                                                            kind_of, scale_factors)
from autograder.authoring import _, Mistake, expect, expect_close, expect_tensor, numbers_message, value_of

pytestmark = [pytest.mark.module("amp_update"), pytest.mark.visibility("visible")]
FILE = "amp_update.py"


def plan_of(student, *args, **kwargs):
    plan = value_of(student.call("plan_mixed_precision_update", *args, **kwargs), FILE)
    expect(isinstance(plan, dict),
           _("plan_mixed_precision_update should return a dict, got {got}.", got=kind_of(plan)))
    missing = [key for key in ("gradients", "grad_norm", "clip_coefficient", "should_step", "next_scale", "reason")
               if key not in plan]
    expect(not missing, _("the plan has no {keys} entry.", keys=", ".join(repr(key) for key in missing)))
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
    after = outcome.args_after[0][0] if outcome.args_after else None
    expect_tensor(after, _("the input tensor after the call"))
    expect(torch.equal(after, source), _("the input tensor was changed by the call: it is now {got}, it was "
                                         "{want}.", got=str(after.tolist()), want=str(source.tolist())))


@pytest.mark.points(2)
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
                _("the clip coefficient 0.5 (this is the norm after clipping; report the one before)"): 0.5,
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
        expect(plan["next_scale"] == 2.0 and plan["reason"] == "finite_gradient",
               _("next_scale should stay 2.0 and reason be 'finite_gradient', got {scale!r} and {reason!r}.",
                 scale=plan["next_scale"], reason=plan["reason"]))


@pytest.mark.points(2)
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
@pytest.mark.hint(_("unscale_gradients: each gradient comes back in its own dtype (FP16 stays FP16, BF16 stays "
                    "BF16): divide by the Python number scale, not by an FP32 tensor."))
def test_unscale_keeps_dtype(student):
    """FP16 and BF16 gradients come back unscaled in their own dtype"""
    scaled = [torch.tensor([2.0, -4.0], dtype=torch.float16), torch.tensor([8.0], dtype=torch.bfloat16)]
    gradients = value_of(student.call("unscale_gradients", scaled, 4.0), FILE)
    expect(isinstance(gradients, list) and len(gradients) == 2,
           _("unscale_gradients should return a list of 2 entries, got {got}.", got=kind_of(gradients)))
    for index, (got, want) in enumerate(zip(gradients, (torch.tensor([0.5, -1.0], dtype=torch.float16),
                                                        torch.tensor([2.0], dtype=torch.bfloat16)))):
        expect_tensor_values(got, want, _("gradients[{index}]", index=index), scale_factors(4.0))


@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: convert each gradient to FP32 before squaring: FP16 squares above 65504 "
                    "overflow to inf."))
def test_global_norm_fp16_does_not_overflow(student):
    """global_grad_norm of FP16 [300, 400] is 500, not inf"""
    norm = value_of(student.call("global_grad_norm", [torch.tensor([300.0, 400.0], dtype=torch.float16)]), FILE)
    expect_tensor(norm, _("the norm"), dtype=torch.float32, shape=())
    expect(math.isclose(float(norm), 500.0, rel_tol=1e-6),
           _("the norm of FP16 [300, 400]: got {got:g}, expected 500 = sqrt(300² + 400²); 300² = 90000 is above FP16's "
             "largest value 65504, so square in FP32.", got=float(norm)))


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
    expect(plan["clip_coefficient"] == 0.0 and norm_text == "inf",
           _("on a skip clip_coefficient should be 0.0 and grad_norm inf, got {coefficient!r} and {norm}.",
             coefficient=plan["clip_coefficient"], norm=norm_text))
