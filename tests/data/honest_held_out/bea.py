"""bea (held out of the calibration): indexes into pre-sized lists, getattr tables,
str.format messages, stacked flags."""
FILLS = {
1: '''gradients = [None] * len(scaled_gradients)
for index, grad in enumerate(scaled_gradients):
    if grad is not None:
        gradients[index] = grad.true_divide(scale)''',
2: '''squared_sum.add_((gradient.float() ** 2).sum())''',
3: '''non_null = (grad for grad in gradients if grad is not None)
finite = all(bool(torch.all(torch.isfinite(grad))) for grad in non_null)''',
4: '''if found_inf:
    scale, growth_tracker = scale * backoff_factor, 0
    return float(scale), int(growth_tracker)
growth_tracker += 1
if growth_tracker == growth_interval:
    growth_tracker = 0
    grown = scale * growth_factor
    scale = grown if not math.isinf(grown) else scale''',
5: '''return loss * torch.as_tensor(float(self._scale), dtype=torch.float32).to(loss.device)''',
6: '''reciprocal = 1.0 / self._scale
states = []
for grad in grads:
    grad.mul_(reciprocal)
    states.append(torch.isfinite(grad).all())
found_inf = bool(states) and not bool(torch.stack(states).all())''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
outcome = None
if not state["found_inf"]:
    outcome = optimizer.step(*args, **kwargs)
return outcome''',
8: '''inf_somewhere = False
for per_opt in recorded:
    inf_somewhere = inf_somewhere or bool(per_opt["found_inf"])
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, inf_somewhere,
                                                 self._growth_factor, self._backoff_factor,
                                                 self._growth_interval)
for key in list(self._per_optimizer.keys()):
    self._per_optimizer.pop(key)''',
9: '''snapshot = {}
for key, attribute in (("scale", "_scale"), ("growth_factor", "_growth_factor"),
                       ("backoff_factor", "_backoff_factor"), ("growth_interval", "_growth_interval"),
                       ("_growth_tracker", "_growth_tracker")):
    snapshot[key] = getattr(self, attribute)
return snapshot''',
10: '''mapping = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}
if precision not in mapping.keys():
    raise ValueError("Unsupported precision: {}".format(precision))
scaler_on = False if scaler is None else bool(scaler.is_enabled())
if precision == "fp16":
    if not scaler_on:
        raise ValueError("fp16 training requires an enabled GradScaler")
else:
    if scaler_on:
        raise ValueError("GradScaler is only used with fp16")
use_scaler = scaler_on
autocast_dtype = mapping[precision]''',
11: '''for position in range(len(microbatches)):
    enabled = autocast_dtype is not None
    with torch.autocast(device_type=device_type, dtype=torch.bfloat16 if autocast_dtype is None else autocast_dtype,
                        enabled=enabled):
        micro_loss = loss_fn(model, microbatches[position])
    scaled_contribution = micro_loss * weights[position]
    if use_scaler:
        scaled_contribution = scaler.scale(scaled_contribution)
    scaled_contribution.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = True
grads_present = [p.grad for p in parameters if p.grad is not None]
for grad in grads_present:
    if not torch.isfinite(grad).all():
        finite = False
if finite:
    grad_norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm).item()
else:
    grad_norm = float("inf")''',
13: '''if use_scaler:
    scaler.step(optimizer)
    scaler.update()
    stepped = finite
else:
    stepped = finite
    if finite:
        optimizer.step()
for parameter in parameters:
    if parameter.grad is not None:
        parameter.grad = None''',
}
