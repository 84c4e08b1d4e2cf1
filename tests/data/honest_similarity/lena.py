"""lena: plain loops with explicit temporaries, early returns, English messages."""
FILLS = {
1: '''gradients = []
for g in scaled_gradients:
    if g is None:
        gradients.append(None)
        continue
    real = g / scale
    gradients.append(real)''',
2: '''squared_sum = squared_sum + torch.sum(torch.square(gradient.float()))''',
3: '''finite = True
for g in gradients:
    if g is None:
        continue
    if torch.isnan(g).any() or torch.isinf(g).any():
        finite = False
        break''',
4: '''if found_inf:
    return float(scale * backoff_factor), 0
growth_tracker += 1
if growth_tracker != growth_interval:
    return float(scale), int(growth_tracker)
new_scale = scale * growth_factor
if math.isinf(new_scale) or math.isnan(new_scale):
    new_scale = scale
return float(new_scale), 0''',
5: '''scale_t = torch.tensor(self._scale, dtype=torch.float32)
scale_t = scale_t.to(loss.device)
return loss * scale_t''',
6: '''found_inf = False
inv = 1.0 / self._scale
for g in grads:
    g.mul_(inv)
for g in grads:
    if not torch.isfinite(g).all():
        found_inf = True
        break''',
7: '''needs_unscale = state["stage"] != _UNSCALED
if needs_unscale:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if state["found_inf"]:
    return None
out = optimizer.step(*args, **kwargs)
return out''',
8: '''found_inf = False
for s in recorded:
    if s["found_inf"]:
        found_inf = True
new_scale, new_tracker = update_scale(self._scale, self._growth_tracker, found_inf,
                                      self._growth_factor, self._backoff_factor, self._growth_interval)
self._scale = new_scale
self._growth_tracker = new_tracker
self._per_optimizer = {}''',
9: '''return {
    "scale": self._scale,
    "growth_factor": self._growth_factor,
    "backoff_factor": self._backoff_factor,
    "growth_interval": self._growth_interval,
    "_growth_tracker": self._growth_tracker,
}''',
10: '''if precision == "fp32":
    autocast_dtype = None
elif precision == "bf16":
    autocast_dtype = torch.bfloat16
elif precision == "fp16":
    autocast_dtype = torch.float16
else:
    raise ValueError("unknown precision " + str(precision))
use_scaler = False
if scaler is not None and scaler.is_enabled():
    use_scaler = True
if precision == "fp16" and not use_scaler:
    raise ValueError("fp16 needs an enabled scaler")
if precision != "fp16" and use_scaler:
    raise ValueError("only fp16 uses a scaler")''',
11: '''for i, batch in enumerate(microbatches):
    if autocast_dtype is None:
        loss = loss_fn(model, batch)
    else:
        with torch.autocast(device_type=device_type, dtype=autocast_dtype):
            loss = loss_fn(model, batch)
    weighted = loss * weights[i]
    if use_scaler:
        scaler.scale(weighted).backward()
    else:
        weighted.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = True
for p in parameters:
    if p.grad is None:
        continue
    if not torch.isfinite(p.grad).all():
        finite = False
        break
if finite:
    norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm)
    grad_norm = norm.item()
else:
    grad_norm = float("inf")''',
13: '''stepped = False
if finite:
    if use_scaler:
        scaler.step(optimizer)
    else:
        optimizer.step()
    stepped = True
if use_scaler:
    scaler.update()
for p in parameters:
    p.grad = None''',
}
