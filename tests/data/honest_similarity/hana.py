"""hana: loops and explicit temporaries."""
FILLS = {
1: '''gradients = []
for item in scaled_gradients:
    gradients.append(None if item is None else torch.div(item, scale))''',
2: '''squared_sum += torch.sum(gradient.to(torch.float32) ** 2)''',
3: '''finite = True
for item in gradients:
    if item is not None and not torch.isfinite(item).all().item():
        finite = False
        break''',
4: '''if found_inf:
    scale, growth_tracker = scale * backoff_factor, 0
else:
    growth_tracker += 1
    if growth_tracker == growth_interval:
        candidate = scale * growth_factor
        scale = candidate if math.isfinite(candidate) else scale
        growth_tracker = 0''',
5: '''factor = torch.full((), self._scale, dtype=torch.float32, device=loss.device)
return loss * factor''',
6: '''found_inf = False
for g in grads:
    g.div_(self._scale)
    found_inf = found_inf or not torch.isfinite(g).all().item()''',
7: '''if state["stage"] != _UNSCALED:
    self.unscale_(optimizer)
skip = state["found_inf"]
state["stage"] = _STEPPED
if skip:
    return None
result = optimizer.step(*args, **kwargs)
return result''',
8: '''inf_seen = False
for state in recorded:
    inf_seen = inf_seen or state["found_inf"]
new_scale, new_tracker = update_scale(self._scale, self._growth_tracker, inf_seen,
                                      growth_factor=self._growth_factor,
                                      backoff_factor=self._backoff_factor,
                                      growth_interval=self._growth_interval)
self._scale = new_scale
self._growth_tracker = new_tracker
self._per_optimizer = {}''',
9: '''state = dict(scale=float(self._scale), growth_factor=float(self._growth_factor),
             backoff_factor=float(self._backoff_factor))
state["growth_interval"] = int(self._growth_interval)
state["_growth_tracker"] = int(self._growth_tracker)
return state''',
10: '''try:
    autocast_dtype = AUTOCAST_DTYPES[precision]
except (KeyError, TypeError):
    raise ValueError("unknown precision: " + repr(precision)) from None
use_scaler = bool(scaler is not None and scaler.is_enabled())
if use_scaler != (precision == "fp16"):
    raise ValueError("fp16 needs an enabled GradScaler and only fp16 may use one")''',
11: '''for index, batch in enumerate(microbatches):
    enabled = autocast_dtype is not None
    with torch.autocast(device_type, dtype=autocast_dtype if enabled else torch.bfloat16, enabled=enabled):
        part = weights[index] * loss_fn(model, batch)
    (scaler.scale(part) if use_scaler else part).backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = True
for p in parameters:
    if p.grad is not None and not torch.isfinite(p.grad).all():
        finite = False
grad_norm = float("inf")
if finite:
    grad_norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm=max_norm).item()''',
13: '''stepped = False
if use_scaler:
    scaler.step(optimizer)
    scaler.update()
    stepped = finite
elif finite:
    optimizer.step()
    stepped = True
for p in parameters:
    p.grad = None''',
}
