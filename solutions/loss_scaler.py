"""手写的动态损失缩放器，行为与 ``torch.amp.GradScaler('cpu')`` 一致（超出本章
Step 4 的部分）。
A dynamic loss scaler built by hand, compatible with
``torch.amp.GradScaler('cpu')``.

本章 Step 1 表格的最后一行是“Scale update：溢出时降低，稳定运行后可逐步提高”。
本模块把这一行完整实现出来，每一轮迭代对每个优化器（optimizer）依次执行：
The chapter's Step 1 table ends with "scale update: lower it on overflow, raise
it slowly after a stable run". This module builds that mechanism; per
iteration and optimizer:

    scaler.scale(loss).backward()  # 参数梯度为 s * g / gradients are s * g
    scaler.unscale_(optimizer)     # 可选：恢复真实梯度尺度并记录 found_inf
                                   # optional: gradients become g, found_inf
    clip_grad_norm_(...)           # 此时梯度裁剪作用于真实梯度
                                   # clipping sees the real scale
    scaler.step(optimizer)         # 有非有限梯度时跳步
                                   # steps, or skips when found_inf
    scaler.update()                # 溢出则 scale 回退，连续稳定后增长
                                   # backoff on overflow, growth after a run

机制 / Mechanisms:

* 缩放因子 scale：迭代之间保存为 Python float。``scale`` 用放在 loss 所在设备上
  的 0 维 FP32 张量去乘 loss：0 维 FP16 loss 乘 Python float 仍是 FP16，超过
  65504 就溢出；乘 FP32 张量则提升为 FP32。
  The scale is a Python float kept between iterations; ``scale`` multiplies the
  loss by it as a 0-dim FP32 tensor on the loss's device (a 0-dim FP16 loss
  times a Python float stays FP16 and overflows at 65504; times an FP32 tensor
  it is promoted to FP32).
* 每个优化器的阶段 / per-optimizer stages：一轮迭代内，每个优化器依次处于
  ready -> unscaled -> stepped，由 ``update`` 重置。``unscale_`` 每轮最多一次，
  且不能在 ``step`` 之后；``step`` 只在本轮还没有 unscale_ 时自己调用它；第二次
  ``step`` 报错。
  Within an iteration each optimizer goes ready -> unscaled -> stepped, and
  ``update`` starts the next iteration. ``unscale_`` runs at most once per
  optimizer per iteration and never after ``step``; ``step`` unscales only
  when ``unscale_`` was not called; a second ``step`` raises.
* found_inf（有限值检查）：``unscale_`` 原地把每个 ``param.grad`` 除以 scale，
  并记录是否有任一元素为 inf/NaN；``step`` 在 found_inf 时跳过更新并返回 None，
  ``update`` 让 scale 回退。
  ``unscale_`` divides every ``param.grad`` by the scale in place and records
  whether any element is inf or NaN; ``step`` then skips (returns None) and
  ``update`` backs off.
* 增长计数器 growth tracker 与增长间隔 growth_interval：``update`` 用计数器统计
  连续的无溢出迭代；计数器 + 1 恰好等于 growth_interval 时 scale 乘以
  growth_factor（结果为有限值才采用），计数器归零；一次溢出让 scale 乘以
  backoff_factor，计数器也归零。
  ``update`` counts clean iterations in the growth tracker; when tracker + 1
  equals ``growth_interval`` the scale grows by ``growth_factor`` (kept only if
  finite) and the tracker restarts at 0; an overflow multiplies the scale by
  ``backoff_factor`` and resets the tracker.
* 拒绝 FP16 梯度：主权重必须保持 FP32。FP16 梯度意味着参数本身就是 FP16，优化器
  会在 FP16 权重上做更新，小的更新量被舍入吞掉；GradScaler 拒绝这种情况，我们也
  抛出 ValueError。BF16、FP32、FP64 梯度都接受。
  FP16 gradients are refused: master weights must stay FP32. An FP16 gradient
  means FP16 parameters, whose small updates are lost to rounding; GradScaler
  refuses them and so do we (ValueError). BF16, FP32 and FP64 gradients are
  accepted.
* ``state_dict`` 使用 GradScaler 的五个键，训练可以保存后由任一个 scaler
  接着跑。
  ``state_dict`` has GradScaler's five keys, so a run can be saved and resumed.

不要在这里使用 ``torch.amp.GradScaler``（或 ``torch.cuda.amp``/``torch.cpu.amp``
的 scaler、私有的 ``torch._amp_*`` 算子）：评分器会检查，委托给它们的模块在这一
部分得 0 分。
Do not use ``torch.amp.GradScaler`` (or ``torch.cuda.amp``/``torch.cpu.amp``
scalers, or private ``torch._amp_*`` ops) here: the grader checks, and a module
that delegates earns no points for this part.
"""
import math
import numbers

import torch

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"
_FP16_GRADIENTS = (
    "Attempting to unscale FP16 gradients: master weights must stay FP32.")


def _check_scaler_arguments(scale, growth_factor, backoff_factor,
                            growth_interval):
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise ValueError(f"scale must be a real number, got {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    if not growth_factor > 1.0:
        raise ValueError(f"growth_factor must be > 1, got {growth_factor!r}")
    if not 0.0 < backoff_factor < 1.0:
        raise ValueError(f"backoff_factor must be in (0, 1), "
                         f"got {backoff_factor!r}")
    if isinstance(growth_interval, bool) \
            or not isinstance(growth_interval, numbers.Integral) \
            or growth_interval <= 0:
        raise ValueError(f"growth_interval must be a positive int, "
                         f"got {growth_interval!r}")


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000):
    """One application of GradScaler's scale-update rule. Returns
    ``(scale, growth_tracker)``.
    GradScaler 的一次 scale 更新（scale 回退或增长），返回
    ``(scale, growth_tracker)``。

    * ``found_inf``: the scale is multiplied by ``backoff_factor`` and the
      tracker goes back to 0.
    * otherwise the tracker counts one more clean iteration; when it *equals*
      ``growth_interval`` the scale is multiplied by ``growth_factor`` (the new
      value is kept only if it is finite) and the tracker goes back to 0.

    Raises ``ValueError`` for a scale that is not finite or ``<= 0``,
    ``growth_factor <= 1``, ``backoff_factor`` outside (0, 1), a
    ``growth_interval`` that is not a positive int, or a negative tracker.
    """
    _check_scaler_arguments(scale, growth_factor, backoff_factor,
                            growth_interval)
    if isinstance(growth_tracker, bool) \
            or not isinstance(growth_tracker, numbers.Integral) \
            or growth_tracker < 0:
        raise ValueError(f"growth_tracker must be an int >= 0, "
                         f"got {growth_tracker!r}")
    # TODO 4：按 GradScaler 的规则更新 scale 与增长计数器
    # 作用：found_inf 时 scale × backoff_factor、计数器归零；否则计数器 + 1，
    #       恰好等于 growth_interval 时 scale × growth_factor（结果是有限的
    #       Python float 才采用）并归零；已经超过 growth_interval 的计数器只继续
    #       加一。
    # TODO 4: apply the update rule described in the docstring.
    # >>> TODO 4: compute the new `scale` and `growth_tracker`
    if found_inf:
        return float(scale * backoff_factor), 0
    growth_tracker = growth_tracker + 1
    if growth_tracker == growth_interval:
        grown = scale * growth_factor
        if math.isfinite(grown):
            scale = grown
        growth_tracker = 0
    # <<< TODO 4
    return float(scale), int(growth_tracker)


class LossScaler:
    """Dynamic loss scaling for one (non-fused) optimizer, like
    ``GradScaler('cpu')``. 动态损失缩放，行为与 ``GradScaler('cpu')`` 一致。"""

    def __init__(self, init_scale=65536.0, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000):
        _check_scaler_arguments(init_scale, growth_factor, backoff_factor,
                                growth_interval)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        # Per-optimizer bookkeeping for the current iteration:
        # id(optimizer) -> {"stage": ..., "found_inf": bool}
        self._per_optimizer = {}

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(
            id(optimizer), {"stage": _READY, "found_inf": False})

    def get_scale(self):
        """The current scale as a Python float."""
        return float(self._scale)

    def scale(self, loss):
        """Return ``loss * scale`` (the scaled loss to call ``backward`` on)."""
        # TODO 5：返回缩放后的损失
        # 作用：乘以放在 loss 所在设备上的 0 维 FP32 张量形式的 scale；不原地
        #       修改 loss，结果仍连在计算图上（之后要对它 backward）。
        # TODO 5: multiply by the scale held as a 0-dim FP32 tensor on the
        # loss's device.
        # >>> TODO 5: return the scaled loss
        return loss * torch.tensor(self._scale, dtype=torch.float32, device=loss.device)
        # <<< TODO 5

    def unscale_(self, optimizer):
        """Divide every ``param.grad`` of ``optimizer`` by the scale, in place
        (e.g. multiply it by 1/scale), and record whether any element is inf or
        NaN (found_inf) for ``step``/``update``. 原地把每个 ``param.grad`` 除以
        scale（恢复真实梯度尺度），并记录是否出现非有限梯度。"""
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this "
                               "optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        grads = [param.grad for group in optimizer.param_groups
                 for param in group["params"] if param.grad is not None]
        if any(grad.dtype == torch.float16 for grad in grads):
            raise ValueError(_FP16_GRADIENTS)
        # TODO 6：原地反缩放每个梯度并记录 found_inf
        # 作用：`grads` 已收集了所有 param group 中不为 None 的梯度；把每个都
        #       原地除以 scale（例如乘以 1/scale，张量对象不变），任一元素为
        #       NaN/inf 时 found_inf 为 True。
        # TODO 6: unscale every gradient in place and record found_inf.
        # >>> TODO 6: update the grads in place and set `found_inf`
        inv_scale = 1.0 / self._scale
        found_inf = False
        for grad in grads:
            grad.mul_(inv_scale)
            if not bool(torch.isfinite(grad).all()):
                found_inf = True
        # <<< TODO 6
        state["found_inf"] = found_inf
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale if not done yet, then ``optimizer.step(*args, **kwargs)``
        and return its value -- or skip the step and return ``None`` when
        found_inf."""
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last "
                               "update().")
        # TODO 7：确保梯度已反缩放，再执行 step 或跳过更新
        # 作用：本轮还没有 unscale_ 时才调用它；标记该优化器本轮已 step（跳步
        #       也算）；found_inf 时返回 None 且不调用 optimizer.step，否则原样
        #       转发参数并返回其返回值。
        # TODO 7: make sure the gradients are unscaled, then step or skip.
        # >>> TODO 7: step or skip, remembering that this optimizer has stepped
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        state["stage"] = _STEPPED
        if state["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)
        # <<< TODO 7

    def update(self):
        """Update the scale from this iteration's found_inf, then start a new
        iteration."""
        recorded = [state for state in self._per_optimizer.values()
                    if state["stage"] != _READY]
        if not recorded:
            raise RuntimeError("No inf checks were recorded prior to update().")
        # TODO 8：用本轮的 found_inf 更新 scale 与增长计数器，并开始下一轮
        # 作用：任一优化器（step 过或只 unscale_ 过）发现 inf/NaN 即 found_inf；
        #       用本 scaler 的 growth_factor、backoff_factor、growth_interval
        #       调用 update_scale，保存两个结果，再清空各优化器的本轮状态。
        # TODO 8: apply `update_scale` with this iteration's found_inf and
        # reset the iteration.
        # >>> TODO 8: update the scale and the growth tracker, then forget the per-optimizer states
        found_inf = any(state["found_inf"] for state in recorded)
        self._scale, self._growth_tracker = update_scale(
            self._scale, self._growth_tracker, found_inf, self._growth_factor,
            self._backoff_factor, self._growth_interval)
        self._per_optimizer.clear()
        # <<< TODO 8

    def state_dict(self):
        """GradScaler's five keys: scale, growth_factor, backoff_factor,
        growth_interval, _growth_tracker."""
        # TODO 9：返回与 GradScaler 相同五个键的状态字典
        # 作用：scale、growth_factor、backoff_factor 为数值，growth_interval 与
        #       _growth_tracker 为 int，都取当前值，这样新的 scaler
        #       load_state_dict 后能接着同一条轨迹运行。
        # TODO 9: return the scaler state with GradScaler's keys.
        # >>> TODO 9: build the state dict
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }
        # <<< TODO 9

    def load_state_dict(self, state_dict):
        """Restore a state saved by ``state_dict`` (ours or GradScaler's)."""
        if not state_dict:
            raise RuntimeError("The source state dict is empty.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
