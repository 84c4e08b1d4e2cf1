"""一次有效更新：K 个微批次的 autocast 前向、损失缩放与更新边界
（本章 Step 2 与 Step 3：梯度累积中的缩放与更新边界）。

每个微批次：autocast 前向，加权损失 w_i * loss_i，（缩放后的）反向，梯度在
``param.grad`` 中累积。只在更新边界做一次：

    反缩放 unscale  ->  有限值检查 + 全局梯度范数  ->  梯度裁剪
        ->  step 或跳步  ->  scaler update

若在微批次循环内 unscale、裁剪或 step，就会破坏梯度尺度和有效批次的语义。FP16
需要动态损失缩放（一个已启用的 ``torch.amp.GradScaler``）；BF16 的指数范围接近
FP32，不用 scaler，但梯度出现 NaN/inf 时仍须跳过更新。

One effective update from K microbatches with autocast and a GradScaler.
Per microbatch: autocast forward, weighted loss, (scaled) backward -- the
gradients accumulate in ``param.grad``. Only at the update boundary, once:

    unscale  ->  finite check + global norm  ->  clip  ->  step or skip
        ->  scaler update

Unscaling, clipping or stepping inside the microbatch loop breaks the gradient
scale and the meaning of the effective batch. FP16 needs dynamic loss scaling
(an enabled ``torch.amp.GradScaler``); BF16 has FP32's exponent range and runs
without a scaler, but a NaN or inf gradient must still skip the step.
"""
import math

import torch

AUTOCAST_DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def _check_weights(weights, count):
    """Microbatch weights: one per microbatch, each >= 0, summing to 1
    (default equal)."""
    if weights is None:
        return [1.0 / count] * count
    weights = [float(weight) for weight in weights]
    if len(weights) != count:
        raise ValueError(f"expected {count} weights, one per microbatch, "
                         f"got {len(weights)}")
    if any(not math.isfinite(weight) or weight < 0 for weight in weights):
        raise ValueError("weights must be finite and >= 0")
    if abs(sum(weights) - 1.0) > 1e-6:
        raise ValueError(f"weights must sum to 1, got {sum(weights)!r}")
    return weights


def train_step(model, optimizer, microbatches, loss_fn, *, precision,
               scaler=None, max_norm=1.0, weights=None):
    """Run one effective update over ``microbatches`` and report what happened.

    Args:
        model: a ``torch.nn.Module``; the autocast device type comes from its
            parameters.
        optimizer: the optimizer over the model's parameters.
        microbatches: a non-empty sequence of batches; ``loss_fn(model, batch)``
            returns the scalar mean loss of one microbatch.
        precision: ``'fp32'``, ``'bf16'`` or ``'fp16'``. ``'fp16'`` needs an
            enabled ``torch.amp.GradScaler``; ``'fp32'`` and ``'bf16'`` take
            none.
        scaler: the GradScaler for ``'fp16'``, else ``None``.
        max_norm: clip the real-scale global gradient norm to this value.
        weights: ``w_i >= 0`` per microbatch, summing to 1 (default equal);
            microbatch i contributes ``w_i * loss_i``.

    Returns:
        ``{'stepped', 'reason', 'grad_norm', 'scale_before', 'scale_after',
        'num_microbatches'}``: whether ``optimizer.step`` ran,
        ``'finite_gradient'`` or ``'non_finite_gradient'``, the pre-clip
        real-scale norm as a Python float (``inf`` when non-finite), the scale
        before and after (1.0 without a scaler) and K. On return every
        ``param.grad`` is ``None``.

    Raises:
        ValueError: unknown precision, a precision/scaler mismatch, bad weights
            or no microbatches.
    """
    microbatches = list(microbatches)
    if not microbatches:
        raise ValueError("microbatches must not be empty")
    # ==========================================
    # TODO 10：校验 precision 与 scaler，选出 autocast 的 dtype
    # 作用：只接受 'fp32'、'bf16'、'fp16'；'fp16' 必须配已启用的 GradScaler
    #       （scaler.is_enabled()），'fp32'/'bf16' 不得配已启用的 scaler，其余
    #       情况一律 ValueError。'fp32' 的 autocast_dtype 为 None，含义是“完全不
    #       启用 autocast”，而不是 torch.autocast(..., dtype=None)。
    # use_scaler = ???      # 传入的是已启用的 GradScaler
    # autocast_dtype = ???  # torch.float16 / torch.bfloat16，'fp32' 为 None
    # ==========================================
    # Validate `precision` ('fp32', 'bf16', 'fp16') against `scaler`; raise
    # ValueError otherwise. `use_scaler`: an *enabled* GradScaler came in
    # (scaler is not None and scaler.is_enabled()); a disabled one does not
    # count. `autocast_dtype`: torch.float16 for 'fp16', torch.bfloat16 for
    # 'bf16', None for 'fp32' -- meaning "no autocast at all" (enabled=False in
    # TODO 11), not torch.autocast(device_type, dtype=None), which still
    # autocasts (to bfloat16 on the CPU).
    # >>> TODO 10: validate, then set `use_scaler` and `autocast_dtype` (None: fp32, no autocast)
    if precision not in AUTOCAST_DTYPES:
        raise ValueError(f"precision must be one of {sorted(AUTOCAST_DTYPES)}, got {precision!r}")
    use_scaler = scaler is not None and scaler.is_enabled()
    if precision == "fp16" and not use_scaler:
        raise ValueError("precision 'fp16' needs an enabled torch.amp.GradScaler")
    if precision != "fp16" and use_scaler:
        raise ValueError(f"precision {precision!r} must run without a GradScaler")
    autocast_dtype = AUTOCAST_DTYPES[precision]
    # <<< TODO 10
    weights = _check_weights(weights, len(microbatches))
    parameters = list(model.parameters())
    device_type = parameters[0].device.type
    scale_before = float(scaler.get_scale()) if use_scaler else 1.0

    # ==========================================
    # TODO 11：逐个微批次执行 autocast 前向、加权损失与（缩放）反向
    # 作用：第 i 个微批次贡献 w_i * loss_i；每个微批次一次 autocast 前向、一次
    #       反向，梯度在 param.grad 中累积；循环内不清零梯度、不 unscale、
    #       不 step。
    # ==========================================
    # For each (weight, batch): loss_fn(model, batch) inside
    # torch.autocast(device_type, dtype=..., enabled=...) -- for 'fp32'
    # enabled=False --, multiply the loss by its weight, then
    # scaler.scale(weighted_loss).backward() when use_scaler, else
    # weighted_loss.backward().
    # >>> TODO 11: accumulate the gradients of sum_i w_i * loss_i, one backward per microbatch
    for weight, batch in zip(weights, microbatches):
        with torch.autocast(device_type=device_type, dtype=autocast_dtype or torch.bfloat16,
                            enabled=autocast_dtype is not None):
            loss = loss_fn(model, batch)
        weighted_loss = loss * weight
        if use_scaler:
            scaler.scale(weighted_loss).backward()
        else:
            weighted_loss.backward()
    # <<< TODO 11

    # ==========================================
    # TODO 12：在更新边界统一反缩放、检查有限值并裁剪真实尺度梯度
    # 作用：循环结束后只 unscale 一次；有限值检查、全局梯度范数和梯度裁剪都作用
    #       于真实梯度；梯度非有限时 grad_norm 为 inf，且不裁剪。
    # finite = ???     # 所有非 None 的 param.grad 都是有限值
    # grad_norm = ???  # 裁剪前的全局梯度范数（Python float），非有限时为 inf
    # ==========================================
    # After the loop, once: scaler.unscale_(optimizer) when use_scaler.
    # `finite`: every param.grad that is not None is finite (torch.isfinite).
    # Without a scaler (BF16, FP32) nothing else notices NaN/inf, so this check
    # is what makes them skip. If finite, clip to max_norm with
    # torch.nn.utils.clip_grad_norm_, which returns the pre-clip norm:
    # grad_norm = float(...).
    # >>> TODO 12: unscale once, set `finite` and `grad_norm` (pre-clip float, inf if not finite)
    if use_scaler:
        scaler.unscale_(optimizer)
    grads = [param.grad for param in parameters if param.grad is not None]
    finite = all(bool(torch.isfinite(grad).all()) for grad in grads)
    if finite:
        grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))
    else:
        grad_norm = math.inf
    # <<< TODO 12

    # ==========================================
    # TODO 13：执行 step 或跳过更新，更新 scale，并清空梯度
    # 作用：有 scaler 时先 step 或跳过（scaler.step(optimizer) 发现 inf/NaN 会
    #       自动跳步；也可以依据 finite 自己跳过），再 scaler.update()；
    #       无 scaler 时只在 finite 时 optimizer.step()；返回前每个 param.grad
    #       都为 None。
    # stepped = ???  # optimizer.step 是否真的执行了
    # ==========================================
    # With a scaler: step or skip -- scaler.step(optimizer) skips by itself
    # after an overflow, or skip yourself when not `finite` -- then
    # scaler.update(), once per call. Without one: optimizer.step() only when
    # finite. `stepped`: did optimizer.step really run. Then set every
    # parameter's grad to None.
    # >>> TODO 13: step or skip, update the scaler, set `stepped`, clear every param.grad
    if use_scaler:
        scaler.step(optimizer)  # GradScaler skips by itself when it found inf/NaN
        scaler.update()
    elif finite:
        optimizer.step()
    stepped = finite
    optimizer.zero_grad(set_to_none=True)
    for param in parameters:
        param.grad = None
    # <<< TODO 13
    return {
        "stepped": stepped,
        "reason": "finite_gradient" if finite else "non_finite_gradient",
        "grad_norm": grad_norm,
        "scale_before": scale_before,
        "scale_after": float(scaler.get_scale()) if use_scaler else 1.0,
        "num_microbatches": len(microbatches),
    }
