"""yuki: defensive and explicit: isinstance checks, nested helpers with docstrings, keyword
arguments everywhere, math.isinf/isnan, explicit conversions."""
FILLS = {
1: '''def _restore(gradient):
    """gradient / scale as a new tensor (None stays None)."""
    if gradient is None:
        return None
    if not isinstance(gradient, torch.Tensor):
        raise TypeError(f"expected a tensor or None, got {type(gradient).__name__}")
    return gradient.div(scale)

gradients = [_restore(gradient) for gradient in scaled_gradients]''',
2: '''squared_sum = squared_sum + torch.linalg.vector_norm(gradient, ord=2, dtype=torch.float32).square()''',
3: '''finite = True
for gradient in gradients:
    if gradient is None:
        continue
    if bool(torch.isnan(gradient).any()) or bool(torch.isinf(gradient).any()):
        finite = False
        break''',
4: '''if bool(found_inf):
    new_scale = scale * backoff_factor
    new_tracker = 0
else:
    new_tracker = growth_tracker + 1
    new_scale = scale
    if new_tracker == growth_interval:
        candidate = scale * growth_factor
        if not (math.isinf(candidate) or math.isnan(candidate)):
            new_scale = candidate
        new_tracker = 0
return float(new_scale), int(new_tracker)''',
5: '''if not isinstance(loss, torch.Tensor):
    raise TypeError("loss must be a tensor")
factor = torch.tensor(self._scale, dtype=torch.float32, device=loss.device)
return loss * factor''',
6: '''inverse_scale = 1.0 / self._scale
any_non_finite = False
for gradient in grads:
    gradient.mul_(inverse_scale)
    if bool(torch.isnan(gradient).any()) or bool(torch.isinf(gradient).any()):
        any_non_finite = True
found_inf = any_non_finite''',
7: '''stage = state["stage"]
if stage == _READY:
    self.unscale_(optimizer)
elif stage != _UNSCALED:
    raise RuntimeError("unexpected stage " + repr(stage))
state["stage"] = _STEPPED
if bool(state["found_inf"]):
    return None
return optimizer.step(*args, **kwargs)''',
8: '''found_inf = False
for optimizer_state in recorded:
    if bool(optimizer_state["found_inf"]):
        found_inf = True
new_scale, new_tracker = update_scale(
    scale=self._scale,
    growth_tracker=self._growth_tracker,
    found_inf=found_inf,
    growth_factor=self._growth_factor,
    backoff_factor=self._backoff_factor,
    growth_interval=self._growth_interval,
)
self._scale = float(new_scale)
self._growth_tracker = int(new_tracker)
self._per_optimizer = {}''',
9: '''state = {
    "scale": float(self._scale),
    "growth_factor": float(self._growth_factor),
    "backoff_factor": float(self._backoff_factor),
    "growth_interval": int(self._growth_interval),
    "_growth_tracker": int(self._growth_tracker),
}
return state''',
10: '''if not isinstance(precision, str):
    raise ValueError(f"precision must be a string, got {type(precision).__name__}")
if precision not in AUTOCAST_DTYPES:
    raise ValueError(f"precision must be one of {', '.join(AUTOCAST_DTYPES)}; got {precision!r}")
scaler_enabled = scaler is not None and bool(scaler.is_enabled())
if precision == "fp16" and not scaler_enabled:
    raise ValueError("precision 'fp16' requires an enabled torch.amp.GradScaler")
if precision != "fp16" and scaler_enabled:
    raise ValueError(f"precision {precision!r} must not be used with an enabled GradScaler")
use_scaler = scaler_enabled
autocast_dtype = AUTOCAST_DTYPES[precision]''',
11: '''autocast_enabled = autocast_dtype is not None
for index in range(len(microbatches)):
    batch = microbatches[index]
    weight = weights[index]
    with torch.autocast(device_type=device_type,
                        dtype=autocast_dtype if autocast_enabled else torch.bfloat16,
                        enabled=autocast_enabled):
        batch_loss = loss_fn(model, batch)
    weighted_loss = batch_loss * weight
    if use_scaler:
        scaler.scale(weighted_loss).backward()
    else:
        weighted_loss.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = True
for parameter in parameters:
    if parameter.grad is None:
        continue
    if not bool(torch.isfinite(parameter.grad).all()):
        finite = False
        break
if finite:
    total_norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm=max_norm)
    grad_norm = float(total_norm)
else:
    grad_norm = math.inf''',
13: '''stepped = False
if use_scaler:
    scaler.step(optimizer)
    stepped = finite
    scaler.update()
else:
    if finite:
        optimizer.step()
        stepped = True
for parameter in parameters:
    parameter.grad = None''',
}
