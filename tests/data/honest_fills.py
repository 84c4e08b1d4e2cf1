"""Independent correct solutions of every TODO, written on the current template from its
comments alone, by four imagined students of different habits (hana: loops and explicit
temporaries; ivo: map/zip, early returns; jun: index loops, keyword calls; kai: small helpers,
in-place copies, dot products). Each is put
into the stubs by tests/honest.py; they score full marks (tests/test_similarity.py checks
one, the calibration reads all). Edit them when the stubs change."""
FILLS = {
"hana": {
1: """gradients = []
for item in scaled_gradients:
    gradients.append(None if item is None else torch.div(item, scale))""",
2: """squared_sum += torch.sum(gradient.to(torch.float32) ** 2)""",
3: """finite = True
for item in gradients:
    if item is not None and not torch.isfinite(item).all().item():
        finite = False
        break""",
4: """if found_inf:
    scale, growth_tracker = scale * backoff_factor, 0
else:
    growth_tracker += 1
    if growth_tracker == growth_interval:
        candidate = scale * growth_factor
        scale = candidate if math.isfinite(candidate) else scale
        growth_tracker = 0""",
5: """factor = torch.full((), self._scale, dtype=torch.float32, device=loss.device)
return loss * factor""",
6: """found_inf = False
for g in grads:
    g.div_(self._scale)
    found_inf = found_inf or not torch.isfinite(g).all().item()""",
7: """if state["stage"] != _UNSCALED:
    self.unscale_(optimizer)
skip = state["found_inf"]
state["stage"] = _STEPPED
if skip:
    return None
result = optimizer.step(*args, **kwargs)
return result""",
8: """inf_seen = False
for state in recorded:
    inf_seen = inf_seen or state["found_inf"]
new_scale, new_tracker = update_scale(self._scale, self._growth_tracker, inf_seen,
                                      growth_factor=self._growth_factor,
                                      backoff_factor=self._backoff_factor,
                                      growth_interval=self._growth_interval)
self._scale = new_scale
self._growth_tracker = new_tracker
self._per_optimizer = {}""",
9: """state = dict(scale=float(self._scale), growth_factor=float(self._growth_factor),
             backoff_factor=float(self._backoff_factor))
state["growth_interval"] = int(self._growth_interval)
state["_growth_tracker"] = int(self._growth_tracker)
return state""",
10: """try:
    autocast_dtype = AUTOCAST_DTYPES[precision]
except (KeyError, TypeError):
    raise ValueError("unknown precision: " + repr(precision)) from None
use_scaler = bool(scaler is not None and scaler.is_enabled())
if use_scaler != (precision == "fp16"):
    raise ValueError("fp16 needs an enabled GradScaler and only fp16 may use one")""",
11: """for index, batch in enumerate(microbatches):
    enabled = autocast_dtype is not None
    with torch.autocast(device_type, dtype=autocast_dtype if enabled else torch.bfloat16, enabled=enabled):
        part = weights[index] * loss_fn(model, batch)
    (scaler.scale(part) if use_scaler else part).backward()""",
12: """if use_scaler:
    scaler.unscale_(optimizer)
finite = True
for p in parameters:
    if p.grad is not None and not torch.isfinite(p.grad).all():
        finite = False
grad_norm = float("inf")
if finite:
    grad_norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm=max_norm).item()""",
13: """stepped = False
if use_scaler:
    scaler.step(optimizer)
    scaler.update()
    stepped = finite
elif finite:
    optimizer.step()
    stepped = True
for p in parameters:
    p.grad = None""",
},
"ivo": {
1: """gradients = list(map(lambda g: g if g is None else g.div(scale), scaled_gradients))""",
2: """squared_sum = squared_sum.add(torch.linalg.vector_norm(gradient.float()).pow(2))""",
3: """present = [g for g in gradients if g is not None]
finite = not any(torch.isinf(g).any() or torch.isnan(g).any() for g in present)
finite = bool(finite)""",
4: """growth_tracker = 0 if found_inf else growth_tracker + 1
if found_inf:
    scale *= backoff_factor
elif growth_tracker == growth_interval:
    growth_tracker = 0
    bigger = scale * growth_factor
    if not (math.isinf(bigger) or math.isnan(bigger)):
        scale = bigger""",
5: """return loss.mul(torch.as_tensor(self._scale, dtype=torch.float32, device=loss.device))""",
6: """inverse = 1.0 / self._scale
bad = [False]
for tensor in grads:
    tensor.mul_(inverse)
    if torch.isnan(tensor).any() or torch.isinf(tensor).any():
        bad[0] = True
found_inf = bad[0]""",
7: """if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
return None if state["found_inf"] else optimizer.step(*args, **kwargs)""",
8: """overflow = any(entry["found_inf"] for entry in recorded)
result = update_scale(self._scale, self._growth_tracker, overflow, self._growth_factor,
                      self._backoff_factor, self._growth_interval)
self._scale, self._growth_tracker = result
self._per_optimizer.clear()""",
9: """keys = ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")
values = (self.get_scale(), self._growth_factor, self._backoff_factor,
          int(self._growth_interval), int(self._growth_tracker))
return dict(zip(keys, values))""",
10: """if precision not in ("fp32", "bf16", "fp16"):
    raise ValueError(f"bad precision {precision}")
enabled_scaler = scaler is not None and scaler.is_enabled()
if precision == "fp16":
    if not enabled_scaler:
        raise ValueError("fp16 requires an enabled scaler")
elif enabled_scaler:
    raise ValueError("a scaler is only for fp16")
use_scaler = enabled_scaler
autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)""",
11: """for w, mb in zip(weights, microbatches):
    if autocast_dtype is None:
        loss = loss_fn(model, mb)
    else:
        with torch.autocast(device_type=device_type, dtype=autocast_dtype):
            loss = loss_fn(model, mb)
    loss = loss * w
    if use_scaler:
        loss = scaler.scale(loss)
    loss.backward()""",
12: """if use_scaler:
    scaler.unscale_(optimizer)
with_grad = [q for q in parameters if q.grad is not None]
finite = all(torch.isfinite(q.grad).all().item() for q in with_grad)
if not finite:
    grad_norm = math.inf
else:
    total = torch.nn.utils.clip_grad_norm_(with_grad, max_norm)
    grad_norm = float(total)""",
13: """if use_scaler:
    scaler.step(optimizer)
    scaler.update()
    stepped = finite
else:
    stepped = finite
    if stepped:
        optimizer.step()
optimizer.zero_grad(set_to_none=True)""",
},
"jun": {
1: """gradients = [g / scale if g is not None else None for g in scaled_gradients]""",
2: """as_fp32 = gradient.detach().to(dtype=torch.float32)
squared_sum = squared_sum + (as_fp32 * as_fp32).sum()""",
3: """finite = True
for g in gradients:
    if g is None:
        continue
    if not bool(torch.all(torch.isfinite(g))):
        finite = False""",
4: """if not found_inf:
    growth_tracker = growth_tracker + 1
    if growth_tracker == growth_interval:
        growth_tracker = 0
        if math.isfinite(scale * growth_factor):
            scale = scale * growth_factor
else:
    growth_tracker = 0
    scale = scale * backoff_factor""",
5: """s = torch.tensor([self._scale], dtype=torch.float32, device=loss.device).reshape(())
return torch.mul(loss, s)""",
6: """found_inf = False
if grads:
    for grad in grads:
        grad.mul_(1.0 / self._scale)
    found_inf = not all(bool(torch.isfinite(grad).all()) for grad in grads)""",
7: """if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if not state["found_inf"]:
    return optimizer.step(*args, **kwargs)
return None""",
8: """any_inf = False
for entry in recorded:
    if entry["found_inf"]:
        any_inf = True
self._scale, self._growth_tracker = update_scale(
    scale=self._scale, growth_tracker=self._growth_tracker, found_inf=any_inf,
    growth_factor=self._growth_factor, backoff_factor=self._backoff_factor,
    growth_interval=self._growth_interval)
for key in list(self._per_optimizer):
    del self._per_optimizer[key]""",
9: """out = {}
out["scale"] = self._scale
out["growth_factor"] = self._growth_factor
out["backoff_factor"] = self._backoff_factor
out["growth_interval"] = self._growth_interval
out["_growth_tracker"] = self._growth_tracker
return out""",
10: """if precision == "fp16":
    autocast_dtype = torch.float16
elif precision == "bf16":
    autocast_dtype = torch.bfloat16
elif precision == "fp32":
    autocast_dtype = None
else:
    raise ValueError("precision must be fp32, bf16 or fp16")
use_scaler = scaler is not None and scaler.is_enabled()
if (precision == "fp16") is not use_scaler:
    raise ValueError("precision and scaler do not match")""",
11: """on = autocast_dtype is not None
for i in range(len(microbatches)):
    with torch.autocast(device_type=device_type, dtype=autocast_dtype or torch.bfloat16, enabled=on):
        raw = loss_fn(model, microbatches[i])
    contribution = raw * weights[i]
    if use_scaler:
        contribution = scaler.scale(contribution)
    contribution.backward()""",
12: """if use_scaler:
    scaler.unscale_(optimizer)
checks = [torch.isfinite(p.grad).all() for p in parameters if p.grad is not None]
finite = bool(torch.stack(checks).all()) if checks else True
grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm)) if finite else float("inf")""",
13: """stepped = bool(finite)
if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif stepped:
    optimizer.step()
for p in parameters:
    if p.grad is not None:
        p.grad = None""",
},
"kai": {
1: """def _real(t):
    return None if t is None else t.clone().div_(scale)
gradients = [_real(t) for t in scaled_gradients]""",
2: """flat = gradient.reshape(-1).float()
squared_sum = squared_sum + torch.dot(flat, flat)""",
3: """real = [t for t in gradients if t is not None]
finite = all(map(lambda t: bool(t.isfinite().all()), real))""",
4: """if found_inf:
    return float(scale * backoff_factor), 0
if growth_tracker + 1 < growth_interval or growth_tracker + 1 > growth_interval:
    return float(scale), int(growth_tracker + 1)
grown = scale * growth_factor
return (float(grown) if math.isfinite(grown) else float(scale)), 0""",
5: """scale_tensor = torch.scalar_tensor(self._scale, dtype=torch.float32, device=loss.device)
return scale_tensor * loss""",
6: """reciprocal = 1.0 / self._scale
flags = []
for g in grads:
    g.mul_(reciprocal)
    flags.append(bool(g.isfinite().all()))
found_inf = not all(flags)""",
7: """if state["stage"] == _READY:
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if state["found_inf"]:
    return None
return optimizer.step(*args, **kwargs)""",
8: """overflowed = True in [bool(entry["found_inf"]) for entry in recorded]
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, overflowed,
                                                 self._growth_factor, self._backoff_factor,
                                                 self._growth_interval)
self._per_optimizer = dict()""",
9: """return {"scale": float(self._scale), "growth_factor": float(self._growth_factor),
        "backoff_factor": float(self._backoff_factor), "growth_interval": int(self._growth_interval),
        "_growth_tracker": int(self._growth_tracker)}""",
10: """valid = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}
if not isinstance(precision, str) or precision not in valid:
    raise ValueError(f"precision {precision!r} is not fp32, bf16 or fp16")
use_scaler = scaler is not None and bool(scaler.is_enabled())
if precision == "fp16" and not use_scaler:
    raise ValueError("fp16 training needs an enabled GradScaler")
if precision != "fp16" and use_scaler:
    raise ValueError("only fp16 training takes a GradScaler")
autocast_dtype = valid[precision]""",
11: """def _one(batch, share):
    with torch.autocast(device_type, dtype=autocast_dtype if autocast_dtype else torch.bfloat16,
                        enabled=autocast_dtype is not None):
        value = loss_fn(model, batch) * share
    if use_scaler:
        value = scaler.scale(value)
    value.backward()
for share, batch in zip(weights, microbatches):
    _one(batch, share)""",
12: """if use_scaler:
    scaler.unscale_(optimizer)
present = [param.grad for param in parameters if param.grad is not None]
finite = not any(bool((~torch.isfinite(g)).any()) for g in present)
grad_norm = math.inf
if finite:
    grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))""",
13: """if use_scaler:
    scaler.step(optimizer)
    scaler.update()
elif finite:
    optimizer.step()
stepped = finite
for param in parameters:
    param.grad = None""",
},
}
