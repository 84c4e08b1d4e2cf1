"""The measurement: one update attempt (the chapter's autocast, GradScaler, unscale_, clip, step,
update order, timed as one region), the chapter's loop of attempts (backoff steps counted, never
timed; warm-up not timed) and one precision path from a fresh model to its metrics block."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable

from amp_lab_common import require_torch
from amp_lab_models import ModelSource, find_probe_parameter
from amp_lab_stats import finite_or_none, median, percentile_nearest_rank

TIMED_REGION = (
    "one update attempt: autocast forward and loss, GradScaler scale + backward, unscale_, "
    "clip_grad_norm_, scaler.step, scaler.update; zero_grad and the probe copy are outside"
)


@dataclass
class PathSpec:
    label: str  # 'fp32' | 'amp' | 'overflow'
    amp_dtype: str | None  # None (FP32), 'float16' or 'bfloat16'
    inject_overflow: bool = False


@dataclass
class Attempt:
    elapsed_ms: float
    grad_norm: float | None
    grad_is_finite: bool
    parameter_delta_max: float | None
    applied: bool
    scale_before: float
    scale_after: float


@dataclass
class PathTally:
    attempted: int = 0
    successful: int = 0
    backoffs: int = 0
    times_ms: list = field(default_factory=list)
    applied_flags: list = field(default_factory=list)
    last: Attempt | None = None


def torch_dtype(name: str | None):
    torch = require_torch()
    return {None: torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]


def attempt_update(model, batch, optimizer, scaler, probe, ops, spec, max_grad_norm) -> Attempt:
    torch = require_torch()
    optimizer.zero_grad(set_to_none=True)
    before = probe.detach().clone()
    autocast = (
        torch.autocast(ops.device.type, dtype=torch_dtype(spec.amp_dtype))
        if spec.amp_dtype
        else contextlib.nullcontext()
    )
    timer = ops.start_timer()
    with autocast:
        loss = model(**batch, use_cache=False).loss
        if spec.inject_overflow:
            loss = loss * torch.tensor(float("inf"), device=loss.device)
    scale_before = float(scaler.get_scale())
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    grad_is_finite = bool(torch.isfinite(norm).item())
    scaler.step(optimizer)  # skips optimizer.step when unscale_ found inf/NaN
    scaler.update()
    scale_after = float(scaler.get_scale())
    elapsed_ms = ops.stop_timer(timer)
    delta = finite_or_none((probe.detach() - before).abs().max())
    return Attempt(
        elapsed_ms=elapsed_ms,
        grad_norm=float(norm) if grad_is_finite else None,
        grad_is_finite=grad_is_finite,
        parameter_delta_max=delta,
        applied=delta is not None and delta > 0.0,
        scale_before=scale_before,
        scale_after=scale_after,
    )


def run_attempts(step: Callable[[], Attempt], workload: dict, inject_overflow: bool) -> PathTally:
    """The chapter's loop: failed attempts are backoffs; warm-up successes are not timed."""
    tally = PathTally()
    required = workload["warmup"] + workload["repeats"]
    max_attempts = 1 if inject_overflow else required + workload["max_scale_backoff_steps"]
    for _ in range(max_attempts):
        tally.attempted += 1
        attempt = tally.last = step()
        if inject_overflow:
            # One attempt only; its backoff shows in scale_before -> scale_after.
            tally.applied_flags.append(attempt.applied)
            break
        if not attempt.grad_is_finite or not attempt.applied:
            tally.backoffs += 1
            continue
        tally.successful += 1
        if tally.successful > workload["warmup"]:
            tally.times_ms.append(attempt.elapsed_ms)
            tally.applied_flags.append(True)
        if len(tally.times_ms) == workload["repeats"]:
            break
    return tally


def run_precision_path(spec: PathSpec, source: ModelSource, batch: dict, workload: dict, ops) -> dict:
    torch = require_torch()
    torch.manual_seed(workload["seed"])  # identical initialisation for every path
    model = source.build_model(ops.device)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=workload["learning_rate"])
    scaler = torch.amp.GradScaler(
        ops.device.type,
        enabled=spec.amp_dtype == "float16",
        init_scale=workload["initial_scale"],
        backoff_factor=workload["backoff_factor"],
        growth_interval=workload["growth_interval"],
    )
    probe_name, probe = find_probe_parameter(model)
    scale_initial = float(scaler.get_scale())
    ops.reset_peak_memory()  # after loading: the peak includes the weights, as in the chapter

    def step():
        return attempt_update(model, batch, optimizer, scaler, probe, ops, spec, workload["max_grad_norm"])

    tally = run_attempts(step, workload, spec.inject_overflow)
    peak_mb = ops.peak_allocated_mb()
    result = summarise_path(spec, tally, workload, probe_name, scale_initial, peak_mb)
    del optimizer, scaler, model, probe
    ops.release_cached_memory()
    return result


def summarise_path(spec, tally: PathTally, workload, probe_name, scale_initial, peak_mb) -> dict:
    last = tally.last
    completed = spec.inject_overflow or len(tally.times_ms) == workload["repeats"]
    times = [float(value) for value in tally.times_ms]
    return {
        "label": spec.label,
        "dtype": "torch." + (spec.amp_dtype or "float32"),
        "status": "measured" if completed else "failed_to_stabilize",
        "step_median_ms": median(times) if times else None,
        "step_p95_ms": percentile_nearest_rank(times, 95) if times else None,
        "peak_allocated_mb": finite_or_none(peak_mb),
        "grad_norm": finite_or_none(last.grad_norm),
        "grad_is_finite": last.grad_is_finite,
        "probe_parameter": probe_name,
        "parameter_delta_max": last.parameter_delta_max,
        "scale_initial": scale_initial,
        "scale_before": last.scale_before,
        "scale_after": last.scale_after,
        "scale_backoff_steps": tally.backoffs,
        "attempted_steps": tally.attempted,
        "successful_steps": tally.successful,
        "step_applied": bool(tally.applied_flags) and all(tally.applied_flags),
        "step_times_ms": times,
    }
