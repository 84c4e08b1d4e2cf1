"""ivo: map/zip, early returns."""
FILLS = {
1: '''gradients = list(map(lambda g: g if g is None else g.div(scale), scaled_gradients))''',
2: '''squared_sum = squared_sum.add(torch.linalg.vector_norm(gradient.float()).pow(2))''',
3: '''present = [g for g in gradients if g is not None]
finite = not any(torch.isinf(g).any() or torch.isnan(g).any() for g in present)
finite = bool(finite)''',
4: '''growth_tracker = 0 if found_inf else growth_tracker + 1
if found_inf:
    scale *= backoff_factor
elif growth_tracker == growth_interval:
    growth_tracker = 0
    bigger = scale * growth_factor
    if not (math.isinf(bigger) or math.isnan(bigger)):
        scale = bigger''',
5: '''return loss.mul(torch.as_tensor(self._scale, dtype=torch.float32, device=loss.device))''',
6: '''inverse = 1.0 / self._scale
bad = [False]
for tensor in grads:
    tensor.mul_(inverse)
    if torch.isnan(tensor).any() or torch.isinf(tensor).any():
        bad[0] = True
found_inf = bad[0]''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
return None if state["found_inf"] else optimizer.step(*args, **kwargs)''',
8: '''overflow = any(entry["found_inf"] for entry in recorded)
result = update_scale(self._scale, self._growth_tracker, overflow, self._growth_factor,
                      self._backoff_factor, self._growth_interval)
self._scale, self._growth_tracker = result
self._per_optimizer.clear()''',
9: '''keys = ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")
values = (self.get_scale(), self._growth_factor, self._backoff_factor,
          int(self._growth_interval), int(self._growth_tracker))
return dict(zip(keys, values))''',
10: '''if precision not in ("fp32", "bf16", "fp16"):
    raise ValueError(f"bad precision {precision}")
enabled_scaler = scaler is not None and scaler.is_enabled()
if precision == "fp16":
    if not enabled_scaler:
        raise ValueError("fp16 requires an enabled scaler")
elif enabled_scaler:
    raise ValueError("a scaler is only for fp16")
use_scaler = enabled_scaler
autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)''',
11: '''for w, mb in zip(weights, microbatches):
    if autocast_dtype is None:
        loss = loss_fn(model, mb)
    else:
        with torch.autocast(device_type=device_type, dtype=autocast_dtype):
            loss = loss_fn(model, mb)
    loss = loss * w
    if use_scaler:
        loss = scaler.scale(loss)
    loss.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
with_grad = [q for q in parameters if q.grad is not None]
finite = all(torch.isfinite(q.grad).all().item() for q in with_grad)
if not finite:
    grad_norm = math.inf
else:
    total = torch.nn.utils.clip_grad_norm_(with_grad, max_norm)
    grad_norm = float(total)''',
13: '''if use_scaler:
    scaler.step(optimizer)
    scaler.update()
    stepped = finite
else:
    stepped = finite
    if stepped:
        optimizer.step()
optimizer.zero_grad(set_to_none=True)''',
}
