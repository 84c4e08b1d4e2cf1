"""Public tests for amp_update.py (TODO 1-3).
Run: pytest exercises/tests/test_amp_update.py

Each assert says what was expected (期望 … / expected …)."""
import math

import torch


def test_unscale_without_mutation(amp_update):
    """Chapter test: [6, 8] / 2 = [3, 4]; None stays None; the input is
    unchanged."""
    source = torch.tensor([6.0, 8.0])
    gradients = amp_update.unscale_gradients([source, None], scale=2.0)
    assert torch.allclose(gradients[0], torch.tensor([3.0, 4.0])), \
        (f"TODO 1：期望 [6, 8] / 2 = [3, 4]，实际 {gradients[0].tolist()} / "
         "expected [3, 4] (divide by scale)")
    assert gradients[1] is None, (
        "TODO 1：None 梯度应原样保留 / expected None to stay None, got "
        f"{gradients[1]!r}")
    assert torch.equal(source, torch.tensor([6.0, 8.0])), \
        (f"TODO 1：输入张量不应被原地修改，现在是 {source.tolist()} / "
         "expected the input to stay [6, 8] (no in-place division)")


def test_unscale_keeps_dtype(amp_update):
    """FP16 and BF16 gradients come back in their own dtype."""
    for dtype in (torch.float16, torch.bfloat16):
        scaled = torch.tensor([1024.0, -2048.0], dtype=dtype)
        gradient = amp_update.unscale_gradients([scaled], 1024.0)[0]
        assert gradient.dtype == dtype, (
            f"TODO 1：期望 dtype {dtype}，实际 {gradient.dtype} / expected "
            f"{dtype}, got {gradient.dtype}")
        assert torch.equal(gradient, torch.tensor([1.0, -2.0], dtype=dtype)), \
            (f"TODO 1：期望 [1, -2]，实际 {gradient.tolist()} / expected "
             "[1024, -2048] / 1024 = [1, -2]")


def test_global_norm_across_parameters(amp_update):
    """Chapter test: the norm of [3, 4] and [12] together is 13."""
    norm = amp_update.global_grad_norm([torch.tensor([3.0, 4.0]),
                                        torch.tensor([12.0])])
    assert torch.is_tensor(norm) and norm.dtype == torch.float32 \
        and norm.dim() == 0, \
        ("TODO 2：期望返回 0 维 FP32 张量 / expected a 0-dim torch.float32 "
         "tensor")
    assert torch.isclose(norm, torch.tensor(13.0)), \
        ("TODO 2：期望全局范数 sqrt(3² + 4² + 12²) = 13，实际 "
         f"{float(norm):g} / expected 13, got {float(norm):g}")


def test_global_norm_fp16_does_not_overflow(amp_update):
    """FP16 squares above 65504 overflow: accumulate in FP32."""
    norm = amp_update.global_grad_norm(
        [torch.full((4,), 300.0, dtype=torch.float16), None])
    assert math.isfinite(float(norm)), \
        ("TODO 2：期望有限的范数（先转 FP32 再平方）/ expected a finite norm: "
         "convert to FP32 before squaring")
    assert math.isclose(float(norm), 600.0, rel_tol=1e-6), \
        (f"TODO 2：期望 sqrt(4 × 300²) = 600，实际 {float(norm):g} / expected "
         f"600, got {float(norm):g}")


def test_finite_update_and_clipping(amp_update):
    """Chapter test: unscale, norm 5, clip by 0.5 to max_norm 2.5, step."""
    plan = amp_update.plan_mixed_precision_update([torch.tensor([6.0, 8.0])],
                                                  scale=2.0, max_norm=2.5)
    assert plan["should_step"] is True, (
        "期望 should_step 为 True / expected should_step True, got "
        f"{plan['should_step']!r}")
    assert torch.isclose(plan["grad_norm"], torch.tensor(5.0)), \
        ("期望裁剪前的真实梯度范数 5 / expected grad_norm 5 (before "
         f"clipping), got {float(plan['grad_norm']):g}")
    assert abs(plan["clip_coefficient"] - 0.5) < 1e-6, \
        ("期望裁剪系数 2.5 / 5 = 0.5 / expected clip_coefficient 0.5, got "
         f"{plan['clip_coefficient']!r}")
    assert torch.allclose(plan["gradients"][0], torch.tensor([1.5, 2.0])), \
        ("期望裁剪后的梯度 [1.5, 2] / expected clipped gradients [1.5, 2], "
         f"got {plan['gradients'][0].tolist()}")
    assert plan["next_scale"] == 2.0 and plan["reason"] == "finite_gradient", \
        ("期望 next_scale 2.0、reason 'finite_gradient' / expected "
         "next_scale 2.0 and reason 'finite_gradient', "
         f"got {plan['next_scale']!r}, {plan['reason']!r}")


def test_clipping_uses_the_real_scale_norm(amp_update):
    """Clipping comes after unscaling: with scale 65536 the coefficient comes
    from the real norm 5, not 5 × 65536."""
    scale = 65536.0
    plan = amp_update.plan_mixed_precision_update(
        [torch.tensor([3.0, 4.0]) * scale], scale=scale, max_norm=1.0)
    assert math.isclose(float(plan["grad_norm"]), 5.0, rel_tol=1e-6), \
        ("期望 grad_norm 是反缩放后的真实范数 5（而不是 5 × scale = 327680）"
         "/ expected grad_norm 5, the norm after "
         f"unscaling (not 5 × scale), got {float(plan['grad_norm']):g}")
    assert math.isclose(plan["clip_coefficient"], 0.2, rel_tol=1e-6), \
        ("期望裁剪系数 max_norm / 真实范数 = 1 / 5 = 0.2 / expected "
         "clip_coefficient 1 / 5 = 0.2 from the real-scale "
         f"norm, got {plan['clip_coefficient']!r}")
    assert torch.allclose(plan["gradients"][0], torch.tensor([0.6, 0.8])), \
        ("期望先反缩放再裁剪：[3, 4] × 0.2 = [0.6, 0.8] / expected unscale "
         "then clip: [0.6, 0.8], "
         f"got {plan['gradients'][0].tolist()}")


def test_overflow_skips_update(amp_update):
    """Chapter test: an inf gradient skips the step and halves the scale."""
    plan = amp_update.plan_mixed_precision_update(
        [torch.tensor([float("inf")])], scale=1024.0, max_norm=1.0)
    assert plan["should_step"] is False, \
        ("TODO 3：期望 inf 梯度触发跳步 / expected should_step False for an "
         f"inf gradient, got {plan['should_step']!r}")
    assert plan["next_scale"] == 512.0, \
        ("期望 scale 回退到 1024 × 0.5 = 512 / expected next_scale 512.0, "
         f"got {plan['next_scale']!r}")
    assert plan["reason"] == "non_finite_gradient", \
        ("期望 reason 为 'non_finite_gradient' / expected reason "
         f"'non_finite_gradient', got {plan['reason']!r}")


def test_nan_in_a_later_tensor_skips(amp_update):
    """NaN counts as non-finite too, in any tensor, not just the first."""
    gradients = [torch.ones(3), None, torch.tensor([1.0, float("nan")])]
    plan = amp_update.plan_mixed_precision_update(gradients, scale=8.0,
                                                  max_norm=1.0,
                                                  backoff_factor=0.25)
    assert plan["should_step"] is False, \
        ("TODO 3：期望检查每个张量的每个元素（第三个张量含 NaN）/ expected a "
         "skip: check every element of every tensor")
    assert plan["next_scale"] == 2.0, \
        ("期望 next_scale = 8 × backoff_factor 0.25 = 2 / expected "
         f"next_scale 2.0, got {plan['next_scale']!r}")
    assert plan["clip_coefficient"] == 0.0 \
        and math.isinf(float(plan["grad_norm"])), \
        ("期望跳步时 clip_coefficient 为 0.0、grad_norm 为 inf / expected "
         "clip_coefficient 0.0 and grad_norm inf on "
         f"a skip, got {plan['clip_coefficient']!r}, "
         f"{float(plan['grad_norm']):g}")
