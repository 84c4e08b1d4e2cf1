"""Internal consistency of a GPU lab record whose layout is complete.

Each rule restates what the lab's loop (the chapter's Step 5.2) does: every attempt either
succeeds or backs off, a measured path made exactly ``warmup + repeats`` successes, the FP16 scale
halves once per backoff, the overflow path makes one untimed attempt, the decision follows the
update gate, and the lab's added fields follow from the chapter's ones. A record that breaks one
cannot have come from the loop, whatever its numbers look like.
"""
from __future__ import annotations

import math

from autograder.lab_layout import (
    EVIDENCE_DEVICE,
    PATH_NAMES,
    PROBE_SUFFIX,
    close,
    is_number,
    settings,
    shown,
)


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def _p95_nearest_rank(values):
    ordered = sorted(values)
    return ordered[max(1, math.ceil(0.95 * len(ordered))) - 1]


def consistency_problems(record: dict) -> list[str]:
    """Every way the record's numbers contradict each other; empty when they fit."""
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


def gate_failures(metrics: dict) -> list[str]:
    """The chapter's update gate; an empty list means it passes."""
    base, cand, over = (metrics[name] for name in PATH_NAMES)
    failed = []
    for name, path in (("baseline", base), ("candidate", cand)):
        if path["status"] != "measured":
            failed.append(f"{name}.status is {shown(path['status'])}")
        if not path["grad_is_finite"]:
            failed.append(f"{name}.grad_is_finite is false")
        if not path["step_applied"]:
            failed.append(f"{name}.step_applied is false")
    if over["step_applied"]:
        failed.append("overflow.step_applied is true (the injected overflow updated the weights)")
    if not over["scale_after"] < over["scale_before"]:
        failed.append("overflow.scale_after is not below scale_before (no backoff)")
    return failed


# --------------------------------------------------------------------------- per path

def _normal_path_problems(name: str, path: dict, workload: dict, expected_label: str,
                          expected_dtype: str, uses_scaler: bool) -> list[str]:
    """Baseline and candidate: the chapter's loop of warm-up, repeats and backoff attempts."""
    where = f"metrics.{name}"
    warmup, repeats = workload["warmup"], workload["repeats"]
    required = warmup + repeats
    max_attempts = required + workload["max_scale_backoff_steps"]
    attempted, successful = path["attempted_steps"], path["successful_steps"]
    backoffs = path["scale_backoff_steps"]
    problems = _common_path_problems(where, path, expected_label, expected_dtype)

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
    elif attempted != max_attempts or successful >= required:  # failed_to_stabilize: out of attempts
        problems.append(f"{where}: status 'failed_to_stabilize' needs all {max_attempts} attempts "
                        f"used and fewer than {required} successes (got {attempted} attempts, "
                        f"{successful} successes)")
    timed = successful > warmup
    if timed != (path["step_median_ms"] is not None):
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
        problems.append(f"{where}.label is {shown(path['label'])}; expected {expected_label!r}")
    if path["dtype"] != expected_dtype:
        problems.append(f"{where}.dtype is {shown(path['dtype'])}; expected {expected_dtype!r}")
    if not path["probe_parameter"].endswith(PROBE_SUFFIX):
        problems.append(f"{where}.probe_parameter {shown(path['probe_parameter'])} is not a "
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
        if median is not None and not close(median, _median(times)):
            problems.append(f"{where}.step_median_ms {median} is not the median of step_times_ms "
                            f"({_median(times)})")
        if p95 is not None and not close(p95, _p95_nearest_rank(times)):
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
    update = settings(workload)
    if not close(initial, float(workload["initial_scale"])):
        problems.append(f"{where}.scale_initial {initial} != workload.initial_scale "
                        f"{workload['initial_scale']}")
    if not normal:
        return problems
    backoffs = path["scale_backoff_steps"]
    if path["attempted_steps"] < update["growth_interval"]:
        # Fewer attempts than growth_interval: the scale never grows, each backoff halves it.
        expected = initial * update["backoff_factor"] ** backoffs
        if not close(after, expected):
            problems.append(f"{where}: {backoffs} backoffs from scale {initial} should end at "
                            f"{expected:g}, but scale_after is {after} (backoff count does not match "
                            "the scale trajectory)")
        if path["status"] == "measured" and not close(before, after):
            problems.append(f"{where}: the last attempt of a measured path succeeded, so "
                            f"scale_before {before} must equal scale_after {after}")
    return problems


def _overflow_problems(path: dict, workload: dict) -> list[str]:
    where = "metrics.overflow"
    problems = _common_path_problems(where, path, "overflow", "torch.float16")
    if path["status"] != "measured":
        problems.append(f"{where}.status is {shown(path['status'])}; the single overflow attempt is "
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
    factor = settings(workload)["backoff_factor"]
    before, after = path["scale_before"], path["scale_after"]
    if not close(before, path["scale_initial"]):
        problems.append(f"{where}: scale_before {before} must equal scale_initial "
                        f"{path['scale_initial']} on the first attempt")
    if not (close(after, before) or close(after, before * factor)):
        problems.append(f"{where}: scale_after {after} is neither scale_before {before} nor one "
                        f"backoff ({before * factor:g})")
    elif path["scale_backoff_steps"] == 1 and not close(after, before * factor):
        problems.append(f"{where}: scale_backoff_steps is 1 but the scale did not back off "
                        f"({before} -> {after})")
    elif path["grad_is_finite"] == (not close(after, before)):
        # GradScaler backs off exactly when unscale_ finds a non-finite gradient.
        problems.append(f"{where}: grad_is_finite is {path['grad_is_finite']} but the scale went "
                        f"{before} -> {after}; GradScaler backs off exactly on non-finite gradients")
    return problems


# --------------------------------------------------------------------------- whole record

def _record_level_problems(record: dict) -> list[str]:
    problems = []
    metrics, hardware = record["metrics"], record["hardware"]
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
                        f"{expected_device!r}, got {shown(hardware['device'])}")
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
            if median is None or not close(path["tokens_per_second"], tokens * 1000.0 / median):
                problems.append(f"metrics.{name}.tokens_per_second {path['tokens_per_second']} != "
                                "batch_size * seq_len * 1000 / step_median_ms")
        if path.get("achieved_tflops") is not None:
            if record["hardware"]["device"] != "cuda":
                problems.append(f"metrics.{name}.achieved_tflops is reported for a non-CUDA run")
            elif (median is None or not is_number(flops)
                  or not close(path["achieved_tflops"], flops * 1000.0 / median / 1e12)):
                problems.append(f"metrics.{name}.achieved_tflops does not follow from "
                                "measurement.flops_per_step_estimate and step_median_ms")
    return problems
