"""Public tests for amp_update.py (TODO 1-3). Run: pytest exercises/tests/test_amp_update.py"""
import math

import torch


def test_unscale_without_mutation(amp_update):
    """Chapter test: [6, 8] / 2 = [3, 4]; None stays None; the input is unchanged."""
    source = torch.tensor([6.0, 8.0])
    gradients = amp_update.unscale_gradients([source, None], scale=2.0)
    assert torch.allclose(gradients[0], torch.tensor([3.0, 4.0])), "TODO 1: divide each gradient by scale"
    assert gradients[1] is None, "TODO 1: a None gradient must stay None"
    assert torch.equal(source, torch.tensor([6.0, 8.0])), "TODO 1: do not modify the input in place"


def test_unscale_keeps_dtype(amp_update):
    """FP16 and BF16 gradients come back in their own dtype."""
    for dtype in (torch.float16, torch.bfloat16):
        gradient = amp_update.unscale_gradients([torch.tensor([1024.0, -2048.0], dtype=dtype)], 1024.0)[0]
        assert gradient.dtype == dtype, f"TODO 1: expected {dtype}, got {gradient.dtype}"
        assert torch.equal(gradient, torch.tensor([1.0, -2.0], dtype=dtype))


def test_global_norm_across_parameters(amp_update):
    """Chapter test: the norm of [3, 4] and [12] together is 13."""
    norm = amp_update.global_grad_norm([torch.tensor([3.0, 4.0]), torch.tensor([12.0])])
    assert norm.dtype == torch.float32 and norm.dim() == 0, "TODO 2: return a 0-dim FP32 tensor"
    assert torch.isclose(norm, torch.tensor(13.0)), f"TODO 2: expected 13, got {norm}"


def test_global_norm_fp16_does_not_overflow(amp_update):
    """FP16 squares above 65504 overflow: accumulate in FP32."""
    norm = amp_update.global_grad_norm([torch.full((4,), 300.0, dtype=torch.float16), None])
    assert math.isfinite(float(norm)), "TODO 2: convert to FP32 before squaring"
    assert math.isclose(float(norm), 600.0, rel_tol=1e-6)


def test_finite_update_and_clipping(amp_update):
    """Chapter test: unscale, norm 5, clip by 0.5 to max_norm 2.5, step."""
    plan = amp_update.plan_mixed_precision_update([torch.tensor([6.0, 8.0])], scale=2.0, max_norm=2.5)
    assert plan["should_step"] is True
    assert torch.isclose(plan["grad_norm"], torch.tensor(5.0))
    assert abs(plan["clip_coefficient"] - 0.5) < 1e-6
    assert torch.allclose(plan["gradients"][0], torch.tensor([1.5, 2.0]))
    assert plan["next_scale"] == 2.0 and plan["reason"] == "finite_gradient"


def test_overflow_skips_update(amp_update):
    """Chapter test: an inf gradient skips the step and halves the scale."""
    plan = amp_update.plan_mixed_precision_update([torch.tensor([float("inf")])], scale=1024.0, max_norm=1.0)
    assert plan["should_step"] is False
    assert plan["next_scale"] == 512.0
    assert plan["reason"] == "non_finite_gradient"


def test_nan_in_a_later_tensor_skips(amp_update):
    """NaN counts as non-finite too, in any tensor, not just the first."""
    gradients = [torch.ones(3), None, torch.tensor([1.0, float("nan")])]
    plan = amp_update.plan_mixed_precision_update(gradients, scale=8.0, max_norm=1.0, backoff_factor=0.25)
    assert plan["should_step"] is False, "TODO 3: check every element of every tensor"
    assert plan["next_scale"] == 2.0
    assert plan["clip_coefficient"] == 0.0 and math.isinf(float(plan["grad_norm"]))
