"""A correct amp_update in the style of training frameworks' norm helpers: unscale by multiplying
with 1/scale, a sum of per-tensor torch.norm(.float()) squares, an isinf-or-isnan overflow check."""
import torch

def unscale_gradients(scaled_gradients, scale):
    if scale <= 0:
        raise ValueError("scale must be positive")
    inv = 1.0 / scale
    return [None if g is None else g.mul(inv) for g in scaled_gradients]

def global_grad_norm(gradients):
    grads = [g for g in gradients if g is not None]
    if not grads:
        return torch.zeros((), dtype=torch.float32)
    total = torch.zeros((), dtype=torch.float32)
    for g in grads:
        total += torch.norm(g.float(), 2.0) ** 2.0
    return total ** 0.5

def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    if max_norm <= 0:
        raise ValueError("max_norm must be positive")
    grads = unscale_gradients(scaled_gradients, scale)
    overflow = False
    for g in grads:
        if g is not None and (torch.isinf(g).any() or torch.isnan(g).any()):
            overflow = True
            break
    if overflow:
        return {"gradients": grads, "grad_norm": torch.tensor(float("inf")), "clip_coefficient": 0.0,
                "should_step": False, "next_scale": scale * backoff_factor, "reason": "non_finite_gradient"}
    norm = global_grad_norm(grads)
    coef = float(max_norm) / (float(norm) + 1e-12)
    coef = min(1.0, coef)
    clipped = [None if g is None else g * coef for g in grads]
    return {"gradients": clipped, "grad_norm": norm, "clip_coefficient": coef, "should_step": True,
            "next_scale": scale, "reason": "finite_gradient"}
