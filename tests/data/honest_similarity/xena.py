"""xena: walrus operator, next() over generators, itertools, string tricks."""
TOP = {"amp_training_step": '''import itertools'''}
FILLS = {
1: '''gradients = list(scaled_gradients)
for i, g in enumerate(gradients):
    if g is not None:
        gradients[i] = g / scale''',
2: '''squared_sum = squared_sum + torch.sum(torch.pow(gradient.to(torch.float32), 2))''',
3: '''bad = next((g for g in gradients if g is not None and not g.isfinite().all()), None)
finite = bad is None''',
4: '''if found_inf:
    return float(scale * backoff_factor), 0
if (growth_tracker := growth_tracker + 1) == growth_interval:
    growth_tracker = 0
    if math.isfinite(bigger := scale * growth_factor):
        scale = bigger''',
5: '''return loss * torch.as_tensor(self._scale, dtype=torch.float32, device=loss.device)''',
6: '''inv_scale = 1.0 / self._scale
found_inf = False
for g in grads:
    if not g.mul_(inv_scale).isfinite().all():
        found_inf = True''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if not state["found_inf"]:
    return optimizer.step(*args, **kwargs)
return None''',
8: '''found_inf = any(s.get("found_inf", False) for s in recorded)
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, found_inf,
                                                 self._growth_factor, self._backoff_factor,
                                                 self._growth_interval)
self._per_optimizer.clear()''',
9: '''keys = "scale growth_factor backoff_factor growth_interval _growth_tracker".split()
return {key: getattr(self, key if key.startswith("_") else "_" + key) for key in keys}''',
10: '''if precision not in ("fp32", "bf16", "fp16"):
    raise ValueError(f"precision={precision!r}: expected 'fp32', 'bf16' or 'fp16'")
autocast_dtype = AUTOCAST_DTYPES[precision]
use_scaler = scaler is not None and scaler.is_enabled()
if use_scaler is not (precision == "fp16"):
    raise ValueError("an enabled GradScaler is required for fp16 and forbidden otherwise")''',
11: '''for weight, batch in itertools.zip_longest(weights, microbatches):
    with torch.autocast(device_type, dtype=autocast_dtype or torch.bfloat16, enabled=bool(autocast_dtype)):
        weighted = weight * loss_fn(model, batch)
    (scaler.scale(weighted) if use_scaler else weighted).backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = all(p.grad.isfinite().all() for p in parameters if p.grad is not None)
grad_norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm).item() if finite else math.inf''',
13: '''if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif finite:
    optimizer.step()
stepped = finite
for p in parameters:
    p.grad = None''',
}
