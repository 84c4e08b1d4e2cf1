"""jun: index loops, keyword calls."""
FILLS = {
1: '''gradients = [g / scale if g is not None else None for g in scaled_gradients]''',
2: '''as_fp32 = gradient.detach().to(dtype=torch.float32)
squared_sum = squared_sum + (as_fp32 * as_fp32).sum()''',
3: '''finite = True
for g in gradients:
    if g is None:
        continue
    if not bool(torch.all(torch.isfinite(g))):
        finite = False''',
4: '''if not found_inf:
    growth_tracker = growth_tracker + 1
    if growth_tracker == growth_interval:
        growth_tracker = 0
        if math.isfinite(scale * growth_factor):
            scale = scale * growth_factor
else:
    growth_tracker = 0
    scale = scale * backoff_factor''',
5: '''s = torch.tensor([self._scale], dtype=torch.float32, device=loss.device).reshape(())
return torch.mul(loss, s)''',
6: '''found_inf = False
if grads:
    for grad in grads:
        grad.mul_(1.0 / self._scale)
    found_inf = not all(bool(torch.isfinite(grad).all()) for grad in grads)''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if not state["found_inf"]:
    return optimizer.step(*args, **kwargs)
return None''',
8: '''any_inf = False
for entry in recorded:
    if entry["found_inf"]:
        any_inf = True
self._scale, self._growth_tracker = update_scale(
    scale=self._scale, growth_tracker=self._growth_tracker, found_inf=any_inf,
    growth_factor=self._growth_factor, backoff_factor=self._backoff_factor,
    growth_interval=self._growth_interval)
for key in list(self._per_optimizer):
    del self._per_optimizer[key]''',
9: '''out = {}
out["scale"] = self._scale
out["growth_factor"] = self._growth_factor
out["backoff_factor"] = self._backoff_factor
out["growth_interval"] = self._growth_interval
out["_growth_tracker"] = self._growth_tracker
return out''',
10: '''if precision == "fp16":
    autocast_dtype = torch.float16
elif precision == "bf16":
    autocast_dtype = torch.bfloat16
elif precision == "fp32":
    autocast_dtype = None
else:
    raise ValueError("precision must be fp32, bf16 or fp16")
use_scaler = scaler is not None and scaler.is_enabled()
if (precision == "fp16") is not use_scaler:
    raise ValueError("precision and scaler do not match")''',
11: '''on = autocast_dtype is not None
for i in range(len(microbatches)):
    with torch.autocast(device_type=device_type, dtype=autocast_dtype or torch.bfloat16, enabled=on):
        raw = loss_fn(model, microbatches[i])
    contribution = raw * weights[i]
    if use_scaler:
        contribution = scaler.scale(contribution)
    contribution.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
checks = [torch.isfinite(p.grad).all() for p in parameters if p.grad is not None]
finite = bool(torch.stack(checks).all()) if checks else True
grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm)) if finite else float("inf")''',
13: '''stepped = bool(finite)
if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif stepped:
    optimizer.step()
for p in parameters:
    if p.grad is not None:
        p.grad = None''',
}
