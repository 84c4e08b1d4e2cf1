"""wei: pinyin names, a Chinese comment on most steps, if/else spelled out."""
FILLS = {
1: '''# 逐个除以 scale，None 原样保留
zhenshi = []
for tidu in scaled_gradients:
    if tidu is None:
        zhenshi.append(None)
    else:
        zhenshi.append(tidu / scale)
gradients = zhenshi''',
2: '''# 先转 FP32 再平方求和
pingfang = gradient.to(dtype=torch.float32).pow(2)
squared_sum = squared_sum + pingfang.sum()''',
3: '''# 任何一个元素不是有限值就跳过
finite = True
for tidu in gradients:
    if tidu is not None:
        if not torch.isfinite(tidu).all():
            finite = False''',
4: '''if found_inf:
    # 溢出：回退
    scale = scale * backoff_factor
    growth_tracker = 0
else:
    growth_tracker = growth_tracker + 1
    if growth_tracker == growth_interval:
        zengzhang = scale * growth_factor
        if math.isfinite(zengzhang):
            scale = zengzhang
        growth_tracker = 0''',
5: '''suofang = torch.tensor(self._scale, dtype=torch.float32, device=loss.device)
return loss * suofang''',
6: '''daoshu = 1.0 / self._scale
found_inf = False
for tidu in grads:
    tidu.mul_(daoshu)
    if not torch.isfinite(tidu).all():
        found_inf = True''',
7: '''if state["stage"] == _READY:
    # 本轮还没有反缩放
    self.unscale_(optimizer)
state["stage"] = _STEPPED
if state["found_inf"]:
    return None
return optimizer.step(*args, **kwargs)''',
8: '''youyichu = False
for zhuangtai in recorded:
    if zhuangtai["found_inf"]:
        youyichu = True
self._scale, self._growth_tracker = update_scale(self._scale, self._growth_tracker, youyichu,
                                                 self._growth_factor, self._backoff_factor,
                                                 self._growth_interval)
self._per_optimizer.clear()''',
9: '''zidian = {}
zidian["scale"] = self._scale
zidian["growth_factor"] = self._growth_factor
zidian["backoff_factor"] = self._backoff_factor
zidian["growth_interval"] = int(self._growth_interval)
zidian["_growth_tracker"] = int(self._growth_tracker)
return zidian''',
10: '''if precision == "fp16":
    autocast_dtype = torch.float16
elif precision == "bf16":
    autocast_dtype = torch.bfloat16
elif precision == "fp32":
    autocast_dtype = None
else:
    raise ValueError("precision 只能是 fp32、bf16 或 fp16")
use_scaler = scaler is not None and scaler.is_enabled()
if precision == "fp16" and not use_scaler:
    raise ValueError("fp16 需要已启用的 GradScaler")
if precision != "fp16" and use_scaler:
    raise ValueError("fp32/bf16 不能使用 GradScaler")''',
11: '''for quanzhong, pici in zip(weights, microbatches):
    with torch.autocast(device_type=device_type,
                        dtype=autocast_dtype if autocast_dtype is not None else torch.bfloat16,
                        enabled=autocast_dtype is not None):
        sunshi = loss_fn(model, pici)
    jiaquan = sunshi * quanzhong
    if use_scaler:
        scaler.scale(jiaquan).backward()
    else:
        jiaquan.backward()''',
12: '''if use_scaler:
    scaler.unscale_(optimizer)
finite = True
for canshu in parameters:
    if canshu.grad is not None and not torch.isfinite(canshu.grad).all():
        finite = False
if finite:
    grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))
else:
    grad_norm = float("inf")''',
13: '''if use_scaler:
    scaler.step(optimizer)
    scaler.update()
else:
    if finite:
        optimizer.step()
stepped = finite
for canshu in parameters:
    canshu.grad = None''',
}
