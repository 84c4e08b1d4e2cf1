"""A correct amp_update that touches every element in a Python loop: slow, but inside
every limit a grade sets, an endless loop elsewhere in the module included."""
import itertools
import math

import torch


def _indices(tensor):
    return itertools.product(*(range(size) for size in tensor.shape))


def _map(tensor, function):
    out = torch.empty(tensor.shape, dtype=tensor.dtype)
    for index in _indices(tensor):
        out[index] = function(tensor[index].item())
    return out


def unscale_gradients(scaled_gradients, scale):
    if scale <= 0:
        raise ValueError("scale must be positive")
    return [None if gradient is None else _map(gradient, lambda value: value / scale)
            for gradient in scaled_gradients]


def global_grad_norm(gradients):
    total = torch.zeros((), dtype=torch.float32)
    for gradient in gradients:
        if gradient is None:
            continue
        as_fp32 = gradient.float()
        for index in _indices(as_fp32):
            total = total + as_fp32[index] * as_fp32[index]
    return total.sqrt()


def _all_finite(gradients):
    for gradient in gradients:
        if gradient is None:
            continue
        for index in _indices(gradient):
            if not math.isfinite(gradient[index].item()):
                return False
    return True


def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    if max_norm <= 0:
        raise ValueError("max_norm must be positive")
    gradients = unscale_gradients(scaled_gradients, scale)
    if not _all_finite(gradients):
        return {"gradients": gradients, "grad_norm": torch.tensor(float("inf")), "clip_coefficient": 0.0,
                "should_step": False, "next_scale": scale * backoff_factor, "reason": "non_finite_gradient"}
    norm = global_grad_norm(gradients)
    coefficient = min(1.0, max_norm / (float(norm) + 1e-12))
    clipped = [None if gradient is None else _map(gradient, lambda value: value * coefficient)
               for gradient in gradients]
    return {"gradients": clipped, "grad_norm": norm, "clip_coefficient": coefficient, "should_step": True,
            "next_scale": scale, "reason": "finite_gradient"}
