"""A correct amp_update written differently: foreach kernels, multiply by the inverse
scale, a vector norm over the concatenated FP32 gradients, float64 clipping."""
import math

import torch


def unscale_gradients(scaled_gradients, scale):
    if not scale > 0:
        raise ValueError("the loss scale has to be > 0")
    present = [g for g in scaled_gradients if g is not None]
    results = iter(torch._foreach_mul(present, 1.0 / float(scale)) if present else [])
    return [None if g is None else next(results) for g in scaled_gradients]


def global_grad_norm(gradients):
    flat = [g.detach().reshape(-1).to(torch.float32) for g in gradients if g is not None]
    if not flat:
        return torch.zeros((), dtype=torch.float32)
    return torch.linalg.vector_norm(torch.cat(flat)).to(torch.float32)


def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    if not max_norm > 0:
        raise ValueError("max_norm has to be > 0")
    grads = unscale_gradients(scaled_gradients, scale)
    for g in grads:
        if g is not None and not torch.isfinite(g).all().item():
            return {"gradients": grads, "grad_norm": torch.tensor(math.inf, dtype=torch.float32),
                    "clip_coefficient": 0.0, "should_step": False,
                    "next_scale": float(scale) * backoff_factor, "reason": "non_finite_gradient"}
    norm = global_grad_norm(grads)
    coefficient = float(max_norm) / (norm.item() + 1e-12)
    coefficient = 1.0 if coefficient >= 1.0 else coefficient
    clipped = [None if g is None else (g.double() * coefficient).to(g.dtype) for g in grads]
    return {"gradients": clipped, "grad_norm": norm, "clip_coefficient": coefficient,
            "should_step": True, "next_scale": scale, "reason": "finite_gradient"}
