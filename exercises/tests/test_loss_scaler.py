"""Public tests for loss_scaler.py (TODO 4-9). Run: pytest exercises/tests/test_loss_scaler.py"""
import pytest
import torch


def test_update_scale_sequence(loss_scaler):
    """Start 4, interval 2: (4, 1) -> (8, 0) -> inf -> (2, 0) with backoff 0.25."""
    options = dict(growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
    assert loss_scaler.update_scale(4.0, 0, False, **options) == (4.0, 1)
    assert loss_scaler.update_scale(4.0, 1, False, **options) == (8.0, 0)
    assert loss_scaler.update_scale(8.0, 0, True, **options) == (2.0, 0)


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
    """Side by side with torch.amp.GradScaler('cpu'): same scales, skips and weights."""
    mine = _train(lambda **kw: loss_scaler.LossScaler(**kw))
    reference = _train(lambda **kw: torch.amp.GradScaler("cpu", **kw))
    assert mine[0] == reference[0], f"scales {mine[0]} != GradScaler's {reference[0]}"
    assert mine[1] == [False, True, False, False], "step() must skip exactly the step with an inf gradient"
    for a, b in zip(mine[2], reference[2]):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-7)


def test_scale_keeps_fp16_loss_finite(loss_scaler):
    """GradScaler multiplies by an FP32 tensor: a 0-dim FP16 loss of 2.0 becomes 131072 in FP32."""
    scaled = loss_scaler.LossScaler(init_scale=65536.0).scale(torch.tensor(2.0, dtype=torch.float16))
    assert scaled.dtype == torch.float32 and float(scaled) == 131072.0


def test_second_unscale_raises(loss_scaler):
    """unscale_ twice in one iteration is an error."""
    parameter = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    scaler = loss_scaler.LossScaler(init_scale=4.0)
    scaler.scale(parameter.sum()).backward()
    scaler.unscale_(optimizer)
    assert torch.equal(parameter.grad, torch.full((2,), 1.0))
    with pytest.raises(RuntimeError):
        scaler.unscale_(optimizer)


def test_state_dict_keys(loss_scaler):
    """state_dict has GradScaler's five keys and round-trips."""
    scaler = loss_scaler.LossScaler(init_scale=1024.0, growth_interval=3)
    state = scaler.state_dict()
    assert set(state) == {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}
    other = loss_scaler.LossScaler(init_scale=2.0)
    other.load_state_dict(state)
    assert other.get_scale() == 1024.0 and other.state_dict() == state
