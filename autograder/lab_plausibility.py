"""Physical plausibility of a consistent GPU lab record: could a real GPU have measured it?

A consistent record can still describe a run no hardware can produce. These rules refuse such
records (no credit, and a reason naming the figure):

- **compute**: one training step of Qwen2.5-0.5B is about ``6 x parameters x tokens`` FLOPs
  (forward 2, backward 4 per parameter per token). Divided by a measured step time it must not
  exceed :data:`COMPUTE_MARGIN` times the named GPU's dense peak for the path's precision: the
  FP32 path against the FP32 / TF32 peak, the FP16 / BF16 path against the FP16 / BF16
  tensor-core peak (:mod:`autograder.lab_gpu_specs`). An unknown GPU is held to the fastest
  known one.
- **memory**: every path's allocator peak holds at least the model's FP32 weights and
  gradients; the GPU's ``total_memory_mb`` fits the boards sold under its name; the compute
  capability is the named GPU's.
- **model size**: a record of Qwen2.5-0.5B that states a parameter count or a FLOP estimate
  states this model's.
- **update size**: SGD after ``clip_grad_norm_(max_norm)`` moves no weight by more than
  ``learning_rate x max_norm`` (the clipped gradient's norm bounds each of its elements).

Passing says a record is possible, not that it was measured: lab records are self-reported.
"""
from __future__ import annotations

from autograder.lab_gpu_specs import FASTEST_KNOWN, GpuSpec, lookup
from autograder.lab_layout import (
    MODEL_ID,
    PATH_NAMES,
    QWEN_FP32_WEIGHTS_AND_GRADS_MB,
    QWEN_FP32_WEIGHTS_MB,
    QWEN_PARAMETERS,
    close,
    is_int,
    is_number,
    parse_capability,
    plain_text,
    settings,
)

# Twice the spec-sheet peak. No real step of this workload comes near the peak (the chapter's RTX
# 5070 Ti run reaches 2% of it), so the margin costs an honest record nothing, while it absorbs
# what could make an honest figure exceed the sheet: factory-overclocked boards (+10-15% clock),
# the 6 x N x T estimate (it ignores attention but also counts FLOPs the backward skips) and
# rounding in the table.
COMPUTE_MARGIN = 2.0
# torch reports total_memory in MiB of usable memory: a "16 GB" GeForce card shows ~16,300 MiB,
# ECC (data-centre GDDR) takes 1/16, HBM sizes are quoted in decimal-ish GB. A board reports at
# most its nominal size x 1024 MiB (+2% for the quoting) and at least 90% of it.
MEMORY_HIGH_SLACK = 1.02
MEMORY_LOW_FRACTION = 0.90
# |new - old| of an FP32 weight carries rounding of about one ulp of the weight; allow for it.
UPDATE_REL_SLACK = 0.01
UPDATE_ABS_SLACK = 1e-6


def plausibility(record: dict) -> tuple[list[str], list[str]]:
    """(problems, notes) for a consistent record: problems make it impossible, notes say how
    each figure compares with its physical bound."""
    problems, notes = [], []
    problems += _update_size_problems(record)
    hardware = record["hardware"]
    if hardware["device"] != "cuda":
        return problems, notes
    spec, laptop = lookup(hardware["name"])
    if spec is None:
        notes.append(f"unknown GPU {plain_text(hardware['name'], 40)!s}, checked against the "
                     "fastest known")
    elif laptop:
        notes.append(f"laptop GPU, checked against the desktop {spec.label}'s figures")
    problems += _capability_problems(hardware, spec)
    problems += _total_memory_problems(hardware, spec, laptop, notes)
    if record["model"]["id"] == MODEL_ID:
        problems += _model_size_problems(record)
        problems += _memory_floor_problems(record, notes)
        problems += _compute_problems(record, spec or FASTEST_KNOWN, notes)
    return problems, notes


def _possessive(spec: GpuSpec) -> str:
    return f"the {spec.label}'s"


# --------------------------------------------------------------------------- compute

def step_flops(workload: dict) -> float:
    return 6.0 * QWEN_PARAMETERS * workload["batch_size"] * workload["seq_len"]


def _compute_problems(record: dict, spec: GpuSpec, notes: list[str]) -> list[str]:
    workload = record["workload"]
    tokens = workload["batch_size"] * workload["seq_len"]
    flops = step_flops(workload)
    half = "BF16" if workload["candidate_dtype"] == "bfloat16" else "FP16"
    problems = []
    for name, kind, peak in (("baseline", "FP32/TF32", spec.fp32_path_peak),
                             ("candidate", f"{half} dense tensor", spec.half_path_peak)):
        path = record["metrics"][name]
        median = path["step_median_ms"]
        if median is None:
            continue
        achieved = flops / median / 1e9  # TFLOP/s
        notes.append(f"{name}: {achieved:.3g} TFLOP/s, {100 * achieved / peak:.1f}% of "
                     f"{_possessive(spec)} {kind} peak ({peak:g} TFLOP/s)")
        fastest, field = median, "step_median_ms"
        times = path.get("step_times_ms") or []
        if times and min(times) < fastest:
            fastest, field = min(times), "step_times_ms"
        floor_ms = flops / (COMPUTE_MARGIN * peak * 1e12) * 1000.0
        if fastest < floor_ms:
            problems.append(
                f"metrics.{name}.{field}: a {fastest:g} ms step is faster than "
                f"{'the ' + spec.label if spec is not FASTEST_KNOWN else 'any known GPU'} can "
                f"compute it: one step of {MODEL_ID} is 6 x {QWEN_PARAMETERS:,} parameters x "
                f"{tokens} tokens = {flops:.3g} FLOPs, which takes at least {floor_ms:.3g} ms "
                f"even at {COMPUTE_MARGIN:g}x {_possessive(spec)} {kind} peak of {peak:g} TFLOP/s. "
                "Commit the record the lab wrote, unedited")
    return problems


# --------------------------------------------------------------------------- memory

def _memory_floor_problems(record: dict, notes: list[str]) -> list[str]:
    problems, peaks = [], []
    for name in PATH_NAMES:
        peak = record["metrics"][name]["peak_allocated_mb"]
        if peak is None:
            continue
        peaks.append(f"{peak:.0f}")
        if peak < QWEN_FP32_WEIGHTS_MB:
            problems.append(f"metrics.{name}.peak_allocated_mb {peak:.1f} is below the "
                            f"{QWEN_FP32_WEIGHTS_MB:.0f} MiB that {MODEL_ID}'s FP32 weights alone "
                            "occupy: not a run of this model")
        elif peak < QWEN_FP32_WEIGHTS_AND_GRADS_MB:
            problems.append(f"metrics.{name}.peak_allocated_mb {peak:.1f} is below the "
                            f"{QWEN_FP32_WEIGHTS_AND_GRADS_MB:.0f} MiB that {MODEL_ID}'s FP32 "
                            "weights and gradients occupy: not a run of this model")
    if peaks and not problems:
        notes.append(f"peaks {' / '.join(peaks)} MiB hold the {QWEN_FP32_WEIGHTS_AND_GRADS_MB:.0f} "
                     "MiB of FP32 weights and gradients")
    return problems


def _sizes(spec: GpuSpec) -> str:
    return " or ".join(f"{size:g}" for size in spec.memory_gb) + " GB"


def _total_memory_problems(hardware: dict, spec, laptop: bool, notes: list[str]) -> list[str]:
    total = hardware["total_memory_mb"]
    if not is_number(total) or total <= 0:
        return []  # the consistency stage already refused it
    gib = total / 1024.0
    bound = FASTEST_KNOWN if spec is None or laptop else spec
    high = max(bound.memory_gb) * 1024.0 * MEMORY_HIGH_SLACK
    if total > high:
        owner = f"any {spec.label} board ({_sizes(spec)})" if bound is spec else "any known GPU"
        return [f"hardware.total_memory_mb {total:g} ({gib:.1f} GiB) is more memory than {owner} has"]
    if bound is not spec:
        return []
    low = min(spec.memory_gb) * 1024.0 * MEMORY_LOW_FRACTION
    if total < low and not spec.partitioned:
        problem = (f"hardware.total_memory_mb {total:g} ({gib:.1f} GiB) is less than any "
                   f"{spec.label} board has ({_sizes(spec)})")
        return [problem]
    if total < low:
        notes.append(f"{gib:.1f} GiB is less than a whole {spec.label} ({_sizes(spec)}): "
                     "a MIG or vGPU slice")
    else:
        notes.append(f"total memory {gib:.1f} GiB fits the {spec.label} ({_sizes(spec)})")
    return []


def _capability_problems(hardware: dict, spec) -> list[str]:
    capability = parse_capability(hardware["capability"])
    if spec is None or spec.capability is None or capability is None:
        return []
    if tuple(capability) != spec.capability:
        problem = (f"hardware.capability {capability[0]}.{capability[1]} is not the {spec.label}'s "
                   f"compute capability ({spec.capability[0]}.{spec.capability[1]}): torch reports "
                   "the name and the capability of one and the same GPU")
        return [problem]
    return []


# --------------------------------------------------------------------------- model and update

def _model_size_problems(record: dict) -> list[str]:
    measurement = record.get("measurement")
    if not isinstance(measurement, dict):
        return []
    problems = []
    count = measurement.get("parameter_count")
    if count is not None and count != QWEN_PARAMETERS:
        shown_count = f"{count:,}" if is_int(count) else plain_text(count, 30)
        problems.append(f"measurement.parameter_count {shown_count} is not {MODEL_ID}'s "
                        f"{QWEN_PARAMETERS:,}")
    flops = measurement.get("flops_per_step_estimate")
    expected = step_flops(record["workload"])
    if flops is not None and count in (None, QWEN_PARAMETERS) and not (
            is_number(flops) and close(flops, expected, rel=1e-3)):
        problems.append(f"measurement.flops_per_step_estimate {plain_text(flops, 30)} is not "
                        f"6 x {QWEN_PARAMETERS:,} x tokens = {expected:.4g}")
    return problems


def _update_size_problems(record: dict) -> list[str]:
    workload = record["workload"]
    limit = workload["learning_rate"] * settings(workload)["max_grad_norm"]
    problems = []
    for name in ("baseline", "candidate"):
        delta = record["metrics"][name]["parameter_delta_max"]
        if delta is not None and delta > limit * (1 + UPDATE_REL_SLACK) + UPDATE_ABS_SLACK:
            problems.append(f"metrics.{name}.parameter_delta_max {delta:g} is larger than one SGD "
                            f"step can move a weight: learning_rate x max_grad_norm = {limit:g} "
                            "(gradients are clipped to that norm before the step)")
    return problems
