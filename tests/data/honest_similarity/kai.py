"""kai: small helpers, in-place copies, dot products."""
FILLS = {
1: '''def _real(t):
    return None if t is None else t.clone().div_(scale)
gradients = [_real(t) for t in scaled_gradients]''',
2: '''flat = gradient.reshape(-1).float()
squared_sum = squared_sum + torch.dot(flat, flat)''',
3: '''real = [t for t in gradients if t is not None]
finite = all(map(lambda t: bool(t.isfinite().all()), real))''',
4: '''if found_inf:
    return float(scale * backoff_factor), 0
if growth_tracker + 1 < growth_interval or growth_tracker + 1 > growth_interval:
    return float(scale), int(growth_tracker + 1)
grown = scale * growth_factor
return (float(grown) if math.isfinite(grown) else float(scale)), 0''',
5: '''scale_tensor = torch.scalar_tensor(self._scale, dtype=torch.float32, device=loss.device)
return scale_tensor * loss''',
6: '''reciprocal = 1.0 / self._scale
flags = []
for g in grads:
    g.mul_(reciprocal)
    flags.append(bool(g.isfinite().all()))
found_inf = not all(flags)''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if state["found_inf"]:
    return None
return optimizer.step(*args, **kwargs)''',
8: '''overflowed = True in [bool(entry["found_inf"]) for entry in recorded]
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, overflowed,
                                                 self._growth_factor, self._backoff_factor,
                                                 self._growth_interval)
self._per_optimizer = dict()''',
9: '''return {"scale": float(self._scale), "growth_factor": float(self._growth_factor),
        "backoff_factor": float(self._backoff_factor), "growth_interval": int(self._growth_interval),
        "_growth_tracker": int(self._growth_tracker)}''',
10: '''valid = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}
if not isinstance(precision, str) or precision not in valid:
    raise ValueError(f"precision {precision!r} is not fp32, bf16 or fp16")
use_scaler = scaler is not None and bool(scaler.is_enabled())
if precision == "fp16" and not use_scaler:
    raise ValueError("fp16 training needs an enabled GradScaler")
if precision != "fp16" and use_scaler:
    raise ValueError("only fp16 training takes a GradScaler")
autocast_dtype = valid[precision]''',
11: '''def _one(batch, share):
    with torch.autocast(device_type, dtype=autocast_dtype if autocast_dtype else torch.bfloat16,
                        enabled=autocast_dtype is not None):
        value = loss_fn(model, batch) * share
    if use_scaler:
        value = scaler.scale(value)
    value.backward()
for share, batch in zip(weights, microbatches):
    _one(batch, share)''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
present = [param.grad for param in parameters if param.grad is not None]
finite = not any(bool((~torch.isfinite(g)).any()) for g in present)
grad_norm = math.inf
if finite:
    grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))''',
13: '''if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif finite:
    optimizer.step()
stepped = finite
for param in parameters:
    param.grad = None''',
}
