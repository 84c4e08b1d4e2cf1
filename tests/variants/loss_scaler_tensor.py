"""A correct LossScaler that, like GradScaler, keeps the scale as a 0-dim FP32
tensor, unscales with foreach kernels and an FP32 inverse scale."""
import math

import torch


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    checks = [isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isfinite(scale)
              and scale > 0, growth_factor > 1, 0 < backoff_factor < 1,
              type(growth_interval) is int and growth_interval > 0,
              type(growth_tracker) is int and growth_tracker >= 0]
    if not all(checks):
        raise ValueError("invalid scaler arguments")
    if found_inf:
        return scale * backoff_factor, 0
    if growth_tracker + 1 < growth_interval:
        return float(scale), growth_tracker + 1
    if growth_tracker + 1 > growth_interval:
        return float(scale), growth_tracker + 1
    grown = scale * growth_factor
    return (grown if math.isfinite(grown) else float(scale)), 0


class LossScaler:
    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        update_scale(float(init_scale), 0, False, growth_factor, backoff_factor, growth_interval)
        self._scale = torch.tensor(float(init_scale), dtype=torch.float32)
        self._growth, self._backoff, self._interval = growth_factor, backoff_factor, growth_interval
        self._tracker = 0
        self._stages = {}

    def get_scale(self):
        return self._scale.item()

    def scale(self, loss):
        return loss * self._scale.to(loss.device)

    def unscale_(self, optimizer):
        stage = self._stages.get(id(optimizer), ("ready", False))[0]
        if stage != "ready":
            raise RuntimeError(f"unscale_() not allowed in stage {stage}")
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        if any(g.dtype == torch.float16 for g in grads):
            raise ValueError("FP16 gradients cannot be unscaled")
        inv = self._scale.double().reciprocal().float()
        found = False
        if grads:
            by_dtype = {}
            for g in grads:
                by_dtype.setdefault(g.dtype, []).append(g)
            for group in by_dtype.values():
                torch._foreach_mul_(group, inv.to(group[0].dtype) if group[0].dtype == torch.float64 else inv)
                found = found or any(not torch.isfinite(g).all() for g in group)
        self._stages[id(optimizer)] = ("unscaled", found)

    def step(self, optimizer, *args, **kwargs):
        if self._stages.get(id(optimizer), ("ready", False))[0] == "stepped":
            raise RuntimeError("step() twice")
        if self._stages.get(id(optimizer), ("ready", False))[0] == "ready":
            self.unscale_(optimizer)
        found = self._stages[id(optimizer)][1]
        self._stages[id(optimizer)] = ("stepped", found)
        return None if found else optimizer.step(*args, **kwargs)

    def update(self):
        if not self._stages:
            raise RuntimeError("update() before step()")
        found = any(f for _, f in self._stages.values())
        scale, self._tracker = update_scale(self.get_scale(), self._tracker, found, self._growth,
                                            self._backoff, self._interval)
        self._scale = torch.tensor(scale, dtype=torch.float32)
        self._stages = {}

    def state_dict(self):
        return {"scale": self.get_scale(), "growth_factor": self._growth, "backoff_factor": self._backoff,
                "growth_interval": self._interval, "_growth_tracker": self._tracker}

    def load_state_dict(self, state):
        self._scale = torch.tensor(float(state["scale"]), dtype=torch.float32)
        self._growth, self._backoff = state["growth_factor"], state["backoff_factor"]
        self._interval, self._tracker = state["growth_interval"], state["_growth_tracker"]
