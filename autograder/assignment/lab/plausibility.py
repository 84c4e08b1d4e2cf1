"""Physical plausibility of a consistent GPU lab record: could a real GPU have measured it?

A consistent record can still describe a run no hardware can produce. These rules refuse such
records (no credit, and a reason naming the figure):

- **compute**: one training step of Qwen2.5-0.5B is about ``6 x parameters x tokens`` FLOPs
  (forward 2, backward 4 per parameter per token). Divided by a measured step time it must not
  exceed :data:`COMPUTE_MARGIN` times the named GPU's dense peak for the path's precision: the
  FP32 path against the FP32 / TF32 peak, the FP16 / BF16 path against the FP16 / BF16
  tensor-core peak (:mod:`autograder.assignment.lab.gpu_specs`). An unknown GPU is held to the fastest
  known one.
- **memory**: every path's allocator peak holds at least the model's FP32 weights and
  gradients; the GPU's ``total_memory_mb`` fits the boards sold under its name; the compute
  capability is the named GPU's.
- **model size**: a record of Qwen2.5-0.5B that states a parameter count or a FLOP estimate
  states this model's.
- **MFU**: a path's ``peak_tflops`` is the named GPU's dense peak for the math it names
  (:mod:`autograder.assignment.lab.gpu_specs`), and a record of Qwen2.5-0.5B counts its attention FLOPs with
  its 24 layers and 896-wide attention.
- **update size**: SGD after ``clip_grad_norm_(max_norm)`` moves no weight by more than
  ``learning_rate x max_norm`` (the clipped gradient's norm bounds each of its elements).

Passing says a record is possible, not that it was measured: lab records are self-reported.
Problems and notes are :mod:`autograder.i18n` messages, rendered when shown.
"""
from __future__ import annotations

from autograder.authoring import _
from autograder.assignment.lab.gpu_specs import FASTEST_KNOWN, GpuSpec, lookup
from autograder.assignment.lab.layout import (MODEL_ID, PATH_NAMES, PEAK_KINDS, QWEN_ARCHITECTURE,
                                              QWEN_FP32_WEIGHTS_AND_GRADS_MB,
                                              QWEN_FP32_WEIGHTS_MB, QWEN_PARAMETERS, close, is_int,
                                              is_number, parse_capability, plain_text, settings)

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
QWEN_LAYERS = QWEN_ARCHITECTURE["num_hidden_layers"]  # 24
QWEN_ATTENTION_WIDTH = QWEN_ARCHITECTURE["hidden_size"]  # 896: 14 heads x 64 (Qwen2's head_dim is hidden / heads)
PEAK_FIELDS = dict(zip(PEAK_KINDS, ("fp32", "tf32", "half")))  # peak_kind -> GpuSpec field


def plausibility(record: dict) -> tuple[list, list]:
    """(problems, notes) for a consistent record: problems make it impossible, notes say how
    each figure compares with its physical bound."""
    problems, notes = [], []
    problems += _update_size_problems(record)
    hardware = record["hardware"]
    if hardware["device"] != "cuda":
        return problems, notes
    spec, laptop = lookup(hardware["name"])
    if spec is None:
        notes.append(_("unknown GPU {gpu}, checked against the fastest known",
                       gpu=plain_text(hardware["name"], 40)))
    elif laptop:
        notes.append(_("laptop GPU, checked against the desktop {gpu}'s figures", gpu=spec.label))
    problems += _capability_problems(hardware, spec)
    problems += _total_memory_problems(hardware, spec, laptop, notes)
    problems += _peak_problems(record, spec, laptop, notes)
    if record["model"]["id"] == MODEL_ID:
        problems += _model_size_problems(record)
        problems += _memory_floor_problems(record, notes)
        problems += _compute_problems(record, spec or FASTEST_KNOWN, notes)
    return problems, notes


def _possessive(spec: GpuSpec):
    if spec is FASTEST_KNOWN:
        return _("the fastest known GPU's")
    return _("the {gpu}'s", gpu=spec.label)


# --------------------------------------------------------------------------- compute

def step_flops(workload: dict) -> float:
    return 6.0 * QWEN_PARAMETERS * workload["batch_size"] * workload["seq_len"]


def _compute_problems(record: dict, spec: GpuSpec, notes: list) -> list:
    workload = record["workload"]
    tokens = workload["batch_size"] * workload["seq_len"]
    flops = step_flops(workload)
    half = "BF16" if workload["candidate_dtype"] == "bfloat16" else "FP16"
    problems = []
    for name, kind, peak in (("baseline", _("FP32/TF32 peak"), spec.fp32_path_peak),
                             ("candidate", _("{precision} dense tensor peak", precision=half),
                              spec.half_path_peak)):
        path = record["metrics"][name]
        median = path["step_median_ms"]
        if median is None:
            continue
        achieved = flops / median / 1e9  # TFLOP/s
        notes.append(_("{path}: {achieved:.3g} TFLOP/s, {percent:.1f}% of {owner} {kind} "
                       "({peak:g} TFLOP/s)", path=name, achieved=achieved,
                       percent=100 * achieved / peak, owner=_possessive(spec), kind=kind, peak=peak))
        fastest, field = median, "step_median_ms"
        times = path.get("step_times_ms") or []
        if times and min(times) < fastest:
            fastest, field = min(times), "step_times_ms"
        floor_ms = flops / (COMPUTE_MARGIN * peak * 1e12) * 1000.0
        if fastest < floor_ms:
            device = _("any known GPU") if spec is FASTEST_KNOWN else _("the {gpu}", gpu=spec.label)
            problems.append(_(
                "metrics.{path}.{field}: a {step:g} ms step is faster than {device} can compute it: "
                "one step of {model} is 6 x {parameters:,} parameters x {tokens} tokens = "
                "{flops:.3g} FLOPs, which takes at least {floor:.3g} ms even at {margin:g}x {owner} "
                "{kind} of {peak:g} TFLOP/s. Commit the record the lab wrote, unedited",
                path=name, field=field, step=fastest, device=device, model=MODEL_ID,
                parameters=QWEN_PARAMETERS, tokens=tokens, flops=flops, floor=floor_ms,
                margin=COMPUTE_MARGIN, owner=_possessive(spec), kind=kind, peak=peak))
    return problems


def _peak_problems(record: dict, spec, laptop: bool, notes: list) -> list:
    """Each stated peak is the table's, for the GPU and the math the path names."""
    problems = []
    for name in ("baseline", "candidate"):
        path = record["metrics"][name]
        peak, kind = path.get("peak_tflops"), path.get("peak_kind")
        if peak is None or kind not in PEAK_FIELDS:
            continue
        if spec is None or laptop:
            problems.append(_("metrics.{path}.peak_tflops {peak:g} is stated for {gpu}, whose dense "
                              "peak the table does not know", path=name, peak=peak,
                              gpu=plain_text(record["hardware"]["name"], 40)))
            continue
        expected = getattr(spec, PEAK_FIELDS[kind])
        if not close(peak, expected, rel=1e-3):
            problems.append(_("metrics.{path}.peak_tflops {peak:g} is not {owner} dense {kind} peak "
                              "({expected:g} TFLOP/s)", path=name, peak=peak, owner=_possessive(spec),
                              kind=kind, expected=expected))
        elif path.get("mfu") is not None:
            notes.append(_("{path}: MFU {mfu:.2%} (model FLOPs with attention, against {owner} dense "
                           "{kind} peak of {peak:g} TFLOP/s)", path=name, mfu=path["mfu"],
                           owner=_possessive(spec), kind=kind, peak=peak))
    return problems


# --------------------------------------------------------------------------- memory

def _memory_floor_problems(record: dict, notes: list) -> list:
    problems, peaks = [], []
    for name in PATH_NAMES:
        peak = record["metrics"][name]["peak_allocated_mb"]
        if peak is None:
            continue
        peaks.append(f"{peak:.0f}")
        if peak < QWEN_FP32_WEIGHTS_MB:
            problems.append(_("metrics.{path}.peak_allocated_mb {peak:.1f} is below the {floor:.0f} "
                              "MiB that {model}'s FP32 weights alone occupy: not a run of this model",
                              path=name, peak=peak, floor=QWEN_FP32_WEIGHTS_MB, model=MODEL_ID))
        elif peak < QWEN_FP32_WEIGHTS_AND_GRADS_MB:
            problems.append(_("metrics.{path}.peak_allocated_mb {peak:.1f} is below the {floor:.0f} "
                              "MiB that {model}'s FP32 weights and gradients occupy: not a run of "
                              "this model", path=name, peak=peak, floor=QWEN_FP32_WEIGHTS_AND_GRADS_MB,
                              model=MODEL_ID))
    if peaks and not problems:
        notes.append(_("peaks {peaks} MiB hold the {floor:.0f} MiB of FP32 weights and gradients",
                       peaks=" / ".join(peaks), floor=QWEN_FP32_WEIGHTS_AND_GRADS_MB))
    return problems


def _sizes(spec: GpuSpec):
    sizes = [f"{size:g}" for size in spec.memory_gb]
    if len(sizes) == 1:
        return f"{sizes[0]} GB"
    return _("{sizes} or {last} GB", sizes=", ".join(sizes[:-1]), last=sizes[-1])


def _total_memory_problems(hardware: dict, spec, laptop: bool, notes: list) -> list:
    total = hardware["total_memory_mb"]
    if not is_number(total) or total <= 0:
        return []  # the consistency stage already refused it
    gib = total / 1024.0
    bound = FASTEST_KNOWN if spec is None or laptop else spec
    high = max(bound.memory_gb) * 1024.0 * MEMORY_HIGH_SLACK
    if total > high:
        if bound is spec:
            return [_("hardware.total_memory_mb {total:g} ({gib:.1f} GiB) is more memory than any "
                      "{gpu} board ({sizes}) has", total=total, gib=gib, gpu=spec.label,
                      sizes=_sizes(spec))]
        return [_("hardware.total_memory_mb {total:g} ({gib:.1f} GiB) is more memory than any "
                  "known GPU has", total=total, gib=gib)]
    if bound is not spec:
        return []
    low = min(spec.memory_gb) * 1024.0 * MEMORY_LOW_FRACTION
    if total < low and not spec.partitioned:
        return [_("hardware.total_memory_mb {total:g} ({gib:.1f} GiB) is less than any {gpu} board "
                  "has ({sizes})", total=total, gib=gib, gpu=spec.label, sizes=_sizes(spec))]
    if total < low:
        notes.append(_("{gib:.1f} GiB is less than a whole {gpu} ({sizes}): a MIG or vGPU slice",
                       gib=gib, gpu=spec.label, sizes=_sizes(spec)))
    else:
        notes.append(_("total memory {gib:.1f} GiB fits the {gpu} ({sizes})", gib=gib,
                       gpu=spec.label, sizes=_sizes(spec)))
    return []


def _capability_problems(hardware: dict, spec) -> list:
    capability = parse_capability(hardware["capability"])
    if spec is None or spec.capability is None or capability is None:
        return []
    if tuple(capability) != spec.capability:
        reported = "{}.{}".format(*capability)
        expected = "{}.{}".format(*spec.capability)
        return [_("hardware.capability {reported} is not the {gpu}'s compute capability "
                  "({expected}): torch reports the name and the capability of one and the same GPU",
                  reported=reported, gpu=spec.label, expected=expected)]
    return []


# --------------------------------------------------------------------------- model and update

def _model_size_problems(record: dict) -> list:
    measurement = record.get("measurement")
    if not isinstance(measurement, dict):
        return []
    problems = []
    count = measurement.get("parameter_count")
    if count is not None and count != QWEN_PARAMETERS:
        shown_count = f"{count:,}" if is_int(count) else plain_text(count, 30)
        problems.append(_("measurement.parameter_count {count} is not {model}'s {parameters:,}",
                          count=shown_count, model=MODEL_ID, parameters=QWEN_PARAMETERS))
    for key, value in (("num_layers", QWEN_LAYERS), ("attention_width", QWEN_ATTENTION_WIDTH)):
        stated = measurement.get(key)
        if stated is not None and stated != value:
            problems.append(_("measurement.{key} {stated} is not {model}'s {value}", key=key,
                              stated=plain_text(stated, 20), model=MODEL_ID, value=value))
    flops = measurement.get("flops_per_step_estimate")
    expected = step_flops(record["workload"])
    if flops is not None and count in (None, QWEN_PARAMETERS) and not (
            is_number(flops) and close(flops, expected, rel=1e-3)):
        problems.append(_("measurement.flops_per_step_estimate {flops} is not 6 x {parameters:,} x "
                          "tokens = {expected:.4g}", flops=plain_text(flops, 30),
                          parameters=QWEN_PARAMETERS, expected=expected))
    return problems


def _update_size_problems(record: dict) -> list:
    workload = record["workload"]
    limit = workload["learning_rate"] * settings(workload)["max_grad_norm"]
    problems = []
    for name in ("baseline", "candidate"):
        delta = record["metrics"][name]["parameter_delta_max"]
        if delta is not None and delta > limit * (1 + UPDATE_REL_SLACK) + UPDATE_ABS_SLACK:
            problems.append(_("metrics.{path}.parameter_delta_max {delta:g} is larger than one SGD "
                              "step can move a weight: learning_rate x max_grad_norm = {limit:g} "
                              "(gradients are clipped to that norm before the step)",
                              path=name, delta=delta, limit=limit))
    return problems
