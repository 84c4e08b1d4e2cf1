"""uma: guard clauses and early returns, short names, a nested predicate."""
FILLS = {
1: '''out = []
for sg in scaled_gradients:
    out.append(sg if sg is None else sg / scale)
gradients = out''',
2: '''squared_sum = squared_sum + (gradient.float() ** 2).sum()''',
3: '''def _ok(t):
    if t is None:
        return True
    return bool(torch.isfinite(t).all())
finite = all(_ok(t) for t in gradients)''',
4: '''if found_inf:
    return float(scale * backoff_factor), 0
if growth_tracker + 1 != growth_interval:
    return float(scale), growth_tracker + 1
g = scale * growth_factor
if not math.isfinite(g):
    return float(scale), 0
return float(g), 0''',
5: '''return loss * torch.tensor(self._scale, device=loss.device, dtype=torch.float32)''',
6: '''found_inf = False
s = self._scale
for gr in grads:
    gr.div_(s)
    if not found_inf and not torch.isfinite(gr).all():
        found_inf = True''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if state["found_inf"]:
    return None
return optimizer.step(*args, **kwargs)''',
8: '''inf = False
for st in recorded:
    if st["found_inf"]:
        inf = True
        break
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, inf, self._growth_factor,
                                                 self._backoff_factor, self._growth_interval)
self._per_optimizer = {}''',
9: '''return {"scale": self.get_scale(), "growth_factor": float(self._growth_factor),
        "backoff_factor": float(self._backoff_factor), "growth_interval": int(self._growth_interval),
        "_growth_tracker": int(self._growth_tracker)}''',
10: '''if precision not in AUTOCAST_DTYPES:
    raise ValueError("precision must be 'fp32', 'bf16' or 'fp16'")
use_scaler = scaler is not None and scaler.is_enabled()
if precision == "fp16" and not use_scaler:
    raise ValueError("'fp16' needs an enabled GradScaler")
if precision != "fp16" and use_scaler:
    raise ValueError("an enabled GradScaler only goes with 'fp16'")
autocast_dtype = AUTOCAST_DTYPES[precision]''',
11: '''for wt, mb in zip(weights, microbatches):
    with torch.autocast(device_type=device_type, dtype=autocast_dtype or torch.bfloat16,
                        enabled=autocast_dtype is not None):
        l = loss_fn(model, mb)
    l = l * wt
    if use_scaler:
        scaler.scale(l).backward()
    else:
        l.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = all(torch.isfinite(p.grad).all().item() for p in parameters if p.grad is not None)
if not finite:
    grad_norm = float("inf")
else:
    grad_norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm).item()''',
13: '''if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif finite:
    optimizer.step()
stepped = finite
optimizer.zero_grad(set_to_none=True)''',
}
