"""Megatron-style dynamic scaler adapted to the contract (scale held as an FP32 tensor, hysteresis 1)."""
import math
import torch


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ValueError("scale must be a finite positive number")
    if growth_factor <= 1.0:
        raise ValueError("growth_factor must be > 1")
    if not 0.0 < backoff_factor < 1.0:
        raise ValueError("backoff_factor must be in (0, 1)")
    if not isinstance(growth_interval, int) or isinstance(growth_interval, bool) or growth_interval <= 0:
        raise ValueError("growth_interval must be a positive int")
    if not isinstance(growth_tracker, int) or isinstance(growth_tracker, bool) or growth_tracker < 0:
        raise ValueError("growth_tracker must be a non-negative int")
    if found_inf:
        return scale * backoff_factor, 0
    growth_tracker += 1
    if growth_tracker == growth_interval:
        candidate = scale * growth_factor
        return (candidate if math.isfinite(candidate) else scale), 0
    return scale, growth_tracker


class DynamicGradScaler:
    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        update_scale(init_scale, 0, False, growth_factor, backoff_factor, growth_interval)
        self._scale = torch.tensor(float(init_scale), dtype=torch.float32)
        self.growth_factor, self.backoff_factor, self.growth_interval = float(growth_factor), float(backoff_factor), growth_interval
        self._growth_tracker = 0
        self._stages = {}

    def get_scale(self):
        return float(self._scale)

    def scale(self, loss):
        return loss * self._scale.to(loss.device)

    def unscale_(self, optimizer):
        stage = self._stages.get(id(optimizer), ("ready", False))
        if stage[0] == "unscaled":
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if stage[0] == "stepped":
            raise RuntimeError("unscale_() is being called after step().")
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        for grad in grads:
            if grad.dtype == torch.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
        inv = (1.0 / self._scale.double()).float()
        found = False
        for grad in grads:
            grad.mul_(inv.to(grad.device))
            found = found or not bool(torch.isfinite(grad).all())
        self._stages[id(optimizer)] = ("unscaled", found)

    def step(self, optimizer, *args, **kwargs):
        stage = self._stages.get(id(optimizer), ("ready", False))
        if stage[0] == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if stage[0] == "ready":
            self.unscale_(optimizer)
        found = self._stages[id(optimizer)][1]
        self._stages[id(optimizer)] = ("stepped", found)
        if found:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self):
        if not self._stages:
            raise AssertionError("No inf checks were recorded prior to update.")
        found = any(f for _s, f in self._stages.values())
        new, self._growth_tracker = update_scale(float(self._scale), self._growth_tracker, found,
                                                 self.growth_factor, self.backoff_factor, self.growth_interval)
        self._scale = torch.tensor(new, dtype=torch.float32)
        self._stages = {}

    def state_dict(self):
        return {"scale": float(self._scale), "growth_factor": self.growth_factor, "backoff_factor": self.backoff_factor,
                "growth_interval": self.growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.")
        self._scale = torch.tensor(float(state_dict["scale"]), dtype=torch.float32)
        self.growth_factor = float(state_dict["growth_factor"])
        self.backoff_factor = float(state_dict["backoff_factor"])
        self.growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


LossScaler = DynamicGradScaler
