"""Step 4 of the chapter: restore the real gradient scale, measure the global
norm, and decide whether this update may be applied
(梯度尺度还原、有限值检查与更新计划).

Mixed precision training multiplies the loss by a scale ``s`` so that small FP16
gradients do not underflow. The gradients sitting in the parameters are then
``g' = s * g``. Before anything looks at them -- the finite check, the clipping
norm, the optimizer -- they must be brought back to the real scale
``g = g' / s``.

The order is the whole point of this module:

    unscale  ->  finite check  ->  global norm  ->  clip  ->  step (or skip)

A non-finite gradient (NaN or +/-inf anywhere, in any tensor) means the loss
scale was too large for this iteration: the update is skipped and the next
scale is lowered (``scale * backoff_factor``). Clipping must never run before
that check, because multiplying an ``inf`` by a clip coefficient cannot turn it
back into a trustworthy number.

中文说明：混合精度训练把 loss 乘以缩放因子 scale，让很小的 FP16 梯度不至于下溢；
因此参数里的梯度是 ``s * g``。有限值检查、梯度裁剪和优化器都必须先拿到真实梯度
``g = g' / s``（反缩放）。本模块的关键是顺序：反缩放 -> 有限值检查 -> 全局梯度范
数 -> 梯度裁剪 -> 更新（或跳过更新）。任一张量的任一元素为 NaN/inf（非有限梯度）
即说明本轮 scale 过大、发生了溢出：跳过这次更新，并把下一轮的 scale 回退为
``scale * backoff_factor``。裁剪绝不能放在有限值检查之前：inf 乘以裁剪系数不会变
回可信的数值，只会掩盖溢出。
"""
import torch


def unscale_gradients(scaled_gradients, scale):
    """Return real-scale copies of ``scaled_gradients`` (恢复真实梯度尺度).

    Args:
        scaled_gradients: list of gradient tensors (FP32, FP16 or BF16) or
            ``None`` for a parameter that got no gradient this iteration.
        scale: the loss scale ``s`` as a Python number. Must be ``> 0``.

    Returns:
        A new list of the same length. ``None`` stays ``None`` in its place;
        every tensor ``g'`` becomes a *new* tensor equal to ``g' / scale`` with
        the same dtype and shape. The input tensors are never modified.

    Raises:
        ValueError: if ``scale <= 0``.
    """
    if scale <= 0:
        raise ValueError("scale must be positive")
    # TODO 1：恢复真实梯度尺度
    # 作用：保留 None 的位置，并为每个有效梯度返回除以 scale 后的新张量（dtype、
    # 形状不变，不原地修改输入；scale 保持为 Python 数值）。
    # TODO 1: restore the real gradient scale.
    # Keep every None where it is and divide every tensor by `scale`, producing
    # a new tensor (no in-place operation on the inputs).
    raise NotImplementedError('TODO 1: build `gradients`, the list of '
                              'real-scale gradients')
    return gradients


def global_grad_norm(gradients):
    """Global L2 norm over every non-``None`` gradient (汇总全局梯度范数).

    Clipping treats all parameter gradients as one long vector, so the norm is
    ``sqrt(sum over tensors of sum of squares)`` -- not a per-tensor norm.
    The squares are accumulated in FP32 whatever the gradients' dtype: an FP16
    sum of squares overflows at 65504 and a BF16 sum loses small terms.

    Returns:
        A 0-dim ``torch.float32`` tensor (``0.`` for an empty list or all
        ``None``).
    """
    squared_sum = torch.zeros((), dtype=torch.float32)
    for gradient in gradients:
        if gradient is not None:
            # TODO 2：累积真实梯度的平方和
            # 作用：先转为 FP32，再把当前张量所有元素的平方加入跨参数的总和
            # （累加而不是覆盖）。
            # TODO 2: accumulate the squares of this gradient in FP32.
            # Convert to FP32 first, then add the sum of its squared elements.
            raise NotImplementedError('TODO 2: update `squared_sum`')
    return squared_sum.sqrt()


def plan_mixed_precision_update(scaled_gradients, scale, max_norm,
                                backoff_factor=0.5):
    """Plan one update: unscale, finite check, clip, then step or skip.

    Args:
        scaled_gradients: gradients as they sit in the parameters (``s * g``),
            tensors or ``None``.
        scale: the loss scale used for this iteration (Python number, ``> 0``).
        max_norm: clipping threshold for the global norm (Python number,
            ``> 0``).
        backoff_factor: factor applied to the scale after an overflow.

    Returns:
        A dict with exactly these keys:

        - ``gradients``: the clipped real-scale gradients on a finite step; the
          unscaled (not clipped) gradients on a skip.
        - ``grad_norm``: FP32 tensor, the global norm *before* clipping;
          ``inf`` on a skip.
        - ``clip_coefficient``: ``min(1.0, max_norm / (norm + 1e-12))`` as a
          Python float; ``0.0`` on a skip.
        - ``should_step``: ``True`` or ``False`` (a real ``bool``).
        - ``next_scale``: ``scale`` on a finite step, ``scale * backoff_factor``
          on a skip.
        - ``reason``: ``'finite_gradient'`` or ``'non_finite_gradient'``.

    Raises:
        ValueError: if ``max_norm <= 0`` (or ``scale <= 0``, from unscaling).
    """
    if max_norm <= 0:
        raise ValueError("max_norm must be positive")
    gradients = unscale_gradients(scaled_gradients, scale)
    # TODO 3：检查所有真实梯度是否有限
    # 作用：忽略 None，逐元素检查每个反缩放后的梯度（FP32/FP16/BF16 都要查）；任
    # 一元素为 NaN/inf 时跳过更新。这个有限值检查必须先于全局梯度范数和梯度裁
    # 剪，避免裁剪掩盖溢出。
    # TODO 3: check that every real gradient is finite.
    # Ignore None; one NaN or inf in any element of any tensor makes the whole
    # update non-finite. This check comes before the norm and the clipping.
    raise NotImplementedError('TODO 3: compute `finite`, a Python bool')
    if not finite:
        return {
            'gradients': gradients, 'grad_norm': torch.tensor(float('inf')),
            'clip_coefficient': 0.0, 'should_step': False,
            'next_scale': scale * backoff_factor,
            'reason': 'non_finite_gradient',
        }
    grad_norm = global_grad_norm(gradients)
    coefficient = min(1.0, max_norm / (float(grad_norm) + 1e-12))
    clipped = [None if gradient is None else gradient * coefficient
               for gradient in gradients]
    return {
        'gradients': clipped, 'grad_norm': grad_norm,
        'clip_coefficient': coefficient, 'should_step': True,
        'next_scale': scale, 'reason': 'finite_gradient',
    }
