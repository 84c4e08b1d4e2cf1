"""The judge's own oracle for Module 3, written independently of solutions/.

It is in effect a solution of Module 3, so it lives with the hidden tests and
never ships to students (export-template drops autograder/assignment/hidden/).

It follows the contract with the framework's public pieces: one autocast
forward per microbatch, the weighted losses summed into one graph and a single
(scaled) backward, then unscale, finite check, clip, step or skip and the
scaler update. Gradients equal the per-microbatch accumulation up to rounding
order, which the tests' tolerances allow.

``with_mistakes(names)`` gives the same oracle with known student mistakes
built in (see ``MISTAKES``). The hidden tests run those variants only after a
submission failed, to recognise which mistakes -- alone or together --
reproduce its numbers exactly, so that the feedback can name each of them and
changes as soon as one is fixed.
"""
import math

import torch

_AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}

# name -> what the variant does differently
MISTAKES = {
    "last_only": "only the last microbatch's weighted loss reaches param.grad (zero_grad inside the loop)",
    "unweighted": "every microbatch weighs 1 (losses summed, weights ignored)",
    "mean_again": "the weighted losses are divided by K once more",
    "fp32_autocast": "'fp32' runs its forward under autocast to bfloat16 (dtype=None, autocast left enabled)",
    "clip_before_unscale": "the norm is measured and clipping applied to the still-scaled gradients",
    "norm_before_unscale": "grad_norm is measured on the still-scaled gradients; clipping is right",
    "post_clip_norm": "grad_norm is the norm after clipping",
    "no_clip": "the gradients are never clipped",
    "max_norm_ignored": "the gradients are clipped to 1.0 (clip_grad_norm_'s usual value), not to max_norm",
    "update_before_step": "scaler.update() runs before scaler.step(optimizer), which then unscales again",
    "clear_before_step": "the gradients are cleared before the step, so the step moves nothing",
}


def _total_norm(tensors):
    if not tensors:
        return 0.0
    return float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(t.float()) for t in tensors])))


def with_mistakes(mistakes=()):
    """The oracle, with the named mistakes of ``MISTAKES`` built in."""
    mistakes = frozenset(mistakes)
    unknown = mistakes - set(MISTAKES)
    if unknown:
        raise ValueError(f"unknown mistakes {sorted(unknown)}")

    def train_step(model, optimizer, microbatches, loss_fn, *, precision, scaler=None, max_norm=1.0,
                   weights=None):
        count = len(microbatches)
        weights = [1.0 / count] * count if weights is None else [float(weight) for weight in weights]
        if "unweighted" in mistakes:
            weights = [1.0] * count
        if "mean_again" in mistakes:
            weights = [weight / count for weight in weights]
        pairs = list(zip(weights, microbatches))
        if "last_only" in mistakes:
            pairs = pairs[-1:]
        device_type = next(model.parameters()).device.type
        autocast_dtype = _AUTOCAST.get(precision)
        if "fp32_autocast" in mistakes and precision == "fp32":
            autocast_dtype = torch.bfloat16
        total = 0.0
        for weight, batch in pairs:
            with torch.autocast(device_type, dtype=autocast_dtype or torch.bfloat16,
                                enabled=autocast_dtype is not None):
                total = total + weight * loss_fn(model, batch)
        scale_before = float(scaler.get_scale()) if scaler is not None else 1.0
        (scaler.scale(total) if scaler is not None else total).backward()
        with_grad = [p for p in model.parameters() if p.grad is not None]
        scaled_norm = None
        if scaler is not None and "norm_before_unscale" in mistakes:
            scaled_norm = _total_norm([p.grad for p in with_grad])
        if scaler is not None and "clip_before_unscale" not in mistakes:
            scaler.unscale_(optimizer)
        finite = all(torch.isfinite(p.grad).all() for p in with_grad)
        if not finite:
            norm = math.inf
        elif "no_clip" in mistakes:
            norm = _total_norm([p.grad for p in with_grad])
        else:
            limit = 1.0 if "max_norm_ignored" in mistakes else max_norm
            norm = float(torch.nn.utils.clip_grad_norm_(with_grad, limit))
            if "post_clip_norm" in mistakes:
                norm = _total_norm([p.grad for p in with_grad])
        if scaled_norm is not None and finite:
            norm = scaled_norm
        if "clear_before_step" in mistakes:
            model.zero_grad(set_to_none=True)
        if scaler is not None and "update_before_step" in mistakes:
            scaler.update()
            scaler.step(optimizer)
        elif scaler is not None:
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

    return train_step


train_step = with_mistakes(())
