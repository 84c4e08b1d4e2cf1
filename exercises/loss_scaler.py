"""A dynamic loss scaler built by hand, compatible with ``torch.amp.GradScaler``.

The chapter's Step 1 table ends with "scale update: lower it on overflow, raise
it slowly after a stable run" (溢出时降低，稳定运行后可逐步提高). This module
builds that mechanism for one optimizer at a time:

    scaler.scale(loss).backward()   # gradients are s * g
    scaler.unscale_(optimizer)      # optional; gradients become g, found_inf recorded
    clip_grad_norm_(...)            # safe here: real scale
    scaler.step(optimizer)          # steps, or skips when found_inf
    scaler.update()                 # backoff on overflow, growth after a clean run

Rules you must not break (they are what ``GradScaler('cpu')`` does):

* the scale is a float kept between iterations; multiply losses by it as an
  FP32 tensor (a 0-dim FP16 loss times a Python float stays FP16 and overflows
  at 65504, while times an FP32 tensor it is promoted to FP32);
* ``unscale_`` works in place on ``param.grad`` and may run once per
  optimizer per iteration, never after ``step``;
* FP16 gradients are refused (master weights must stay FP32);
* ``update`` counts clean iterations in a growth tracker and grows the scale
  exactly when the tracker reaches ``growth_interval``.

Do not use ``torch.amp.GradScaler`` (or ``torch.cuda.amp``/``torch.cpu.amp``
scalers, or private ``torch._amp_*`` ops) here: the grader checks, and a module
that delegates earns no points for this part.
"""
import math
import numbers

import torch

_READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"


def _check_scaler_arguments(scale, growth_factor, backoff_factor, growth_interval):
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise ValueError(f"scale must be a real number, got {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    if not growth_factor > 1.0:
        raise ValueError(f"growth_factor must be > 1, got {growth_factor!r}")
    if not 0.0 < backoff_factor < 1.0:
        raise ValueError(f"backoff_factor must be in (0, 1), got {backoff_factor!r}")
    if isinstance(growth_interval, bool) or not isinstance(growth_interval, numbers.Integral) \
            or growth_interval <= 0:
        raise ValueError(f"growth_interval must be a positive int, got {growth_interval!r}")


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    """One application of GradScaler's scale-update rule. Returns ``(scale, growth_tracker)``.

    * ``found_inf``: the scale is multiplied by ``backoff_factor`` and the
      tracker goes back to 0.
    * otherwise the tracker counts one more clean iteration; when it *equals*
      ``growth_interval`` the scale is multiplied by ``growth_factor`` (the new
      value is kept only if it is finite) and the tracker goes back to 0.

    Raises ``ValueError`` for a scale that is not finite or ``<= 0``,
    ``growth_factor <= 1``, ``backoff_factor`` outside (0, 1), a
    ``growth_interval`` that is not a positive int, or a negative tracker.
    """
    _check_scaler_arguments(scale, growth_factor, backoff_factor, growth_interval)
    if isinstance(growth_tracker, bool) or not isinstance(growth_tracker, numbers.Integral) \
            or growth_tracker < 0:
        raise ValueError(f"growth_tracker must be an int >= 0, got {growth_tracker!r}")
    # TODO 4: apply the update rule described in the docstring.
    raise NotImplementedError('TODO 4: compute the new `scale` and `growth_tracker`')
    return float(scale), int(growth_tracker)


class LossScaler:
    """Dynamic loss scaling for one (non-fused) optimizer, like ``GradScaler('cpu')``."""

    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        _check_scaler_arguments(init_scale, growth_factor, backoff_factor, growth_interval)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        # Per-optimizer bookkeeping for the current iteration:
        # id(optimizer) -> {"stage": ..., "found_inf": bool}
        self._per_optimizer = {}

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def get_scale(self):
        """The current scale as a Python float."""
        return float(self._scale)

    def scale(self, loss):
        """Return ``loss * scale`` (the scaled loss to call ``backward`` on)."""
        # TODO 5: multiply by the scale held as a 0-dim FP32 tensor on the loss's device.
        raise NotImplementedError('TODO 5: return the scaled loss')

    def unscale_(self, optimizer):
        """Divide every ``param.grad`` of ``optimizer`` by the scale, in place, and
        record whether any element is inf or NaN (found_inf) for ``step``/``update``."""
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        grads = [param.grad for group in optimizer.param_groups for param in group["params"]
                 if param.grad is not None]
        if any(grad.dtype == torch.float16 for grad in grads):
            raise ValueError("Attempting to unscale FP16 gradients: master weights must stay FP32.")
        # TODO 6: unscale every gradient in place and record found_inf.
        raise NotImplementedError('TODO 6: update the grads in place and set `found_inf`')
        state["found_inf"] = found_inf
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale if not done yet, then ``optimizer.step(*args, **kwargs)`` and return
        its value -- or skip the step and return ``None`` when found_inf."""
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        # TODO 7: make sure the gradients are unscaled, then step or skip.
        raise NotImplementedError('TODO 7: step or skip, remembering that this optimizer has stepped')

    def update(self):
        """Update the scale from this iteration's found_inf, then start a new iteration."""
        recorded = [state for state in self._per_optimizer.values() if state["stage"] != _READY]
        if not recorded:
            raise RuntimeError("No inf checks were recorded prior to update().")
        # TODO 8: apply `update_scale` with this iteration's found_inf and reset the iteration.
        raise NotImplementedError('TODO 8: update the scale and the growth tracker, then forget the per-optimizer states')

    def state_dict(self):
        """GradScaler's five keys: scale, growth_factor, backoff_factor,
        growth_interval, _growth_tracker."""
        # TODO 9: return the scaler state with GradScaler's keys.
        raise NotImplementedError('TODO 9: build the state dict')

    def load_state_dict(self, state_dict):
        """Restore a state saved by ``state_dict`` (ours or GradScaler's)."""
        if not state_dict:
            raise RuntimeError("The source state dict is empty.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
