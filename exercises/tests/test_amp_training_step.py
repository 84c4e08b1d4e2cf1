"""Public tests for amp_training_step.py (TODO 10-13). Run: pytest exercises/tests/test_amp_training_step.py"""
import math

import pytest
import torch
import torch.nn.functional as F


def _setup(seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    batches = [(torch.randn(5, 4), torch.randn(5, 1)) for _ in range(2)]
    return model, batches


def _mse(model, batch):
    inputs, targets = batch
    return F.mse_loss(model(inputs).float(), targets)


def test_fp32_matches_plain_training(amp_training_step):
    """Two equal-weight microbatches in fp32 = one SGD step on the mean loss."""
    model, batches = _setup()
    twin, _ = _setup()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    report = amp_training_step.train_step(model, optimizer, batches, _mse, precision="fp32", max_norm=1e3)
    twin_optimizer = torch.optim.SGD(twin.parameters(), lr=0.1)
    (0.5 * _mse(twin, batches[0]) + 0.5 * _mse(twin, batches[1])).backward()
    twin_optimizer.step()
    assert report["stepped"] is True and report["reason"] == "finite_gradient"
    assert report["scale_before"] == report["scale_after"] == 1.0 and report["num_microbatches"] == 2
    for a, b in zip(model.parameters(), twin.parameters()):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    assert all(p.grad is None for p in model.parameters()), "leave every param.grad as None"


def test_fp16_overflow_skips_and_backs_off(amp_training_step):
    """An inf input under fp16: no step, grad_norm inf, the scale halves."""
    model, batches = _setup()
    batches[1][0][0, 0] = float("inf")
    before = [p.detach().clone() for p in model.parameters()]
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    report = amp_training_step.train_step(model, optimizer, batches, _mse, precision="fp16", scaler=scaler)
    assert report["stepped"] is False and report["reason"] == "non_finite_gradient"
    assert math.isinf(report["grad_norm"])
    assert (report["scale_before"], report["scale_after"]) == (1024.0, 512.0)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_bf16_autocasts_the_forward(amp_training_step):
    """Under 'bf16' the first Linear layer computes in bfloat16."""
    model, batches = _setup()
    seen = []
    model[0].register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_training_step.train_step(model, optimizer, batches, _mse, precision="bf16")
    assert seen == [torch.bfloat16, torch.bfloat16]


def test_fp16_needs_an_enabled_scaler(amp_training_step):
    """'fp16' without an enabled GradScaler is a ValueError."""
    model, batches = _setup()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError):
        amp_training_step.train_step(model, optimizer, batches, _mse, precision="fp16",
                                     scaler=torch.amp.GradScaler("cpu", enabled=False))
