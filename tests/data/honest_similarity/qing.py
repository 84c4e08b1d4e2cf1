"""qing: module-level helper functions with docstrings, sums of squares in float64."""
TOP = {
"amp_update": '''def _divide_or_none(tensor, scale):
    """None stays None; a tensor is divided into a new one."""
    if tensor is None:
        return None
    return torch.div(tensor, scale)


def _all_finite(tensors):
    """True when no tensor holds NaN or +/-inf."""
    for tensor in tensors:
        if tensor is not None and not torch.isfinite(tensor).all():
            return False
    return True''',
"loss_scaler": '''def _grow_or_keep(scale, factor):
    """scale * factor, unless that is not finite."""
    grown = scale * factor
    return grown if math.isfinite(grown) else scale


def _has_non_finite(tensor):
    return not bool(torch.isfinite(tensor).all())''',
"amp_training_step": '''def _resolve_precision(precision, scaler):
    """(use_scaler, autocast dtype) for a valid combination, ValueError otherwise."""
    if precision not in AUTOCAST_DTYPES:
        raise ValueError(f"precision should be one of fp32/bf16/fp16, not {precision!r}")
    enabled = scaler is not None and scaler.is_enabled()
    if enabled != (precision == "fp16"):
        raise ValueError(f"precision {precision!r} with scaler={scaler!r} is not a valid combination")
    return enabled, AUTOCAST_DTYPES[precision]


def _grads_finite(parameters):
    return all(bool(torch.isfinite(p.grad).all()) for p in parameters if p.grad is not None)''',
}
FILLS = {
1: '''gradients = [_divide_or_none(t, scale) for t in scaled_gradients]''',
2: '''squares64 = gradient.to(torch.float64).pow(2).sum()
squared_sum = (squared_sum.double() + squares64).float()''',
3: '''finite = _all_finite(gradients)''',
4: '''if found_inf:
    return float(scale * backoff_factor), 0
if growth_tracker + 1 == growth_interval:
    return float(_grow_or_keep(scale, growth_factor)), 0
growth_tracker = growth_tracker + 1''',
5: '''return loss * torch.tensor(float(self._scale), device=loss.device, dtype=torch.float32)''',
6: '''found_inf = False
for grad in grads:
    grad.mul_(1.0 / self._scale)
    if _has_non_finite(grad):
        found_inf = True''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if state["found_inf"]:
    return None
return optimizer.step(*args, **kwargs)''',
8: '''overflow = False
for record in recorded:
    overflow |= bool(record["found_inf"])
scale, tracker = update_scale(self._scale, self._growth_tracker, overflow,
                              growth_factor=self._growth_factor, backoff_factor=self._backoff_factor,
                              growth_interval=self._growth_interval)
self._scale, self._growth_tracker = scale, tracker
self._per_optimizer = {}''',
9: '''state = {"scale": self.get_scale()}
state.update(growth_factor=self._growth_factor, backoff_factor=self._backoff_factor)
state.update(growth_interval=self._growth_interval, _growth_tracker=self._growth_tracker)
return state''',
10: '''use_scaler, autocast_dtype = _resolve_precision(precision, scaler)''',
11: '''for weight, batch in zip(weights, microbatches):
    with torch.autocast(device_type, dtype=autocast_dtype or torch.bfloat16, enabled=autocast_dtype is not None):
        scaled_part = loss_fn(model, batch) * weight
    if use_scaler:
        scaled_part = scaler.scale(scaled_part)
    scaled_part.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = _grads_finite(parameters)
grad_norm = math.inf
if finite:
    grad_norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm).item()''',
13: '''stepped = finite
if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif stepped:
    optimizer.step()
for p in parameters:
    p.grad = None''',
}
