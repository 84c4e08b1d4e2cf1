"""The judge's own oracle for Module 3, written independently of solutions/.

It is in effect a solution of Module 3, so it lives with the hidden tests and
never ships to students (export-template drops autograder/hidden/).

It follows the contract with the framework's public pieces: one autocast
forward per microbatch, the weighted losses summed into one graph and a single
(scaled) backward, then unscale, finite check, clip, step or skip and the
scaler update. Gradients equal the per-microbatch accumulation up to rounding
order, which the tests' tolerances allow.
"""
import math

import torch

_AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}


def train_step(model, optimizer, microbatches, loss_fn, *, precision, scaler=None, max_norm=1.0,
               weights=None):
    count = len(microbatches)
    weights = [1.0 / count] * count if weights is None else list(weights)
    device_type = next(model.parameters()).device.type
    total = 0.0
    for weight, batch in zip(weights, microbatches):
        with torch.autocast(device_type, dtype=_AUTOCAST.get(precision, torch.bfloat16),
                            enabled=precision in _AUTOCAST):
            total = total + weight * loss_fn(model, batch)
    scale_before = float(scaler.get_scale()) if scaler is not None else 1.0
    (scaler.scale(total) if scaler is not None else total).backward()
    if scaler is not None:
        scaler.unscale_(optimizer)
    with_grad = [p for p in model.parameters() if p.grad is not None]
    finite = all(torch.isfinite(p.grad).all() for p in with_grad)
    norm = float(torch.nn.utils.clip_grad_norm_(with_grad, max_norm)) if finite else math.inf
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    elif finite:
        optimizer.step()
    model.zero_grad(set_to_none=True)
    return {"stepped": bool(finite),
            "reason": "finite_gradient" if finite else "non_finite_gradient",
            "grad_norm": norm, "scale_before": scale_before,
            "scale_after": float(scaler.get_scale()) if scaler is not None else 1.0,
            "num_microbatches": count}
