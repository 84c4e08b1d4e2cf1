"""Visible tests for amp_update: the chapter's four Step 4 tests, graded."""
import pytest
import torch

from autograder.judge import expect, expect_close, expect_tensor, value_of

pytestmark = [pytest.mark.module("amp_update"), pytest.mark.visibility("visible")]
FILE = "amp_update.py"


@pytest.mark.points(2)
@pytest.mark.hint("TODO 1 (unscale_gradients): divide each gradient by scale into a new tensor; keep None.")
def test_unscale_without_mutation(student):
    """unscale_gradients restores the real scale and leaves its input alone"""
    source = torch.tensor([6.0, 8.0])
    outcome = student.call("unscale_gradients", [source, None], 2.0)
    gradients = value_of(outcome, FILE)
    expect(isinstance(gradients, list) and len(gradients) == 2,
           f"expected a list of 2 entries, got {gradients!r}")
    expect_close(gradients[0], torch.tensor([3.0, 4.0]), "gradients[0]", 1e-6, 0.0, reveal=True)
    expect(gradients[1] is None, f"gradients[1] should stay None, got {gradients[1]!r}")
    expect_close(outcome.args_after[0][0], source, "the input tensor after the call", 0.0, 0.0, reveal=True)


@pytest.mark.points(2)
@pytest.mark.hint("TODO 2 (global_grad_norm): add each tensor's FP32 sum of squares, then take one square root.")
def test_global_norm_across_parameters(student):
    """global_grad_norm of [3, 4] and [12] is 13"""
    norm = value_of(student.call("global_grad_norm", [torch.tensor([3.0, 4.0]), torch.tensor([12.0])]), FILE)
    expect_tensor(norm, "the norm", dtype=torch.float32, shape=())
    expect_close(norm, torch.tensor(13.0), "the norm", 1e-6, 0.0, reveal=True)


@pytest.mark.points(2)
@pytest.mark.hint("TODO 3 (plan_mixed_precision_update): unscale, check finiteness, then norm and clip.")
def test_finite_update_and_clipping(student):
    """a finite [6, 8] at scale 2 with max_norm 2.5 is clipped by 0.5 and stepped"""
    plan = value_of(student.call("plan_mixed_precision_update", [torch.tensor([6.0, 8.0])],
                                 scale=2.0, max_norm=2.5), FILE)
    expect(isinstance(plan, dict), f"expected a dict, got {type(plan).__name__}")
    expect(plan.get("should_step") is True, f"should_step should be True, got {plan.get('should_step')!r}")
    expect_close(plan.get("grad_norm"), torch.tensor(5.0), "grad_norm", 1e-6, 0.0, reveal=True)
    coefficient = plan.get("clip_coefficient")
    expect(isinstance(coefficient, float) and abs(coefficient - 0.5) < 1e-6,
           f"clip_coefficient should be 0.5, got {coefficient!r}")
    expect(isinstance(plan.get("gradients"), list), "gradients should be a list")
    expect_close(plan["gradients"][0], torch.tensor([1.5, 2.0]), "gradients[0]", 1e-6, 0.0, reveal=True)


@pytest.mark.points(2)
@pytest.mark.hint("TODO 3 (plan_mixed_precision_update): a non-finite gradient skips the step and halves the scale.")
def test_overflow_skips_update(student):
    """an inf gradient skips the step and backs the scale off from 1024 to 512"""
    plan = value_of(student.call("plan_mixed_precision_update", [torch.tensor([float("inf")])],
                                 scale=1024.0, max_norm=1.0), FILE)
    expect(isinstance(plan, dict), f"expected a dict, got {type(plan).__name__}")
    expect(plan.get("should_step") is False, f"should_step should be False, got {plan.get('should_step')!r}")
    expect(plan.get("next_scale") == 512.0, f"next_scale should be 512.0, got {plan.get('next_scale')!r}")
    expect(plan.get("reason") == "non_finite_gradient",
           f"reason should be 'non_finite_gradient', got {plan.get('reason')!r}")
