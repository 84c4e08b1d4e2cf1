"""One effective update from K microbatches with autocast and a GradScaler
(the chapter's Step 2 and Step 3: 梯度累积中的缩放与更新边界).

Per microbatch: autocast forward, weighted loss, (scaled) backward -- the
gradients accumulate in ``param.grad``. Only at the update boundary, once:

    unscale  ->  finite check + global norm  ->  clip  ->  step or skip  ->  scaler update

Unscaling, clipping or stepping inside the microbatch loop breaks the gradient
scale and the meaning of the effective batch. FP16 needs dynamic loss scaling
(an enabled ``torch.amp.GradScaler``); BF16 has FP32's exponent range and runs
without a scaler, but a NaN or inf gradient must still skip the step.
"""
import math

import torch

AUTOCAST_DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def _check_weights(weights, count):
    """Microbatch weights: one per microbatch, each >= 0, summing to 1 (default equal)."""
    if weights is None:
        return [1.0 / count] * count
    weights = [float(weight) for weight in weights]
    if len(weights) != count:
        raise ValueError(f"expected {count} weights, one per microbatch, got {len(weights)}")
    if any(not math.isfinite(weight) or weight < 0 for weight in weights):
        raise ValueError("weights must be finite and >= 0")
    if abs(sum(weights) - 1.0) > 1e-6:
        raise ValueError(f"weights must sum to 1, got {sum(weights)!r}")
    return weights


def train_step(model, optimizer, microbatches, loss_fn, *, precision, scaler=None, max_norm=1.0,
               weights=None):
    """Run one effective update over ``microbatches`` and report what happened.

    Args:
        model: a ``torch.nn.Module``; the autocast device type comes from its parameters.
        optimizer: the optimizer over the model's parameters.
        microbatches: a non-empty sequence of batches; ``loss_fn(model, batch)``
            returns the scalar mean loss of one microbatch.
        precision: ``'fp32'``, ``'bf16'`` or ``'fp16'``. ``'fp16'`` needs an enabled
            ``torch.amp.GradScaler``; ``'fp32'`` and ``'bf16'`` take none.
        scaler: the GradScaler for ``'fp16'``, else ``None``.
        max_norm: clip the real-scale global gradient norm to this value.
        weights: ``w_i >= 0`` per microbatch, summing to 1 (default equal);
            microbatch i contributes ``w_i * loss_i``.

    Returns:
        ``{'stepped', 'reason', 'grad_norm', 'scale_before', 'scale_after',
        'num_microbatches'}``: whether ``optimizer.step`` ran, ``'finite_gradient'``
        or ``'non_finite_gradient'``, the pre-clip real-scale norm as a Python float
        (``inf`` when non-finite), the scale before and after (1.0 without a
        scaler) and K. On return every ``param.grad`` is ``None``.

    Raises:
        ValueError: unknown precision, a precision/scaler mismatch, bad weights
            or no microbatches.
    """
    microbatches = list(microbatches)
    if not microbatches:
        raise ValueError("microbatches must not be empty")
    # TODO 10: validate precision and scaler and pick the autocast dtype.
    raise NotImplementedError('TODO 10: set `autocast_dtype` (None for fp32) and `use_scaler`')
    weights = _check_weights(weights, len(microbatches))
    parameters = list(model.parameters())
    device_type = parameters[0].device.type
    scale_before = float(scaler.get_scale()) if use_scaler else 1.0

    # TODO 11: for every microbatch, autocast forward, weighted loss, (scaled) backward.
    raise NotImplementedError('TODO 11: accumulate the gradients of sum_i w_i * loss_i')

    # TODO 12: at the boundary, unscale once, check finiteness, clip the real-scale gradients.
    raise NotImplementedError('TODO 12: set `finite` (bool) and `grad_norm` (float, inf when not finite)')

    # TODO 13: step or skip, update the scaler, and leave every param.grad as None.
    raise NotImplementedError('TODO 13: set `stepped`')
    return {
        "stepped": stepped,
        "reason": "finite_gradient" if finite else "non_finite_gradient",
        "grad_norm": grad_norm,
        "scale_before": scale_before,
        "scale_after": float(scaler.get_scale()) if use_scaler else 1.0,
        "num_microbatches": len(microbatches),
    }
