"""cai (held out of the calibration): a Chinese comment on almost every step, isinf|isnan
masks, straightforward loops."""
FILLS = {
1: '''# 新建列表，不能原地除
result_list = []
for one_grad in scaled_gradients:
    result_list.append(None if one_grad is None else torch.div(one_grad, scale))
gradients = result_list''',
2: '''squared_sum = squared_sum + torch.sum(gradient.to(torch.float32) * gradient.to(torch.float32))''',
3: '''# 逐元素检查 inf / nan
finite = True
for one_grad in gradients:
    if one_grad is not None and bool((torch.isinf(one_grad) | torch.isnan(one_grad)).any()):
        finite = False''',
4: '''if found_inf:
    # 发生溢出，缩小 scale
    scale = scale * backoff_factor
    growth_tracker = 0
else:
    growth_tracker = growth_tracker + 1
    if growth_tracker == growth_interval:
        # 连续 growth_interval 次没有溢出，尝试增大
        new_scale = scale * growth_factor
        scale = new_scale if math.isfinite(new_scale) else scale
        growth_tracker = 0''',
5: '''# 0 维 FP32 张量，放在 loss 的设备上
scale_tensor = torch.tensor(self._scale, dtype=torch.float32, device=loss.device)
scaled_loss = loss * scale_tensor
return scaled_loss''',
6: '''found_inf = False
inverse = 1.0 / self._scale
for one_grad in grads:
    one_grad.mul_(inverse)  # 原地
    if bool((torch.isinf(one_grad) | torch.isnan(one_grad)).any()):
        found_inf = True''',
7: '''if state["stage"] != _UNSCALED:
    # 还没 unscale_ 过
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if state["found_inf"]:
    # 跳步
    return None
return optimizer.step(*args, **kwargs)''',
8: '''found_inf = any(bool(s["found_inf"]) for s in recorded)
new_scale, new_tracker = update_scale(self._scale, self._growth_tracker, found_inf, self._growth_factor,
                                      self._backoff_factor, self._growth_interval)
self._scale = new_scale
self._growth_tracker = new_tracker
self._per_optimizer.clear()''',
9: '''state = {}
state["scale"] = float(self._scale)
state["growth_factor"] = float(self._growth_factor)
state["backoff_factor"] = float(self._backoff_factor)
state["growth_interval"] = int(self._growth_interval)
state["_growth_tracker"] = int(self._growth_tracker)
return state''',
10: '''if precision == "fp32":
    autocast_dtype = None
elif precision == "bf16":
    autocast_dtype = torch.bfloat16
elif precision == "fp16":
    autocast_dtype = torch.float16
else:
    raise ValueError(f"未知的 precision：{precision}")
use_scaler = scaler is not None and scaler.is_enabled()
if (precision == "fp16" and not use_scaler) or (precision != "fp16" and use_scaler):
    raise ValueError("precision 与 scaler 不匹配")''',
11: '''for i in range(len(microbatches)):
    batch_i = microbatches[i]
    w_i = weights[i]
    if autocast_dtype is None:
        loss_i = loss_fn(model, batch_i)
    else:
        with torch.autocast(device_type=device_type, dtype=autocast_dtype):
            loss_i = loss_fn(model, batch_i)
    weighted = w_i * loss_i
    if use_scaler:
        scaler.scale(weighted).backward()
    else:
        weighted.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)  # 只在边界反缩放一次
finite = True
for p in parameters:
    if p.grad is not None and bool((torch.isinf(p.grad) | torch.isnan(p.grad)).any()):
        finite = False
if finite:
    grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))
else:
    grad_norm = float("inf")''',
13: '''if use_scaler:
    scaler.step(optimizer)  # 有 inf 时自动跳步
    scaler.update()
elif finite:
    optimizer.step()
stepped = finite
for p in parameters:
    p.grad = None''',
}
