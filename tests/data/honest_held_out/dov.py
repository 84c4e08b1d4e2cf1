"""dov (held out of the calibration): writes what the stub's comments say, the shortest
way: much of it comes out as the reference does."""
FILLS = {
1: '''gradients = [g if g is None else torch.div(g, scale) for g in scaled_gradients]''',
2: '''squared_sum = squared_sum + torch.linalg.vector_norm(gradient.float()).square()''',
3: '''finite = bool(torch.tensor([bool(torch.isfinite(g).all()) for g in gradients if g is not None],
                           dtype=torch.bool).all())''',
4: '''if found_inf:
    return float(scale * backoff_factor), 0
growth_tracker += 1
if growth_tracker == growth_interval:
    grown = scale * growth_factor
    return float(grown if math.isfinite(grown) else scale), 0''',
5: '''return loss * torch.tensor(self._scale, device=loss.device, dtype=torch.float32)''',
6: '''for g in grads:
    g.mul_(1.0 / self._scale)
found_inf = not all(bool(torch.isfinite(g).all()) for g in grads)''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
return None if state["found_inf"] else optimizer.step(*args, **kwargs)''',
8: '''found_inf = any(s["found_inf"] for s in recorded)
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, found_inf,
                                                 self._growth_factor, self._backoff_factor,
                                                 self._growth_interval)
self._per_optimizer.clear()''',
9: '''return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
        "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}''',
10: '''if precision not in AUTOCAST_DTYPES:
    raise ValueError(f"unknown precision {precision!r}")
use_scaler = scaler is not None and scaler.is_enabled()
if use_scaler != (precision == "fp16"):
    raise ValueError("fp16 needs an enabled GradScaler; fp32 and bf16 take none")
autocast_dtype = AUTOCAST_DTYPES[precision]''',
11: '''for weight, batch in zip(weights, microbatches):
    with torch.autocast(device_type, dtype=autocast_dtype or torch.bfloat16, enabled=autocast_dtype is not None):
        loss = loss_fn(model, batch)
    if use_scaler:
        scaler.scale(loss * weight).backward()
    else:
        (loss * weight).backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = all(bool(torch.isfinite(p.grad).all()) for p in parameters if p.grad is not None)
grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm)) if finite else math.inf''',
13: '''if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif finite:
    optimizer.step()
stepped = finite
for p in parameters:
    p.grad = None''',
}
