"""tara: whole-tensor operations (cat, einsum, new_tensor) instead of per-tensor loops."""
FILLS = {
1: '''gradients = [torch.div(g, scale) if isinstance(g, torch.Tensor) else None for g in scaled_gradients]''',
2: '''flat = gradient.float().flatten()
squared_sum = squared_sum + torch.einsum("i,i->", flat, flat)''',
3: '''present = [g.flatten().float() for g in gradients if g is not None]
finite = bool(torch.cat(present).isfinite().all()) if present else True''',
4: '''if found_inf:
    scale *= backoff_factor
    growth_tracker = 0
else:
    growth_tracker += 1
    if growth_tracker == growth_interval:
        scale = scale * growth_factor if math.isfinite(scale * growth_factor) else scale
        growth_tracker = 0''',
5: '''return loss * loss.new_tensor(self._scale, dtype=torch.float32)''',
6: '''for g in grads:
    g.mul_(1.0 / self._scale)
found_inf = bool(grads) and not bool(torch.cat([g.flatten().double() for g in grads]).isfinite().all())''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
return optimizer.step(*args, **kwargs) if not state["found_inf"] else None''',
8: '''found_inf = bool(torch.tensor([s["found_inf"] for s in recorded]).any())
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, found_inf,
                                                 self._growth_factor, self._backoff_factor,
                                                 self._growth_interval)
self._per_optimizer = {}''',
9: '''return {"scale": float(self._scale), "growth_factor": float(self._growth_factor),
        "backoff_factor": float(self._backoff_factor), "growth_interval": int(self._growth_interval),
        "_growth_tracker": int(self._growth_tracker)}''',
10: '''if precision == "fp16":
    if scaler is None or not scaler.is_enabled():
        raise ValueError("fp16 needs an enabled GradScaler")
    use_scaler, autocast_dtype = True, torch.float16
elif precision in ("bf16", "fp32"):
    if scaler is not None and scaler.is_enabled():
        raise ValueError(f"{precision} runs without a GradScaler")
    use_scaler = False
    autocast_dtype = torch.bfloat16 if precision == "bf16" else None
else:
    raise ValueError(f"unknown precision {precision!r}")''',
11: '''for k, batch in enumerate(microbatches):
    if autocast_dtype is not None:
        with torch.autocast(device_type, dtype=autocast_dtype):
            mb_loss = loss_fn(model, batch)
    else:
        mb_loss = loss_fn(model, batch)
    mb_loss = weights[k] * mb_loss
    if use_scaler:
        mb_loss = scaler.scale(mb_loss)
    mb_loss.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
grads = [p.grad.flatten() for p in parameters if p.grad is not None]
finite = bool(torch.cat(grads).isfinite().all()) if grads else True
grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm)) if finite else math.inf''',
13: '''if finite:
    if use_scaler:
        scaler.step(optimizer)
    else:
        optimizer.step()
if use_scaler:
    scaler.update()
stepped = finite
for p in parameters:
    p.grad = None''',
}
