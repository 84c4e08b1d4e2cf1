"""zane: terse one-liners, conditional expressions, tuple assignment, his own clipping;
deletes the stub's TODO comments."""
STRIP_TODO_COMMENTS = True
FILLS = {
1: '''gradients = [None if g is None else torch.divide(g, scale) for g in scaled_gradients]''',
2: '''squared_sum = squared_sum + gradient.float().norm() ** 2''',
3: '''finite = all(torch.isfinite(g).all() for g in filter(lambda g: g is not None, gradients))''',
4: '''scale, growth_tracker = (scale * backoff_factor, 0) if found_inf else (scale, growth_tracker + 1)
if not found_inf and growth_tracker == growth_interval:
    scale, growth_tracker = (scale * growth_factor if math.isfinite(scale * growth_factor) else scale), 0''',
5: '''return loss * torch.tensor(self._scale, dtype=torch.float32, device=loss.device)''',
6: '''[g.mul_(1 / self._scale) for g in grads]
found_inf = not all(g.isfinite().all() for g in grads)''',
7: '''self.unscale_(optimizer) if state["stage"] == _READY else None
state["stage"] = _STEPPED
return None if state["found_inf"] else optimizer.step(*args, **kwargs)''',
8: '''self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker,
                                                 any(s["found_inf"] for s in recorded), self._growth_factor,
                                                 self._backoff_factor, self._growth_interval)
self._per_optimizer = {}''',
9: '''return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
        "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}''',
10: '''if precision not in AUTOCAST_DTYPES: raise ValueError(precision)
use_scaler = bool(scaler is not None and scaler.is_enabled())
if use_scaler != (precision == "fp16"): raise ValueError(f"{precision} with scaler={use_scaler}")
autocast_dtype = AUTOCAST_DTYPES[precision]''',
11: '''for w, x in zip(weights, microbatches):
    with torch.autocast(device_type, dtype=autocast_dtype or torch.bfloat16, enabled=autocast_dtype is not None):
        y = w * loss_fn(model, x)
    (scaler.scale(y) if use_scaler else y).backward()''',
12: '''if use_scaler: scaler.unscale_(optimizer)
gs = [p.grad for p in parameters if p.grad is not None]
finite = all(bool(g.isfinite().all()) for g in gs)
grad_norm = math.inf
if finite:
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in gs])) if gs else torch.tensor(0.)
    grad_norm = float(total)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in gs: g.mul_(coef)''',
13: '''stepped = finite
if use_scaler: scaler.step(optimizer); scaler.update()
elif finite: optimizer.step()
for p in parameters: p.grad = None''',
}
