"""A correct train_step written differently: scales the loss before weighting,
computes the norm itself and clips with foreach, clears grads via the model."""
import math

import torch

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def train_step(model, optimizer, microbatches, loss_fn, *, precision, scaler=None, max_norm=1.0,
               weights=None):
    if precision not in ("fp32", "bf16", "fp16"):
        raise ValueError(precision)
    enabled_scaler = bool(scaler is not None and scaler.is_enabled())
    if (precision == "fp16") != enabled_scaler:
        raise ValueError("fp16 goes with an enabled GradScaler, and only fp16 does")
    batches = list(microbatches)
    if weights is None:
        weights = torch.full((len(batches),), 1.0 / len(batches), dtype=torch.float64).tolist()
    if len(weights) != len(batches) or min(weights) < 0 or not math.isclose(sum(weights), 1.0, abs_tol=1e-6):
        raise ValueError("bad weights")
    device = next(iter(model.parameters())).device.type
    before = scaler.get_scale() if enabled_scaler else 1.0
    for batch, weight in zip(batches, weights):
        with torch.autocast(device, dtype=DTYPES.get(precision, torch.float32), enabled=precision != "fp32"):
            loss = loss_fn(model, batch)
        (scaler.scale(loss) * weight if enabled_scaler else loss * weight).backward()
    if enabled_scaler:
        scaler.unscale_(optimizer)
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item()
    ok = math.isfinite(norm)
    if ok:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, foreach=True)
    if enabled_scaler:
        scaler.step(optimizer)
        scaler.update()
    elif ok:
        optimizer.step()
    model.zero_grad(set_to_none=True)
    return {"stepped": ok, "reason": "finite_gradient" if ok else "non_finite_gradient",
            "grad_norm": norm if ok else math.inf, "scale_before": float(before),
            "scale_after": float(scaler.get_scale()) if enabled_scaler else 1.0,
            "num_microbatches": len(batches)}
