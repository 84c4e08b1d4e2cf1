"""sven: exceptions as control flow (try/except/else), dict lookups, %-formatting."""
FILLS = {
1: '''gradients = []
for position, grad in enumerate(scaled_gradients):
    try:
        gradients.append(grad.div(scale))
    except AttributeError:
        if grad is not None:
            raise
        gradients.append(None)''',
2: '''squared_sum.add_(torch.sum(gradient.type(torch.float32) ** 2))''',
3: '''checked = [bool(torch.isfinite(g).all()) for g in gradients if g is not None]
finite = False not in checked''',
4: '''try:
    if found_inf:
        raise OverflowError
    growth_tracker += 1
    if growth_tracker == growth_interval:
        growth_tracker = 0
        candidate = scale * growth_factor
        if math.isfinite(candidate):
            scale = candidate
except OverflowError:
    scale, growth_tracker = scale * backoff_factor, 0''',
5: '''multiplier = torch.tensor(data=self._scale, dtype=torch.float32, device=loss.device)
return loss * multiplier''',
6: '''found_inf = False
for grad in grads:
    torch.mul(grad, 1.0 / self._scale, out=grad)
    found_inf = found_inf or bool(grad.isinf().any() or grad.isnan().any())''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if state["found_inf"]:
    return None
else:
    return optimizer.step(*args, **kwargs)''',
8: '''flags = [state["found_inf"] for state in recorded]
self._scale, self._growth_tracker = update_scale(
    self._scale, self._growth_tracker, True in flags,
    self._growth_factor, self._backoff_factor, self._growth_interval,
)
self._per_optimizer = {}''',
9: '''state = dict.fromkeys(("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"))
state["scale"] = float(self._scale)
state["growth_factor"] = float(self._growth_factor)
state["backoff_factor"] = float(self._backoff_factor)
state["growth_interval"] = int(self._growth_interval)
state["_growth_tracker"] = int(self._growth_tracker)
return state''',
10: '''use_scaler = scaler is not None and scaler.is_enabled()
allowed = {"fp16": use_scaler, "bf16": not use_scaler, "fp32": not use_scaler}
if not allowed.get(precision, False):
    raise ValueError("precision %r does not fit scaler %r" % (precision, scaler))
autocast_dtype = torch.float16 if precision == "fp16" else torch.bfloat16 if precision == "bf16" else None''',
11: '''for batch, weight in zip(microbatches, weights):
    autocast = torch.autocast(device_type=device_type, dtype=autocast_dtype or torch.bfloat16,
                              enabled=autocast_dtype is not None)
    with autocast:
        batch_loss = loss_fn(model, batch)
    scaled = batch_loss * weight
    if use_scaler:
        scaled = scaler.scale(scaled)
    scaled.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
try:
    for param in parameters:
        if param.grad is not None and not torch.isfinite(param.grad).all():
            raise FloatingPointError
except FloatingPointError:
    finite, grad_norm = False, float("inf")
else:
    finite = True
    grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))''',
13: '''if not use_scaler:
    if finite:
        optimizer.step()
else:
    scaler.step(optimizer)
    scaler.update()
stepped = finite
for param in parameters:
    param.grad = None''',
}
