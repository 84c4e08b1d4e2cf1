"""olga: the foreach kernels (torch._foreach_*), a context manager chosen up front, her own
clipping with foreach."""
TOP = {"amp_training_step": '''import contextlib'''}
FILLS = {
1: '''present = [g for g in scaled_gradients if g is not None]
divided = iter(torch._foreach_div(present, scale)) if present else iter(())
gradients = [None if g is None else next(divided) for g in scaled_gradients]''',
2: '''squared_sum = squared_sum + torch.linalg.vector_norm(gradient.float(), ord=2).square()''',
3: '''present = [g for g in gradients if g is not None]
finite = all(t.isfinite().all().item() for t in present)''',
4: '''if found_inf:
    next_scale, next_tracker = scale * backoff_factor, 0
else:
    next_tracker = growth_tracker + 1
    next_scale = scale
    if next_tracker == growth_interval:
        next_tracker = 0
        trial = scale * growth_factor
        if math.isfinite(trial):
            next_scale = trial
scale, growth_tracker = next_scale, next_tracker''',
5: '''return loss.mul(torch.full([], self._scale, dtype=torch.float32, device=loss.device))''',
6: '''if grads:
    torch._foreach_mul_(grads, 1.0 / self._scale)
found_inf = bool(grads) and not all(bool(g.isfinite().all()) for g in grads)''',
7: '''if state["stage"] not in (_UNSCALED,):
    self.unscale_(optimizer)
state.update(stage=_STEPPED)
if not state["found_inf"]:
    return optimizer.step(*args, **kwargs)''',
8: '''inf_flags = torch.tensor([float(s["found_inf"]) for s in recorded])
found = bool(inf_flags.sum() > 0)
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, found,
                                                 growth_factor=self._growth_factor,
                                                 backoff_factor=self._backoff_factor,
                                                 growth_interval=self._growth_interval)
self._per_optimizer = {}''',
9: '''return dict(scale=self._scale, growth_factor=self._growth_factor, backoff_factor=self._backoff_factor,
            growth_interval=self._growth_interval, _growth_tracker=self._growth_tracker)''',
10: '''table = {"fp32": (None, False), "bf16": (torch.bfloat16, False), "fp16": (torch.float16, True)}
if precision not in table:
    raise ValueError("precision: expected fp32, bf16 or fp16")
autocast_dtype, needs_scaler = table[precision]
use_scaler = scaler is not None and scaler.is_enabled()
if needs_scaler != use_scaler:
    raise ValueError("scaler/precision mismatch")''',
11: '''for weight, batch in zip(weights, microbatches):
    ctx = contextlib.nullcontext() if autocast_dtype is None else torch.autocast(device_type, dtype=autocast_dtype)
    with ctx:
        out = loss_fn(model, batch)
    out = out * weight
    if use_scaler:
        out = scaler.scale(out)
    out.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
grads = [p.grad for p in parameters if p.grad is not None]
finite = all(bool(torch.isfinite(g).all()) for g in grads)
if finite:
    norms = torch._foreach_norm(grads) if grads else []
    total = torch.linalg.vector_norm(torch.stack(norms)) if grads else torch.tensor(0.0)
    grad_norm = float(total)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    if grads:
        torch._foreach_mul_(grads, coef)
else:
    grad_norm = math.inf''',
13: '''stepped = bool(finite)
if use_scaler:
    if stepped:
        scaler.step(optimizer)
    scaler.update()
elif stepped:
    optimizer.step()
optimizer.zero_grad(set_to_none=True)''',
}
