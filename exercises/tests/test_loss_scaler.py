"""Public tests for loss_scaler.py (TODO 4-9).
Run: pytest exercises/tests/test_loss_scaler.py"""
import pytest
import torch


def test_update_scale_sequence(loss_scaler):
    """Start 4, interval 2: (4, 1) -> (8, 0) -> inf -> (2, 0) with backoff
    0.25."""
    options = dict(growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
    got = loss_scaler.update_scale(4.0, 0, False, **options)
    assert got == (4.0, 1), (
        "期望 (4.0, 1)：无溢出，计数器 + 1，尚未增长 / expected (4.0, 1): "
        f"one clean step, no growth yet; got {got}")
    got = loss_scaler.update_scale(4.0, 1, False, **options)
    assert got == (8.0, 0), (
        "期望 (8.0, 0)：计数器达到 growth_interval，scale 增长、计数器归零 / "
        f"expected (8.0, 0): growth, tracker reset; got {got}")
    got = loss_scaler.update_scale(8.0, 0, True, **options)
    assert got == (2.0, 0), (
        "期望 (2.0, 0)：溢出时 scale × backoff_factor / expected (2.0, 0): "
        f"backoff on inf; got {got}")


def _train(make_scaler, steps=4, inf_at=1):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = make_scaler(init_scale=256.0, growth_interval=1)
    scales, skipped = [], []
    for step in range(steps):
        optimizer.zero_grad()
        loss = model(torch.arange(8.0).reshape(2, 4)).pow(2).mean()
        scaler.scale(loss).backward()
        if step == inf_at:
            model.weight.grad[0, 0] = float("inf")
        before = model.weight.detach().clone()
        scaler.step(optimizer)
        skipped.append(torch.equal(before, model.weight))
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, skipped, [p.detach().clone() for p in model.parameters()]


def test_matches_gradscaler_with_an_inf_step(loss_scaler):
    """Side by side with torch.amp.GradScaler('cpu'): same scales, skips and
    weights."""
    mine = _train(lambda **kw: loss_scaler.LossScaler(**kw))
    reference = _train(lambda **kw: torch.amp.GradScaler("cpu", **kw))
    assert mine[1] == [False, True, False, False], \
        ("期望只跳过含 inf 梯度的第 2 步 / expected step() to skip exactly "
         f"the step with an inf gradient; skipped: {mine[1]}")
    assert mine[0] == reference[0], (
        "期望每次 update 后的 scale 与 GradScaler 相同 / expected "
        f"GradScaler's scales {reference[0]}, got {mine[0]}")
    for a, b in zip(mine[2], reference[2]):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-7), (
            "期望参数与 GradScaler 的一致 / expected the weights of "
            f"GradScaler's run: {b} vs {a}")


def test_scale_keeps_fp16_loss_finite(loss_scaler):
    """GradScaler multiplies by an FP32 tensor: a 0-dim FP16 loss of 2.0
    becomes 131072 in FP32."""
    scaler = loss_scaler.LossScaler(init_scale=65536.0)
    scaled = scaler.scale(torch.tensor(2.0, dtype=torch.float16))
    assert scaled.dtype == torch.float32, (
        "期望 FP32 结果（用 FP32 张量相乘）/ expected an FP32 result, got "
        f"{scaled.dtype}")
    assert float(scaled) == 131072.0, (
        f"期望 2 × 65536 = 131072 / expected 131072, got {float(scaled)}")


def test_second_unscale_raises(loss_scaler):
    """unscale_ twice in one iteration is an error."""
    parameter = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    scaler = loss_scaler.LossScaler(init_scale=4.0)
    scaler.scale(parameter.sum()).backward()
    scaler.unscale_(optimizer)
    assert torch.equal(parameter.grad, torch.full((2,), 1.0)), \
        ("期望梯度 4 / scale 4 = 1 / expected grads 4 / scale 4 = 1, got "
         f"{parameter.grad.tolist()}")
    with pytest.raises(RuntimeError):
        scaler.unscale_(optimizer)


def test_one_unscale_per_iteration(loss_scaler):
    """step() after an explicit unscale_ does not unscale again; without it,
    step() unscales once."""
    for explicit in (True, False):
        parameter = torch.nn.Parameter(torch.ones(2))
        optimizer = torch.optim.SGD([parameter], lr=0.5)
        scaler = loss_scaler.LossScaler(init_scale=8.0)
        scaler.scale(parameter.sum()).backward()  # grads 8 = scale * 1
        if explicit:
            scaler.unscale_(optimizer)
        scaler.step(optimizer)
        case = "unscale_ + step" if explicit else "step only"
        assert torch.equal(parameter.grad, torch.ones(2)), \
            (f"{case}：期望每轮只反缩放一次，梯度为 8 / 8 = 1 / expected "
             "exactly one unscale per iteration "
             f"(grads 8 / scale 8 = 1), got {parameter.grad.tolist()}")
        assert torch.equal(parameter.detach(), torch.full((2,), 0.5)), \
            (f"{case}：期望参数 1 - 0.5 × 1 = 0.5 / expected weights 0.5, got "
             f"{parameter.detach().tolist()}")


def test_state_dict_keys(loss_scaler):
    """state_dict has GradScaler's five keys and round-trips."""
    scaler = loss_scaler.LossScaler(init_scale=1024.0, growth_interval=3)
    state = scaler.state_dict()
    keys = {"scale", "growth_factor", "backoff_factor", "growth_interval",
            "_growth_tracker"}
    assert set(state) == keys, (
        "期望 GradScaler 的五个键 / expected GradScaler's keys "
        f"{sorted(keys)}, got {sorted(state)}")
    other = loss_scaler.LossScaler(init_scale=2.0)
    other.load_state_dict(state)
    assert other.get_scale() == 1024.0, (
        "期望载入后 scale 为 1024 / expected scale 1024 after loading, got "
        f"{other.get_scale()}")
    assert other.state_dict() == state, (
        f"期望载入后的状态与保存的一致 / expected the loaded state {state}, "
        f"got {other.state_dict()}")
