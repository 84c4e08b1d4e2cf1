"""Public tests for amp_training_step.py (TODO 10-13).
Run: pytest exercises/tests/test_amp_training_step.py

Each assert says what was expected (期望 … / expected …)."""
import math

import pytest
import torch
import torch.nn.functional as F


def _setup(seed=0, count=2):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 1))
    batches = [(torch.randn(5, 4), torch.randn(5, 1)) for _ in range(count)]
    return model, batches


def _mse(model, batch):
    inputs, targets = batch
    return F.mse_loss(model(inputs).float(), targets)


def _fp32_twin_update(batches, lr, max_norm, seed=0):
    """The reference: FP32, mean loss over the microbatches, clip the real
    gradients, one SGD step. Returns (parameters before, parameters after,
    pre-clip norm)."""
    twin, _ = _setup(seed, len(batches))
    before = [p.detach().clone() for p in twin.parameters()]
    (sum(_mse(twin, batch) for batch in batches) / len(batches)).backward()
    norm = float(torch.nn.utils.clip_grad_norm_(twin.parameters(), max_norm))
    torch.optim.SGD(twin.parameters(), lr=lr).step()
    return before, [p.detach().clone() for p in twin.parameters()], norm


def _update_size_ratio(model, before, expected):
    """||your parameter change|| / ||expected parameter change||."""
    moved = sum(float((p.detach() - b).norm()) ** 2
                for p, b in zip(model.parameters(), before))
    wanted = sum(float((e - b).norm()) ** 2 for e, b in zip(expected, before))
    return math.sqrt(moved / wanted)


class CountingScaler(torch.amp.GradScaler):
    """The real GradScaler, counting scale() calls and the unscale_() calls
    your code makes (not the one scaler.step makes by itself when nobody
    unscaled before it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.scale_calls = self.unscale_calls = 0
        self._inside_step = False

    def scale(self, outputs):
        self.scale_calls += 1
        return super().scale(outputs)

    def unscale_(self, optimizer):
        if not self._inside_step:
            self.unscale_calls += 1
        return super().unscale_(optimizer)

    def step(self, optimizer, *args, **kwargs):
        self._inside_step = True
        try:
            return super().step(optimizer, *args, **kwargs)
        finally:
            self._inside_step = False


def test_fp32_matches_plain_training(amp_training_step):
    """Two equal-weight microbatches in fp32 = one SGD step on the mean loss."""
    model, batches = _setup()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    report = amp_training_step.train_step(model, optimizer, batches, _mse,
                                          precision="fp32", max_norm=1e3)
    before, expected, norm = _fp32_twin_update(batches, lr=0.1, max_norm=1e3)
    assert report["stepped"] is True \
        and report["reason"] == "finite_gradient", \
        ("期望 stepped=True、reason='finite_gradient' / expected a finite "
         f"step, got {report!r}")
    assert report["scale_before"] == report["scale_after"] == 1.0 \
        and report["num_microbatches"] == 2, \
        ("无 scaler 时 scale 均为 1.0，且 K = 2 / expected scales 1.0/1.0 and "
         f"num_microbatches 2, got {report!r}")
    assert _update_size_ratio(model, before, expected) > 0, \
        ("TODO 13：optimizer.step 运行了，参数却没有变化：梯度是否在 step 之前"
         "就被清空？/ the step ran but no parameter moved: clear the gradients "
         "only after the step")
    for index, (got, want) in enumerate(zip(model.parameters(), expected)):
        worst = float((got.detach() - want).abs().max())
        assert torch.allclose(got.detach(), want, rtol=1e-5, atol=1e-6), \
            (f"TODO 11：参数 {index} 与“均值损失上的一次 SGD”不一致（最大偏差 "
             f"{worst:.3g}）/ parameter {index} differs from one SGD step on "
             f"the mean loss by up to {worst:.3g}: each microbatch "
             "contributes 0.5 * loss_i and the gradients accumulate")
    ratio = report["grad_norm"] / norm
    assert math.isclose(report["grad_norm"], norm, rel_tol=1e-5), \
        (f"TODO 12：期望全局梯度范数（裁剪前）{norm:.6g}，实际 "
         f"{report['grad_norm']!r}（比值 {ratio:.4g}） / expected the "
         f"pre-clip global grad norm {norm:.6g}")
    assert all(p.grad is None for p in model.parameters()), \
        ("TODO 13：返回前每个 param.grad 都应为 None / expected every "
         "param.grad to be None on return")


def test_fp16_overflow_skips_and_backs_off(amp_training_step):
    """An inf input under fp16: no step, grad_norm inf, the scale halves."""
    model, batches = _setup()
    batches[1][0][0, 0] = float("inf")
    before = [p.detach().clone() for p in model.parameters()]
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    report = amp_training_step.train_step(model, optimizer, batches, _mse,
                                          precision="fp16", scaler=scaler)
    assert report["stepped"] is False \
        and report["reason"] == "non_finite_gradient", \
        ("期望跳过更新（stepped=False，reason='non_finite_gradient'）/ "
         f"expected a skipped step, got {report!r}")
    assert math.isinf(report["grad_norm"]), \
        ("TODO 12：非有限梯度时 grad_norm 应为 inf / expected grad_norm inf, "
         f"got {report['grad_norm']!r}")
    assert (report["scale_before"], report["scale_after"]) == (1024.0, 512.0), \
        ("TODO 13：溢出后 scale 回退一半 / expected scale 1024.0 -> 512.0 "
         f"(scaler.update() after the skip), got {report['scale_before']!r} "
         f"-> {report['scale_after']!r}")
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters())), \
        ("TODO 13：跳步时参数不应改变 / expected the parameters to stay "
         "unchanged on a skipped step")


def test_bf16_autocasts_the_forward(amp_training_step):
    """Under 'bf16' the first Linear layer computes in bfloat16; under 'fp32'
    in float32."""
    for precision, dtype in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        model, batches = _setup()
        seen = []
        model[0].register_forward_hook(
            lambda module, inputs, output, seen=seen: seen.append(output.dtype))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        amp_training_step.train_step(model, optimizer, batches, _mse,
                                     precision=precision)
        assert seen == [dtype, dtype], \
            (f"TODO 11：precision {precision!r} 下每个微批次一次前向，期望 "
             f"{dtype} / expected one forward per microbatch in {dtype}, got "
             f"{seen} (for 'fp32' autocast must be disabled: enabled=False)")


def test_fp16_needs_an_enabled_scaler(amp_training_step):
    """'fp16' without an enabled GradScaler is a ValueError."""
    model, batches = _setup()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError):
        amp_training_step.train_step(
            model, optimizer, batches, _mse, precision="fp16",
            scaler=torch.amp.GradScaler("cpu", enabled=False))


def test_clip_only_after_unscaling(amp_training_step):
    """fp16 with scale 4096 and a binding max_norm: the update is the clipped
    *real* gradient."""
    model, batches = _setup(seed=1)
    scaler = torch.amp.GradScaler("cpu", init_scale=4096.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    report = amp_training_step.train_step(model, optimizer, batches, _mse,
                                          precision="fp16", scaler=scaler,
                                          max_norm=0.05)
    before, expected, norm = _fp32_twin_update(batches, lr=0.1, max_norm=0.05,
                                               seed=1)
    assert norm > 0.05, ("the reference's norm must exceed max_norm for this "
                         "test to mean anything")
    assert math.isclose(report["grad_norm"], norm, rel_tol=2e-2), \
        (f"TODO 12：grad_norm 应是反缩放后、裁剪前的真实梯度范数 {norm:.4g}，"
         f"实际 {report['grad_norm']:.4g}（比值 "
         f"{report['grad_norm'] / norm:.4g}：约 4096 = scale 说明在 unscale "
         "之前测量/裁剪；约 2 = K 说明微批次损失没有乘权重）/ expected the "
         f"real-scale pre-clip norm {norm:.4g}")
    ratio = _update_size_ratio(model, before, expected)
    assert math.isclose(ratio, 1.0, rel_tol=2e-2), \
        ("TODO 12：期望参数更新等于“真实梯度裁剪到 max_norm=0.05”后的 SGD "
         f"更新，实际更新大小是它的 {ratio:.4g} 倍（grad_norm 已正确而比值约 "
         "1/4096：梯度被反缩放了两次，scaler.update() 是否跑在 "
         f"scaler.step() 之前？约 {norm / 0.05:.3g} = 范数/max_norm：没有"
         "裁剪）/ expected the update of the clipped real-scale gradient, "
         f"got {ratio:.4g} times its size")
    for index, (got, want) in enumerate(zip(model.parameters(), expected)):
        assert torch.allclose(got.detach() - before[index],
                              want - before[index], rtol=5e-2, atol=1e-5), \
            (f"TODO 12：参数 {index} 的更新方向与裁剪后的真实梯度不一致 / the "
             f"update of parameter {index} differs from the clipped "
             "real-scale gradient's")


def test_bf16_skips_non_finite_without_scaler(amp_training_step):
    """BF16 has no scaler, yet a NaN/inf gradient must still skip the step."""
    model, batches = _setup()
    batches[0][0][1, 2] = float("nan")
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    report = amp_training_step.train_step(model, optimizer, batches, _mse,
                                          precision="bf16")
    assert report["reason"] == "non_finite_gradient" \
        and math.isinf(report["grad_norm"]), \
        ("TODO 12：BF16 同样要做有限值检查：期望 "
         "reason='non_finite_gradient'、grad_norm=inf，实际 "
         f"{report['reason']!r}、{report['grad_norm']!r} / expected the "
         "finite check to catch the NaN")
    assert report["stepped"] is False, \
        ("TODO 13：期望跳过更新（stepped=False）/ expected stepped False, got "
         f"{report['stepped']!r}")
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters())), \
        ("TODO 13：无 scaler 时也不能在非有限梯度上调用 optimizer.step() / "
         "expected no step: parameters must not change")
    assert (report["scale_before"], report["scale_after"]) == (1.0, 1.0), \
        ("无 scaler 时 scale 均为 1.0 / expected 1.0/1.0, got "
         f"{report['scale_before']!r}/{report['scale_after']!r}")
    assert all(p.grad is None for p in model.parameters()), \
        ("TODO 13：跳步后每个 param.grad 也应为 None / expected every "
         "param.grad None after a skip too")


def test_unscale_exactly_once_per_update(amp_training_step):
    """K=3 microbatches, two calls: scale() three times per call, unscale_()
    once per call."""
    model, batches = _setup(count=6)
    scaler = CountingScaler("cpu", init_scale=1024.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for call in range(2):
        amp_training_step.train_step(model, optimizer,
                                     batches[3 * call:3 * call + 3], _mse,
                                     precision="fp16", scaler=scaler)
    assert scaler.scale_calls == 6, \
        ("TODO 11：每个微批次各做一次缩放反向，期望 scaler.scale 共 6 次（2 次"
         f"调用 × 3 个微批次），实际 {scaler.scale_calls} 次 / expected one "
         f"scaled backward per microbatch (6), got {scaler.scale_calls}")
    assert scaler.unscale_calls == 2, \
        ("TODO 12：每次有效更新只在更新边界反缩放一次，期望 scaler.unscale_ 共 "
         f"2 次，实际 {scaler.unscale_calls} 次 / expected "
         "scaler.unscale_(optimizer) once per call, after the loop and before "
         f"clipping (2), got {scaler.unscale_calls}")
