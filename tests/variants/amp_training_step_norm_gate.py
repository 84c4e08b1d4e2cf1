"""A correct train_step in the style of training loops (e.g. Accelerate's): the finite check is the
total norm clip_grad_norm_ returns, and `stepped` is read off the scale (a skip backs it off)."""
import math
import torch

def train_step(model, optimizer, microbatches, loss_fn, *, precision, scaler=None, max_norm=1.0, weights=None):
    microbatches = list(microbatches)
    if not microbatches:
        raise ValueError("no microbatches")
    if precision not in ("fp32", "bf16", "fp16"):
        raise ValueError(f"unknown precision {precision}")
    enabled_scaler = scaler is not None and scaler.is_enabled()
    if (precision == "fp16") != enabled_scaler:
        raise ValueError("fp16 needs an enabled GradScaler; fp32/bf16 must not have one")
    n = len(microbatches)
    if weights is None:
        weights = [1.0 / n] * n
    weights = list(weights)
    if len(weights) != n or any(w < 0 for w in weights) or abs(sum(weights) - 1.0) > 1e-6:
        raise ValueError("bad weights")
    device = next(model.parameters()).device.type
    amp_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    scale_before = scaler.get_scale() if enabled_scaler else 1.0
    for w, batch in zip(weights, microbatches):
        with torch.autocast(device_type=device, dtype=amp_dtype if amp_dtype else torch.float32,
                            enabled=amp_dtype is not None):
            loss = loss_fn(model, batch) * w
        if enabled_scaler:
            loss = scaler.scale(loss)
        loss.backward()
    if enabled_scaler:
        scaler.unscale_(optimizer)
    # Accelerate-style: the finite check is the total norm's
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    finite = bool(torch.isfinite(total))
    if enabled_scaler:
        scaler.step(optimizer)
        scaler.update()
        stepped = scaler.get_scale() >= scale_before
    else:
        if finite:
            optimizer.step()
        stepped = finite
    model.zero_grad(set_to_none=True)
    return {"stepped": bool(stepped), "reason": "finite_gradient" if finite else "non_finite_gradient",
            "grad_norm": float(total) if finite else math.inf, "scale_before": float(scale_before),
            "scale_after": float(scaler.get_scale()) if enabled_scaler else 1.0, "num_microbatches": n}
