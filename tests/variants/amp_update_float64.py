"""A correct amp_update with explicit loops and float64 intermediate arithmetic."""
import math

import torch


def unscale_gradients(scaled_gradients, scale):
    if scale <= 0:
        raise ValueError(f"scale={scale} is not positive")
    out = []
    for g in scaled_gradients:
        out.append(None if g is None else (g.to(torch.float64) / float(scale)).to(g.dtype))
    return out


def global_grad_norm(gradients):
    total = 0.0
    for g in gradients:
        if g is not None:
            total += float(g.to(torch.float32).pow(2).sum())
    return torch.tensor(math.sqrt(total), dtype=torch.float32)


def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    if max_norm <= 0:
        raise ValueError("max_norm must be > 0")
    gradients = unscale_gradients(scaled_gradients, scale)
    bad = any(g is not None and bool((~torch.isfinite(g)).any()) for g in gradients)
    if bad:
        return dict(gradients=gradients, grad_norm=torch.tensor(float("inf")), clip_coefficient=0.0,
                    should_step=False, next_scale=scale * backoff_factor, reason="non_finite_gradient")
    norm = global_grad_norm(gradients)
    coefficient = min(1.0, max_norm / (float(norm) + 1e-12))
    return dict(gradients=[None if g is None else g.mul(coefficient) for g in gradients], grad_norm=norm,
                clip_coefficient=float(coefficient), should_step=True, next_scale=scale,
                reason="finite_gradient")
