"""pavel: while-loops over indices, C style, results built in place."""
FILLS = {
1: '''gradients = [None] * len(scaled_gradients)
i = 0
while i < len(scaled_gradients):
    g = scaled_gradients[i]
    if g is not None:
        gradients[i] = g / scale
    i += 1''',
2: '''flat32 = gradient.reshape(-1).to(torch.float32)
squared_sum = squared_sum + torch.sum(flat32 * flat32)''',
3: '''finite = True
k = 0
while finite and k < len(gradients):
    if gradients[k] is not None:
        finite = bool(torch.isfinite(gradients[k]).all())
    k += 1''',
4: '''if found_inf:
    scale *= backoff_factor
    growth_tracker = 0
elif growth_tracker + 1 != growth_interval:
    growth_tracker += 1
else:
    growth_tracker = 0
    if math.isfinite(scale * growth_factor):
        scale *= growth_factor''',
5: '''scale_tensor = torch.ones((), dtype=torch.float32, device=loss.device) * self._scale
return loss * scale_tensor''',
6: '''inv = 1.0 / self._scale
found_inf = False
idx = 0
while idx < len(grads):
    grads[idx].mul_(inv)
    if not found_inf and not bool(torch.isfinite(grads[idx]).all()):
        found_inf = True
    idx += 1''',
7: '''if state["stage"] != _UNSCALED:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
result = None
if not state["found_inf"]:
    result = optimizer.step(*args, **kwargs)
return result''',
8: '''found_inf = False
n = 0
while n < len(recorded) and not found_inf:
    found_inf = bool(recorded[n]["found_inf"])
    n += 1
pair = update_scale(self._scale, self._growth_tracker, found_inf, self._growth_factor,
                    self._backoff_factor, self._growth_interval)
self._scale = pair[0]
self._growth_tracker = pair[1]
self._per_optimizer = {}''',
9: '''names = ["scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"]
values = [self._scale, self._growth_factor, self._backoff_factor, self._growth_interval, self._growth_tracker]
result = {}
i = 0
while i < len(names):
    result[names[i]] = values[i]
    i += 1
return result''',
10: '''options = ("fp32", "bf16", "fp16")
dtypes = (None, torch.bfloat16, torch.float16)
i = 0
while i < len(options) and options[i] != precision:
    i += 1
if i == len(options):
    raise ValueError("precision must be 'fp32', 'bf16' or 'fp16'")
autocast_dtype = dtypes[i]
use_scaler = scaler is not None and scaler.is_enabled()
if use_scaler and precision != "fp16":
    raise ValueError("GradScaler given for " + precision)
if not use_scaler and precision == "fp16":
    raise ValueError("fp16 without an enabled GradScaler")''',
11: '''i = 0
while i < len(microbatches):
    with torch.autocast(device_type=device_type,
                        dtype=autocast_dtype if autocast_dtype is not None else torch.bfloat16,
                        enabled=autocast_dtype is not None):
        current = loss_fn(model, microbatches[i])
    current = current * weights[i]
    if use_scaler:
        current = scaler.scale(current)
    current.backward()
    i += 1''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = True
i = 0
while i < len(parameters):
    g = parameters[i].grad
    if g is not None and not bool(torch.isfinite(g).all()):
        finite = False
    i += 1
grad_norm = float("inf")
if finite:
    grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))''',
13: '''stepped = False
if use_scaler:
    if finite:
        scaler.step(optimizer)
        stepped = True
    scaler.update()
elif finite:
    optimizer.step()
    stepped = True
i = 0
while i < len(parameters):
    parameters[i].grad = None
    i += 1''',
}
