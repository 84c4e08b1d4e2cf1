"""ravi: functional style (map, filter, functools.reduce, operator, lambdas); deletes the
stub's TODO comments."""
STRIP_TODO_COMMENTS = True
TOP = {"amp_update": '''import functools''', "loss_scaler": '''import functools
import operator'''}
FILLS = {
1: '''gradients = [*map(lambda t: None if t is None else torch.true_divide(t, scale), scaled_gradients)]''',
2: '''squared_sum = squared_sum + gradient.float().mul(gradient.float()).sum()''',
3: '''finite = functools.reduce(lambda ok, t: ok and (t is None or bool(torch.isfinite(t).all())), gradients, True)''',
4: '''growth_tracker = (growth_tracker + 1) * (not found_inf)
if found_inf:
    scale = scale * backoff_factor
elif growth_tracker == growth_interval:
    growth_tracker, scale = 0, (scale * growth_factor if math.isfinite(scale * growth_factor) else scale)''',
5: '''return torch.mul(loss, torch.tensor(self._scale, dtype=torch.float32).to(device=loss.device))''',
6: '''factor = 1.0 / self._scale
found_inf = functools.reduce(operator.or_, [not bool(g.mul_(factor).isfinite().all()) for g in grads], False)''',
7: '''state["stage"] = _STEPPED if state["stage"] == _UNSCALED else (self.unscale_(optimizer) or _STEPPED)
return None if state["found_inf"] else optimizer.step(*args, **kwargs)''',
8: '''found_inf = functools.reduce(operator.or_, (bool(s["found_inf"]) for s in recorded), False)
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, found_inf,
                                                 self._growth_factor, self._backoff_factor,
                                                 self._growth_interval)
self._per_optimizer = {}''',
9: '''fields = ("scale", "growth_factor", "backoff_factor", "growth_interval", "growth_tracker")
return {("_" + f if f == "growth_tracker" else f): getattr(self, "_" + f) for f in fields}''',
10: '''dtype_of = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}
if not isinstance(precision, str) or precision not in dtype_of:
    raise ValueError("bad precision: %r" % (precision,))
use_scaler = getattr(scaler, "is_enabled", lambda: False)()
if use_scaler ^ (precision == "fp16"):
    raise ValueError("fp16 goes with an enabled GradScaler, fp32/bf16 without one")
autocast_dtype = dtype_of[precision]''',
11: '''def forward(batch):
    with torch.autocast(device_type, dtype=autocast_dtype or torch.bfloat16, enabled=autocast_dtype is not None):
        return loss_fn(model, batch)
for w, b in zip(weights, microbatches):
    term = forward(b) * w
    (scaler.scale(term) if use_scaler else term).backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
live = list(filter(lambda p: p.grad is not None, parameters))
finite = all(map(lambda p: bool(torch.isfinite(p.grad).all()), live))
grad_norm = float(torch.nn.utils.clip_grad_norm_(live, max_norm)) if finite else float("inf")''',
13: '''stepped = finite
if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif finite:
    optimizer.step()
list(map(lambda p: setattr(p, "grad", None), parameters))''',
}
