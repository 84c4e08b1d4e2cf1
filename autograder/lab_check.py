"""``python -m autograder check-lab RECORD.json``: validate a GPU lab record, decide its credit.

A record is **valid** when it is strict JSON, holds the chapter's complete layout with the
right types, and is internally consistent (backoffs versus the scale trajectory, attempts
versus successes, P95 >= median, the overflow path, the decision versus the update gate,
evidence level versus hardware). A valid record **earns the optional credit** only when it is
the chapter's experiment on real CUDA hardware: evidence ``real_model_mechanism_benchmark``,
Qwen/Qwen2.5-0.5B at a resolved commit, the chapter's workload (sequence length 64 is the
documented fallback), and decision ``accept``.

The checker proves consistency, not authenticity: it cannot tell a hand-edited record from a
measured one, only that the numbers fit together as the lab's loop produces them.

No torch import here: the command must start fast. Nothing from ``gpu_lab`` is imported either.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

RECORD_GLOB = "train-amp-backward_*.json"
RESULTS_RELATIVE_DIR = Path("benchmarks/results/train_mixed_precision_backward")

SCHEMA_VERSION = "training-mechanism-gpu/v3"
SEMANTIC_ID = "TRAIN-AMP-BACKWARD"
PROFILE_ID = "TRAIN-CUDA-MECHANISM"
MODEL_ID = "Qwen/Qwen2.5-0.5B"
EVIDENCE_REAL = "real_model_mechanism_benchmark"
EVIDENCE_SMOKE = "cpu_smoke_mechanism_check"
EVIDENCE_DEVICE = {EVIDENCE_REAL: "cuda", EVIDENCE_SMOKE: "cpu"}
PROBE_SUFFIX = "self_attn.q_proj.weight"

TOP_KEYS = ("schema_version", "semantic_id", "profile_id", "run_label", "model", "workload",
            "hardware", "metrics", "failure", "evidence_level", "decision")
MODEL_KEYS = ("id", "requested_revision", "resolved_commit", "resolution_source", "tokenizer_class")
WORKLOAD_KEYS = ("candidate_dtype", "batch_size", "seq_len", "repeats", "warmup", "learning_rate",
                 "initial_scale", "max_scale_backoff_steps", "seed", "prompts")
HARDWARE_KEYS = ("device", "name", "total_memory_mb", "capability", "torch", "cuda")
PATH_NAMES = ("baseline", "candidate", "overflow")
PATH_KEYS = ("label", "dtype", "status", "step_median_ms", "step_p95_ms", "peak_allocated_mb",
             "grad_norm", "grad_is_finite", "probe_parameter", "parameter_delta_max",
             "scale_initial", "scale_before", "scale_after", "scale_backoff_steps",
             "attempted_steps", "successful_steps", "step_applied")

# The chapter's GPU_CONFIG, which a credited run must keep (seq_len: see ACCEPTED_SEQ_LENS).
CHAPTER_WORKLOAD = {
    "batch_size": 1,
    "learning_rate": 1e-4,
    "initial_scale": 65536.0,
    "max_scale_backoff_steps": 12,
    "seed": 2026,
    "prompts": ["Explain mixed precision training."],
}
ACCEPTED_SEQ_LENS = (128, 64)  # 128 is the chapter's; 64 its documented low-memory fallback
MIN_REPEATS = 20
# Fixed in the chapter's code; records may state them, and a credited run must keep them.
UPDATE_DEFAULTS = {"growth_interval": 1000, "backoff_factor": 0.5, "max_grad_norm": 1.0}
# Qwen2.5-0.5B has 494,032,768 parameters: FP32 weights plus FP32 gradients alone occupy
# 494032768 * 8 bytes = 3769.2 MiB, a floor for every path's allocator peak.
QWEN_FP32_WEIGHTS_AND_GRADS_MB = 494_032_768 * 8 / 2**20

REL_TOL = 1e-6


@dataclass
class LabVerdict:
    valid: bool
    earns_credit: bool
    reasons: list[str]
    summary: str
    notes: list[str] = field(default_factory=list)
    readable: bool = True  # False when the file could not be read at all


# --------------------------------------------------------------------------- small helpers

def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _close(a, b, rel=REL_TOL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def _p95_nearest_rank(values):
    ordered = sorted(values)
    return ordered[max(1, math.ceil(0.95 * len(ordered))) - 1]


# --------------------------------------------------------------------------- layout and types

def _check_value(where: str, value, kind: str, problems: list[str]) -> None:
    """kind: str, str?, bool, int>=0, int>=1, int, num>0, num>=0, num>=0?, num>0?, list."""
    optional = kind.endswith("?")
    base = kind.rstrip("?")
    if value is None:
        if not optional:
            problems.append(f"{where} is null; expected {base}")
        return
    if base == "str":
        ok = isinstance(value, str) and value != ""
        expected = "a non-empty string"
    elif base == "bool":
        ok = isinstance(value, bool)
        expected = "true or false"
    elif base == "int":
        ok = _is_int(value)
        expected = "an integer"
    elif base == "int>=0":
        ok = _is_int(value) and value >= 0
        expected = "an integer >= 0"
    elif base == "int>=1":
        ok = _is_int(value) and value >= 1
        expected = "an integer >= 1"
    elif base == "num>0":
        ok = _is_number(value) and value > 0
        expected = "a finite number > 0"
    elif base == "num>=0":
        ok = _is_number(value) and value >= 0
        expected = "a finite number >= 0"
    else:  # pragma: no cover - a typo in this module's tables
        raise ValueError(kind)
    if not ok:
        problems.append(f"{where} is {value!r}; expected {expected}{' or null' if optional else ''}")


def _check_object(where: str, obj, spec: dict, problems: list[str]) -> None:
    if not isinstance(obj, dict):
        problems.append(f"{where} is {type(obj).__name__}; expected an object")
        return
    for key, kind in spec.items():
        if key not in obj:
            problems.append(f"missing key {where}.{key}")
        else:
            _check_value(f"{where}.{key}", obj[key], kind, problems)


MODEL_SPEC = {"id": "str", "requested_revision": "str?", "resolved_commit": "str?",
              "resolution_source": "str", "tokenizer_class": "str"}
WORKLOAD_SPEC = {"candidate_dtype": "str", "batch_size": "int>=1", "seq_len": "int>=1",
                 "repeats": "int>=1", "warmup": "int>=0", "learning_rate": "num>0",
                 "initial_scale": "num>0", "max_scale_backoff_steps": "int>=0", "seed": "int"}
HARDWARE_SPEC = {"device": "str", "name": "str", "total_memory_mb": "num>=0?", "torch": "str",
                 "cuda": "str?"}
PATH_SPEC = {"label": "str", "dtype": "str", "status": "str", "step_median_ms": "num>0?",
             "step_p95_ms": "num>0?", "peak_allocated_mb": "num>=0?", "grad_norm": "num>=0?",
             "grad_is_finite": "bool", "probe_parameter": "str", "parameter_delta_max": "num>=0?",
             "scale_initial": "num>0", "scale_before": "num>0", "scale_after": "num>0",
             "scale_backoff_steps": "int>=0", "attempted_steps": "int>=0",
             "successful_steps": "int>=0", "step_applied": "bool"}


def _layout_problems(record) -> list[str]:
    if not isinstance(record, dict):
        return [f"the record is {type(record).__name__}; expected a JSON object"]
    problems = [f"missing key {key}" for key in TOP_KEYS if key not in record]
    if problems:
        return problems
    for key, expected in (("schema_version", SCHEMA_VERSION), ("semantic_id", SEMANTIC_ID),
                          ("profile_id", PROFILE_ID)):
        if record[key] != expected:
            problems.append(f"{key} is {record[key]!r}; expected {expected!r}")
    _check_value("run_label", record["run_label"], "str", problems)
    _check_object("model", record["model"], MODEL_SPEC, problems)
    _check_object("workload", record["workload"], WORKLOAD_SPEC, problems)
    workload = record["workload"]
    if isinstance(workload, dict):
        _check_workload_extras(workload, problems)
    _check_object("hardware", record["hardware"], HARDWARE_SPEC, problems)
    hardware = record["hardware"]
    if isinstance(hardware, dict):
        if "capability" not in hardware:
            problems.append("missing key hardware.capability")
        elif not _capability_ok(hardware["capability"]):
            problems.append(f"hardware.capability is {hardware['capability']!r}; "
                            "expected [major, minor], 'major.minor', {major, minor} or null")
        if hardware.get("device") not in (None, "cuda", "cpu") and isinstance(hardware.get("device"), str):
            problems.append(f"hardware.device is {hardware['device']!r}; expected 'cuda' or 'cpu'")
    metrics = record["metrics"]
    if not isinstance(metrics, dict):
        problems.append("metrics is not an object")
    else:
        for name in PATH_NAMES:
            if name not in metrics:
                problems.append(f"missing key metrics.{name}")
            else:
                _check_object(f"metrics.{name}", metrics[name], PATH_SPEC, problems)
                _check_path_extras(f"metrics.{name}", metrics[name], problems)
    failure = record["failure"]
    if failure is not None:
        if not isinstance(failure, dict):
            problems.append("failure must be null or an object with type and message")
        else:
            _check_value("failure.type", failure.get("type"), "str", problems)
            _check_value("failure.message", failure.get("message"), "str", problems)
    if record["evidence_level"] not in EVIDENCE_DEVICE:
        problems.append(f"evidence_level is {record['evidence_level']!r}; expected one of "
                        f"{sorted(EVIDENCE_DEVICE)}")
    if record["decision"] not in ("accept", "reject"):
        problems.append(f"decision is {record['decision']!r}; expected 'accept' or 'reject'")
    return problems


def _check_workload_extras(workload: dict, problems: list[str]) -> None:
    if workload.get("candidate_dtype") not in (None, "float16", "bfloat16") and isinstance(
            workload.get("candidate_dtype"), str):
        problems.append(f"workload.candidate_dtype is {workload['candidate_dtype']!r}; "
                        "expected 'float16' or 'bfloat16'")
    prompts = workload.get("prompts", None)
    if "prompts" not in workload:
        problems.append("missing key workload.prompts")
    elif not (isinstance(prompts, list) and prompts and all(isinstance(p, str) and p for p in prompts)):
        problems.append("workload.prompts must be a non-empty list of non-empty strings")
    if "seq_len" in workload and _is_int(workload["seq_len"]) and workload["seq_len"] < 2:
        problems.append("workload.seq_len must be at least 2 for a causal LM loss")
    # Optional settings the chapter fixes in code; checked only when present.
    if "growth_interval" in workload:
        _check_value("workload.growth_interval", workload["growth_interval"], "int>=1", problems)
    if "max_grad_norm" in workload:
        _check_value("workload.max_grad_norm", workload["max_grad_norm"], "num>0", problems)
    if "backoff_factor" in workload:
        factor = workload["backoff_factor"]
        if not (_is_number(factor) and 0 < factor < 1):
            problems.append(f"workload.backoff_factor is {factor!r}; expected a number in (0, 1)")


def _capability_ok(value) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return re.fullmatch(r"(sm_)?\d+(\.\d+)?", value) is not None
    if isinstance(value, dict):
        return _is_int(value.get("major")) and _is_int(value.get("minor"))
    return isinstance(value, list) and len(value) == 2 and all(_is_int(v) and v >= 0 for v in value)


def _check_path_extras(where: str, path, problems: list[str]) -> None:
    """Fields the lab adds beyond the chapter: optional, but typed when present."""
    if not isinstance(path, dict):
        return
    if path.get("status") not in (None, "measured", "failed_to_stabilize") and isinstance(
            path.get("status"), str):
        problems.append(f"{where}.status is {path['status']!r}; expected 'measured' or "
                        "'failed_to_stabilize'")
    if "step_times_ms" in path:
        times = path["step_times_ms"]
        if not (isinstance(times, list) and all(_is_number(t) and t > 0 for t in times)):
            problems.append(f"{where}.step_times_ms must be a list of finite positive numbers")
    for key in ("tokens_per_second", "achieved_tflops"):
        if key in path:
            _check_value(f"{where}.{key}", path[key], "num>0?", problems)


# --------------------------------------------------------------------------- consistency

def _settings(workload: dict) -> dict:
    return {key: workload.get(key, default) for key, default in UPDATE_DEFAULTS.items()}


def _normal_path_problems(name: str, path: dict, workload: dict, expected_label: str,
                          expected_dtype: str, uses_scaler: bool) -> list[str]:
    """Baseline and candidate: the chapter's loop of warm-up, repeats and backoff attempts."""
    problems = []
    where = f"metrics.{name}"
    warmup, repeats = workload["warmup"], workload["repeats"]
    max_backoffs = workload["max_scale_backoff_steps"]
    required = warmup + repeats
    max_attempts = required + max_backoffs
    attempted, successful = path["attempted_steps"], path["successful_steps"]
    backoffs = path["scale_backoff_steps"]
    problems += _common_path_problems(where, path, expected_label, expected_dtype)

    if attempted != successful + backoffs:
        problems.append(f"{where}: attempted_steps {attempted} != successful_steps {successful} + "
                        f"scale_backoff_steps {backoffs} (every attempt either succeeds or backs off)")
    if attempted > max_attempts:
        problems.append(f"{where}: attempted_steps {attempted} exceeds warmup + repeats + "
                        f"max_scale_backoff_steps = {max_attempts}")
    if path["status"] == "measured":
        if successful != required:
            problems.append(f"{where}: status 'measured' needs successful_steps == warmup + repeats "
                            f"= {required}, got {successful}")
        if not path["grad_is_finite"]:
            problems.append(f"{where}: status 'measured' ends on a successful update, but "
                            "grad_is_finite is false")
        delta = path["parameter_delta_max"]
        if delta is None or delta <= 0:
            problems.append(f"{where}: status 'measured' ends on an applied update, but "
                            f"parameter_delta_max is {delta!r}")
    else:  # failed_to_stabilize: the loop ran out of attempts
        if attempted != max_attempts or successful >= required:
            problems.append(f"{where}: status 'failed_to_stabilize' needs all {max_attempts} attempts "
                            f"used and fewer than {required} successes (got {attempted} attempts, "
                            f"{successful} successes)")
    timed = successful > warmup
    has_timing = path["step_median_ms"] is not None
    if timed != has_timing:
        problems.append(f"{where}: step_median_ms must be present exactly when successful_steps "
                        f"({successful}) exceeds warmup ({warmup})")
    if path["step_applied"] != timed:
        problems.append(f"{where}: step_applied is {path['step_applied']} but "
                        f"{max(0, successful - warmup)} measured updates were applied")
    problems += _step_times_problems(where, path, expected_count=max(0, successful - warmup),
                                     repeats=repeats)
    problems += _scale_problems(where, path, workload, uses_scaler, normal=True)
    return problems


def _common_path_problems(where: str, path: dict, expected_label: str, expected_dtype: str) -> list[str]:
    problems = []
    if path["label"] != expected_label:
        problems.append(f"{where}.label is {path['label']!r}; expected {expected_label!r}")
    if path["dtype"] != expected_dtype:
        problems.append(f"{where}.dtype is {path['dtype']!r}; expected {expected_dtype!r}")
    if not path["probe_parameter"].endswith(PROBE_SUFFIX):
        problems.append(f"{where}.probe_parameter {path['probe_parameter']!r} is not a "
                        f"*{PROBE_SUFFIX} parameter")
    if (path["grad_norm"] is None) == path["grad_is_finite"]:
        problems.append(f"{where}: grad_norm must be a number exactly when grad_is_finite is true "
                        f"(grad_norm {path['grad_norm']!r}, grad_is_finite {path['grad_is_finite']})")
    median, p95 = path["step_median_ms"], path["step_p95_ms"]
    if (median is None) != (p95 is None):
        problems.append(f"{where}: step_median_ms and step_p95_ms must both be numbers or both null")
    elif median is not None and p95 < median * (1 - 1e-9):
        problems.append(f"{where}: step_p95_ms {p95} is below step_median_ms {median}")
    return problems


def _step_times_problems(where: str, path: dict, expected_count: int, repeats: int) -> list[str]:
    times = path.get("step_times_ms")
    if times is None:
        return []
    problems = []
    if len(times) != expected_count or len(times) > repeats:
        problems.append(f"{where}.step_times_ms has {len(times)} entries; expected "
                        f"{expected_count} (successful_steps - warmup)")
    elif times:
        median, p95 = path["step_median_ms"], path["step_p95_ms"]
        if median is not None and not _close(median, _median(times)):
            problems.append(f"{where}.step_median_ms {median} is not the median of step_times_ms "
                            f"({_median(times)})")
        if p95 is not None and not _close(p95, _p95_nearest_rank(times)):
            problems.append(f"{where}.step_p95_ms {p95} is not the nearest-rank P95 of "
                            f"step_times_ms ({_p95_nearest_rank(times)})")
    return problems


def _scale_problems(where: str, path: dict, workload: dict, uses_scaler: bool, normal: bool) -> list[str]:
    problems = []
    initial, before, after = path["scale_initial"], path["scale_before"], path["scale_after"]
    if not uses_scaler:
        # FP32 and BF16 paths run a disabled GradScaler, whose scale reads 1.0.
        if (initial, before, after) != (1.0, 1.0, 1.0):
            problems.append(f"{where}: a path without GradScaler keeps scale 1.0, got "
                            f"{initial} / {before} / {after} (initial / before / after)")
        return problems
    settings = _settings(workload)
    factor = settings["backoff_factor"]
    if not _close(initial, float(workload["initial_scale"])):
        problems.append(f"{where}.scale_initial {initial} != workload.initial_scale "
                        f"{workload['initial_scale']}")
    if not normal:
        return problems
    backoffs = path["scale_backoff_steps"]
    if path["attempted_steps"] < settings["growth_interval"]:
        # Fewer attempts than growth_interval: the scale never grows, each backoff halves it.
        expected = initial * factor ** backoffs
        if not _close(after, expected):
            problems.append(f"{where}: {backoffs} backoffs from scale {initial} should end at "
                            f"{expected:g}, but scale_after is {after} (backoff count does not match "
                            "the scale trajectory)")
        if path["status"] == "measured" and not _close(before, after):
            problems.append(f"{where}: the last attempt of a measured path succeeded, so "
                            f"scale_before {before} must equal scale_after {after}")
    return problems


def _overflow_problems(path: dict, workload: dict) -> list[str]:
    where = "metrics.overflow"
    problems = _common_path_problems(where, path, "overflow", "torch.float16")
    if path["status"] != "measured":
        problems.append(f"{where}.status is {path['status']!r}; the single overflow attempt is "
                        "always 'measured'")
    if path["attempted_steps"] != 1 or path["successful_steps"] != 0:
        problems.append(f"{where}: the overflow path makes exactly 1 attempt and 0 successful "
                        f"steps (got {path['attempted_steps']} / {path['successful_steps']})")
    if path["scale_backoff_steps"] not in (0, 1):
        # The chapter's loop stops before counting (0); counting the one attempt gives 1.
        problems.append(f"{where}.scale_backoff_steps is {path['scale_backoff_steps']}; a single "
                        "attempt backs off at most once")
    if path["step_median_ms"] is not None:
        problems.append(f"{where}: the overflow attempt is never timed, step_median_ms must be null")
    if path.get("step_times_ms"):
        problems.append(f"{where}.step_times_ms must be empty")
    delta = path["parameter_delta_max"]
    applied = delta is not None and delta > 0
    if path["step_applied"] != applied:
        problems.append(f"{where}: step_applied is {path['step_applied']} but parameter_delta_max "
                        f"is {delta!r}")
    problems += _scale_problems(where, path, workload, uses_scaler=True, normal=False)
    factor = _settings(workload)["backoff_factor"]
    before, after = path["scale_before"], path["scale_after"]
    if not _close(before, path["scale_initial"]):
        problems.append(f"{where}: scale_before {before} must equal scale_initial "
                        f"{path['scale_initial']} on the first attempt")
    if not (_close(after, before) or _close(after, before * factor)):
        problems.append(f"{where}: scale_after {after} is neither scale_before {before} nor one "
                        f"backoff ({before * factor:g})")
    elif path["scale_backoff_steps"] == 1 and not _close(after, before * factor):
        problems.append(f"{where}: scale_backoff_steps is 1 but the scale did not back off "
                        f"({before} -> {after})")
    elif path["grad_is_finite"] == (not _close(after, before)):
        # GradScaler backs off exactly when unscale_ finds a non-finite gradient.
        problems.append(f"{where}: grad_is_finite is {path['grad_is_finite']} but the scale went "
                        f"{before} -> {after}; GradScaler backs off exactly on non-finite gradients")
    return problems


def gate_failures(metrics: dict) -> list[str]:
    """The chapter's update gate; an empty list means it passes."""
    base, cand, over = (metrics[name] for name in PATH_NAMES)
    failed = []
    for name, path in (("baseline", base), ("candidate", cand)):
        if path["status"] != "measured":
            failed.append(f"{name}.status is {path['status']!r}")
        if not path["grad_is_finite"]:
            failed.append(f"{name}.grad_is_finite is false")
        if not path["step_applied"]:
            failed.append(f"{name}.step_applied is false")
    if over["step_applied"]:
        failed.append("overflow.step_applied is true (the injected overflow updated the weights)")
    if not over["scale_after"] < over["scale_before"]:
        failed.append("overflow.scale_after is not below scale_before (no backoff)")
    return failed


def _record_level_problems(record: dict) -> list[str]:
    problems = []
    metrics, workload, hardware = record["metrics"], record["workload"], record["hardware"]
    failed = gate_failures(metrics)
    if record["decision"] == "accept" and failed:
        problems.append("decision is 'accept' but the update gate fails: " + "; ".join(failed))
    if record["decision"] == "reject" and not failed:
        problems.append("decision is 'reject' but every condition of the update gate holds")
    if record["decision"] == "accept" and record["failure"] is not None:
        problems.append("decision is 'accept' but failure is set")
    if record["decision"] == "reject" and record["failure"] is None:
        problems.append("decision is 'reject' but failure is null")
    expected_device = EVIDENCE_DEVICE[record["evidence_level"]]
    if hardware["device"] != expected_device:
        problems.append(f"evidence_level {record['evidence_level']!r} requires hardware.device "
                        f"{expected_device!r}, got {hardware['device']!r}")
    if hardware["device"] == "cuda":
        problems += _cuda_hardware_problems(metrics, hardware)
    problems += _throughput_problems(record)
    return problems


def _cuda_hardware_problems(metrics: dict, hardware: dict) -> list[str]:
    problems = []
    if hardware["cuda"] is None:
        problems.append("hardware.device is 'cuda' but hardware.cuda (the CUDA version) is null")
    total = hardware["total_memory_mb"]
    if total is None or total <= 0:
        problems.append("hardware.total_memory_mb must be positive on CUDA")
    if hardware["capability"] is None:
        problems.append("hardware.capability (the compute capability) is null on CUDA")
    for name in PATH_NAMES:
        peak = metrics[name]["peak_allocated_mb"]
        if peak is None or peak <= 0:
            problems.append(f"metrics.{name}.peak_allocated_mb must be measured (positive) on CUDA")
        elif total and peak > total:
            problems.append(f"metrics.{name}.peak_allocated_mb {peak} exceeds the GPU's "
                            f"total_memory_mb {total}")
    return problems


def _throughput_problems(record: dict) -> list[str]:
    workload = record["workload"]
    tokens = workload["batch_size"] * workload["seq_len"]
    measurement = record.get("measurement") if isinstance(record.get("measurement"), dict) else {}
    flops = measurement.get("flops_per_step_estimate")
    problems = []
    for name in PATH_NAMES:
        path = record["metrics"][name]
        median = path["step_median_ms"]
        if path.get("tokens_per_second") is not None:
            if median is None or not _close(path["tokens_per_second"], tokens * 1000.0 / median):
                problems.append(f"metrics.{name}.tokens_per_second {path['tokens_per_second']} != "
                                "batch_size * seq_len * 1000 / step_median_ms")
        if path.get("achieved_tflops") is not None:
            if record["hardware"]["device"] != "cuda":
                problems.append(f"metrics.{name}.achieved_tflops is reported for a non-CUDA run")
            elif (median is None or not _is_number(flops)
                  or not _close(path["achieved_tflops"], flops * 1000.0 / median / 1e12)):
                problems.append(f"metrics.{name}.achieved_tflops does not follow from "
                                "measurement.flops_per_step_estimate and step_median_ms")
    return problems


def _consistency_problems(record: dict) -> list[str]:
    workload, metrics = record["workload"], record["metrics"]
    fp16_candidate = workload["candidate_dtype"] == "float16"
    problems = []
    problems += _normal_path_problems("baseline", metrics["baseline"], workload, "fp32",
                                      "torch.float32", uses_scaler=False)
    problems += _normal_path_problems("candidate", metrics["candidate"], workload, "amp",
                                      f"torch.{workload['candidate_dtype']}", uses_scaler=fp16_candidate)
    problems += _overflow_problems(metrics["overflow"], workload)
    problems += _record_level_problems(record)
    return problems


# --------------------------------------------------------------------------- credit

def _credit_gaps(record: dict) -> tuple[list[str], list[str]]:
    """Why a valid record earns no GPU credit (empty: it earns it), plus informative notes."""
    gaps, notes = [], []
    evidence = record["evidence_level"]
    if evidence != EVIDENCE_REAL:
        gaps.append(f"evidence_level {evidence!r} is a CPU smoke check: the record is valid but "
                    f"earns no GPU credit (needs {EVIDENCE_REAL!r} from --run-mode real_gpu on CUDA)")
    if record["hardware"]["device"] != "cuda" and evidence == EVIDENCE_REAL:
        gaps.append("hardware.device is not 'cuda'")
    if record["decision"] != "accept":
        gaps.append("decision is 'reject': the update gate failed ("
                    + "; ".join(gate_failures(record["metrics"])) + ")")
    model = record["model"]
    if model["id"] != MODEL_ID:
        gaps.append(f"model.id is {model['id']!r}; the lab's credit is for {MODEL_ID}")
    commit = model["resolved_commit"]
    if not (isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{40}", commit)):
        gaps.append(f"model.resolved_commit {commit!r} is not an immutable 40-hex commit")
    gaps += _workload_gaps(record["workload"], notes)
    if model["id"] == MODEL_ID and record["hardware"]["device"] == "cuda":
        for name in PATH_NAMES:
            peak = record["metrics"][name]["peak_allocated_mb"]
            if peak is not None and peak < QWEN_FP32_WEIGHTS_AND_GRADS_MB:
                gaps.append(f"metrics.{name}.peak_allocated_mb {peak:.1f} is below the "
                            f"{QWEN_FP32_WEIGHTS_AND_GRADS_MB:.0f} MiB that {MODEL_ID}'s FP32 "
                            "weights and gradients occupy: not a run of this model")
    return gaps, notes


def _workload_gaps(workload: dict, notes: list[str]) -> list[str]:
    gaps = []
    for key, expected in CHAPTER_WORKLOAD.items():
        value = workload[key]
        same = value == expected if key == "prompts" else _close(float(value), float(expected))
        if not same:
            gaps.append(f"workload.{key} is {value!r}; the chapter's workload uses {expected!r}")
    if workload["seq_len"] not in ACCEPTED_SEQ_LENS:
        gaps.append(f"workload.seq_len is {workload['seq_len']}; credit needs 128 (or the "
                    "chapter's memory fallback 64)")
    elif workload["seq_len"] == 64:
        notes.append("seq_len 64: the chapter's low-memory fallback")
    if workload["repeats"] < MIN_REPEATS:
        gaps.append(f"workload.repeats is {workload['repeats']}; credit needs at least {MIN_REPEATS}")
    if workload["warmup"] < 1:
        gaps.append("workload.warmup is 0; credit needs at least 1 warm-up update")
    for key, expected in UPDATE_DEFAULTS.items():
        if key in workload and not _close(float(workload[key]), float(expected)):
            gaps.append(f"workload.{key} is {workload[key]!r}; the chapter uses {expected!r}")
    if workload["candidate_dtype"] == "bfloat16":
        notes.append("candidate bfloat16 (no GradScaler)")
    return gaps


# --------------------------------------------------------------------------- public API

def _summary(record: dict) -> str:
    base, cand = record["metrics"]["baseline"], record["metrics"]["candidate"]

    def ms(value):
        return "n/a" if value is None else f"{value:.2f} ms"

    def mb(value):
        return "n/a" if value is None else f"{value:.0f} MB"

    return (f"{record['run_label']} on {record['hardware']['name']} ({record['hardware']['device']}): "
            f"FP32 median {ms(base['step_median_ms'])} vs AMP {ms(cand['step_median_ms'])}, "
            f"peak {mb(base['peak_allocated_mb'])} -> {mb(cand['peak_allocated_mb'])}, "
            f"AMP backoffs {cand['scale_backoff_steps']}, decision {record['decision']}")


def check_record(record: dict) -> LabVerdict:
    """Validate one parsed record and decide whether it earns the optional GPU credit."""
    try:
        problems = _layout_problems(record)
        if not problems:
            problems = _consistency_problems(record)
    except Exception as exc:  # defensive: a malformed record must never crash the grader
        problems = [f"record could not be checked: {type(exc).__name__}: {exc}"]
    if problems:
        return LabVerdict(valid=False, earns_credit=False, reasons=problems,
                          summary=f"INVALID record ({len(problems)} problem"
                                  f"{'s' if len(problems) != 1 else ''}): no credit")
    gaps, notes = _credit_gaps(record)
    if gaps:
        return LabVerdict(valid=True, earns_credit=False, reasons=gaps, notes=notes,
                          summary="valid record, no GPU credit: " + _summary(record))
    return LabVerdict(valid=True, earns_credit=True, reasons=[], notes=notes,
                      summary="earns the optional GPU credit: " + _summary(record))


class _StrictJSONError(ValueError):
    pass


def _reject_constant(name: str):
    raise _StrictJSONError(f"non-standard JSON constant {name} (NaN/Infinity are not allowed; "
                           "write null for a non-finite value)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _StrictJSONError(f"number {text} overflows to infinity")
    return value


def _no_duplicate_keys(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise _StrictJSONError(f"duplicate key {key!r} in one object")
        seen[key] = value
    return seen


def parse_strict_json(text: str):
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                      object_pairs_hook=_no_duplicate_keys)


def check_file(path) -> LabVerdict:
    """Read, strictly parse and check one record file. Never raises on bad input."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        reason = f"cannot read {path}: {exc.strerror or exc}"
        return LabVerdict(valid=False, earns_credit=False, reasons=[reason],
                          summary="unreadable record: no credit", readable=False)
    try:
        record = parse_strict_json(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 text: {exc}"
    except _StrictJSONError as exc:
        reason = f"not strict JSON: {exc}"
    except (json.JSONDecodeError, RecursionError) as exc:
        reason = f"not valid JSON: {exc}"
    else:
        verdict = check_record(record)
        label = record.get("run_label") if isinstance(record, dict) else None
        stem = path.stem
        prefix = RECORD_GLOB.split("*")[0]
        if stem.startswith(prefix) and isinstance(label, str) and stem[len(prefix):] != label:
            verdict.notes.append(f"file name {path.name} does not carry run_label {label!r}")
        return verdict
    return LabVerdict(valid=False, earns_credit=False, reasons=[reason],
                      summary="INVALID record (1 problem): no credit")


def find_records(root) -> list[Path]:
    """Lab records in a repository: the results folder first, then the repository root."""
    root = Path(root)
    found = []
    for folder in (root / RESULTS_RELATIVE_DIR, root):
        if folder.is_dir():
            found += sorted(p for p in folder.glob(RECORD_GLOB) if p.is_file())
    unique = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


# --------------------------------------------------------------------------- command line

def add_parser(subparsers):
    parser = subparsers.add_parser(
        "check-lab",
        help="validate a GPU lab record and say whether it earns the optional credit",
        description=("Validate train-amp-backward_<label>.json records written by "
                     "gpu_lab/amp_backward_lab.py. Exit 0 only when every record earns the "
                     "optional GPU credit; 1 when a record is invalid or earns none; 2 when a "
                     "file is missing or unreadable."),
    )
    parser.add_argument("records", nargs="+", metavar="RECORD", type=Path)
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    exit_code = 0
    for path in args.records:
        verdict = check_file(path)
        print(f"{path}: {verdict.summary}")
        for reason in verdict.reasons:
            print(f"  - {reason}")
        for note in verdict.notes:
            print(f"  note: {note}")
        if not verdict.readable:
            exit_code = 2
        elif not verdict.earns_credit:
            exit_code = max(exit_code, 1)
    return exit_code
