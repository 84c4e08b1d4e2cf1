"""ming: comprehensions and generator expressions, Chinese messages, pinyin names; deletes
the stub's TODO comments once a TODO is done."""
STRIP_TODO_COMMENTS = True
FILLS = {
1: '''gradients = [(g / scale) if g is not None else g for g in scaled_gradients]''',
2: '''squared_sum += gradient.float().pow(2).sum()''',
3: '''finite = all(torch.isfinite(g).all().item() for g in gradients if g is not None)''',
4: '''if found_inf:
    scale, growth_tracker = scale * backoff_factor, 0
elif growth_tracker + 1 == growth_interval:
    xin = scale * growth_factor
    scale, growth_tracker = (xin if math.isfinite(xin) else scale), 0
else:
    growth_tracker += 1''',
5: '''return loss * torch.tensor(self._scale, dtype=torch.float32, device=loss.device)''',
6: '''for g in grads:
    g.div_(self._scale)
found_inf = any(not torch.isfinite(g).all() for g in grads)''',
7: '''if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
return None if state["found_inf"] else optimizer.step(*args, **kwargs)''',
8: '''found_inf = any(s["found_inf"] for s in recorded)
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, found_inf,
    self._growth_factor, self._backoff_factor, self._growth_interval)
self._per_optimizer.clear()''',
9: '''return {k: (self._growth_tracker if k == "_growth_tracker" else getattr(self, "_" + k))
        for k in ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")}''',
10: '''if precision not in {"fp32", "bf16", "fp16"}:
    raise ValueError(f"不支持的精度：{precision!r}")
use_scaler = scaler is not None and scaler.is_enabled()
if (precision == "fp16") != use_scaler:
    raise ValueError("fp16 必须配合已启用的 GradScaler，fp32/bf16 不能使用")
autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": None}[precision]''',
11: '''for w, b in zip(weights, microbatches):
    with torch.autocast(device_type, dtype=autocast_dtype if autocast_dtype else torch.bfloat16,
                        enabled=autocast_dtype is not None):
        l = loss_fn(model, b) * w
    (scaler.scale(l) if use_scaler else l).backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = all(bool(torch.isfinite(p.grad).all()) for p in parameters if p.grad is not None)
grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm)) if finite else math.inf''',
13: '''if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif finite:
    optimizer.step()
stepped = finite
for p in parameters:
    p.grad = None''',
}
