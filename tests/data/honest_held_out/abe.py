"""abe (held out of the calibration): torch.is_tensor tests, %-formatting, tuples of pairs,
an explicitly disabled autocast."""
FILLS = {
1: '''gradients = [g.div(scale) if torch.is_tensor(g) else g for g in scaled_gradients]''',
2: '''squared_sum += torch.linalg.norm(gradient.to(torch.float32)) ** 2''',
3: '''finite = not any(not torch.isfinite(t).all() for t in gradients if torch.is_tensor(t))''',
4: '''if found_inf:
    return float(scale) * float(backoff_factor), 0
next_tracker = growth_tracker + 1
if next_tracker == growth_interval:
    candidate = float(scale) * float(growth_factor)
    return (candidate if candidate != math.inf else float(scale)), 0
return float(scale), next_tracker''',
5: '''scale_value = torch.tensor(self.get_scale(), device=loss.device, dtype=torch.float32)
return torch.mul(scale_value, loss)''',
6: '''scale_inv = torch.tensor(1.0 / self._scale, dtype=torch.float32)
found_inf = False
for tensor in grads:
    tensor.mul_(scale_inv)
    found_inf |= bool(torch.any(~torch.isfinite(tensor)))''',
7: '''already_unscaled = state["stage"] == _UNSCALED
if not already_unscaled:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
return None if state["found_inf"] else optimizer.step(*args, **kwargs)''',
8: '''any_inf = sum(1 for s in recorded if s["found_inf"]) > 0
new_values = update_scale(self._scale, self._growth_tracker, any_inf, growth_factor=self._growth_factor,
                          backoff_factor=self._backoff_factor, growth_interval=self._growth_interval)
self._scale, self._growth_tracker = new_values
self._per_optimizer = {}''',
9: '''return {name: value for name, value in (("scale", self._scale), ("growth_factor", self._growth_factor),
                                        ("backoff_factor", self._backoff_factor),
                                        ("growth_interval", self._growth_interval),
                                        ("_growth_tracker", self._growth_tracker))}''',
10: '''allowed = ("fp32", "bf16", "fp16")
if precision not in allowed:
    raise ValueError("precision should be in %s, got %r" % (allowed, precision))
has_scaler = scaler is not None and scaler.is_enabled()
if has_scaler and precision != "fp16" or not has_scaler and precision == "fp16":
    raise ValueError("GradScaler must be enabled exactly for fp16")
use_scaler = has_scaler
autocast_dtype = dict(fp16=torch.float16, bf16=torch.bfloat16).get(precision)''',
11: '''for micro, w in zip(microbatches, weights):
    if autocast_dtype is None:
        context = torch.autocast(device_type, enabled=False)
    else:
        context = torch.autocast(device_type, dtype=autocast_dtype)
    with context:
        value = loss_fn(model, micro)
    value = value * w
    (scaler.scale(value) if use_scaler else value).backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
with_grads = [p for p in parameters if p.grad is not None]
finite = all(torch.isfinite(p.grad).all().item() for p in with_grads)
grad_norm = math.inf
if finite:
    grad_norm = float(torch.nn.utils.clip_grad_norm_(with_grads, max_norm=max_norm, norm_type=2.0))''',
13: '''if not finite:
    stepped = False
elif use_scaler:
    scaler.step(optimizer)
    stepped = True
else:
    optimizer.step()
    stepped = True
if use_scaler:
    scaler.update()
for p in parameters:
    p.grad = None''',
}
