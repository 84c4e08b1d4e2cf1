"""Internal consistency of a GPU lab record whose layout is complete.

Each rule restates what the lab's loop (the chapter's Step 5.2) does: every attempt either
succeeds or backs off, a measured path made exactly ``warmup + repeats`` successes, the FP16 scale
halves once per backoff, the overflow path makes one untimed attempt, the decision follows the
update gate, and the lab's added fields follow from the chapter's ones. A record that breaks one
cannot have come from the loop, whatever its numbers look like.

Problems are :mod:`autograder.i18n` messages, rendered when shown.
"""
from __future__ import annotations

import math

from autograder.authoring import _
from autograder.assignment.lab.layout import (CONFIG_ONLY_SOURCE, EVIDENCE_ARCHITECTURE, EVIDENCE_DEVICE,
                                              EVIDENCE_SMOKE, PATH_NAMES, PROBE_SUFFIX, close, is_number,
                                              joined, settings, shown)


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def _p95_nearest_rank(values):
    ordered = sorted(values)
    return ordered[max(1, math.ceil(0.95 * len(ordered))) - 1]


def consistency_problems(record: dict) -> list:
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


def gate_failures(metrics: dict) -> list:
    """The chapter's update gate: the conditions that fail (messages); empty when it passes."""
    base, cand, over = (metrics[name] for name in PATH_NAMES)
    failed = []
    for name, path in (("baseline", base), ("candidate", cand)):
        if path["status"] != "measured":
            failed.append(_("{path}.status is {value}", path=name, value=shown(path["status"])))
        if not path["grad_is_finite"]:
            failed.append(_("{path}.grad_is_finite is false", path=name))
        if not path["step_applied"]:
            failed.append(_("{path}.step_applied is false", path=name))
    if over["step_applied"]:
        failed.append(_("overflow.step_applied is true (the injected overflow updated the weights)"))
    if not over["scale_after"] < over["scale_before"]:
        failed.append(_("overflow.scale_after is not below scale_before (no backoff)"))
    return failed


# --------------------------------------------------------------------------- per path

def _normal_path_problems(name: str, path: dict, workload: dict, expected_label: str,
                          expected_dtype: str, uses_scaler: bool) -> list:
    """Baseline and candidate: the chapter's loop of warm-up, repeats and backoff attempts."""
    where = f"metrics.{name}"
    warmup, repeats = workload["warmup"], workload["repeats"]
    required = warmup + repeats
    max_attempts = required + workload["max_scale_backoff_steps"]
    attempted, successful = path["attempted_steps"], path["successful_steps"]
    backoffs = path["scale_backoff_steps"]
    problems = _common_path_problems(where, path, expected_label, expected_dtype)

    if attempted != successful + backoffs:
        problems.append(_("{where}: attempted_steps {attempted} != successful_steps {successful} + "
                          "scale_backoff_steps {backoffs} (every attempt either succeeds or backs off)",
                          where=where, attempted=attempted, successful=successful, backoffs=backoffs))
    if attempted > max_attempts:
        problems.append(_("{where}: attempted_steps {attempted} exceeds warmup + repeats + "
                          "max_scale_backoff_steps = {limit}",
                          where=where, attempted=attempted, limit=max_attempts))
    if path["status"] == "measured":
        if successful != required:
            problems.append(_("{where}: status 'measured' needs successful_steps == warmup + repeats "
                              "= {required}, got {successful}",
                              where=where, required=required, successful=successful))
        if not path["grad_is_finite"]:
            problems.append(_("{where}: status 'measured' ends on a successful update, but "
                              "grad_is_finite is false", where=where))
        delta = path["parameter_delta_max"]
        if delta is None or delta <= 0:
            problems.append(_("{where}: status 'measured' ends on an applied update, but "
                              "parameter_delta_max is {delta}", where=where, delta=shown(delta)))
    elif attempted != max_attempts or successful >= required:  # failed_to_stabilize: out of attempts
        problems.append(_("{where}: status 'failed_to_stabilize' needs all {limit} attempts used and "
                          "fewer than {required} successes (got {attempted} attempts, {successful} "
                          "successes)", where=where, limit=max_attempts, required=required,
                          attempted=attempted, successful=successful))
    timed = successful > warmup
    if timed != (path["step_median_ms"] is not None):
        problems.append(_("{where}: step_median_ms must be present exactly when successful_steps "
                          "({successful}) exceeds warmup ({warmup})",
                          where=where, successful=successful, warmup=warmup))
    if path["step_applied"] != timed:
        problems.append(_("{where}: step_applied is {applied} but {count} measured updates were "
                          "applied", where=where, applied=str(path["step_applied"]),
                          count=max(0, successful - warmup)))
    problems += _step_times_problems(where, path, expected_count=max(0, successful - warmup),
                                     repeats=repeats)
    problems += _scale_problems(where, path, workload, uses_scaler, normal=True)
    return problems


def _common_path_problems(where: str, path: dict, expected_label: str, expected_dtype: str) -> list:
    problems = []
    if path["label"] != expected_label:
        problems.append(_("{where}.label is {value}; expected {expected}", where=where,
                          value=shown(path["label"]), expected=repr(expected_label)))
    if path["dtype"] != expected_dtype:
        problems.append(_("{where}.dtype is {value}; expected {expected}", where=where,
                          value=shown(path["dtype"]), expected=repr(expected_dtype)))
    if not path["probe_parameter"].endswith(PROBE_SUFFIX):
        problems.append(_("{where}.probe_parameter {value} is not a *{suffix} parameter", where=where,
                          value=shown(path["probe_parameter"]), suffix=PROBE_SUFFIX))
    if (path["grad_norm"] is None) == path["grad_is_finite"]:
        problems.append(_("{where}: grad_norm must be a number exactly when grad_is_finite is true "
                          "(grad_norm {norm}, grad_is_finite {finite})", where=where,
                          norm=shown(path["grad_norm"]), finite=str(path["grad_is_finite"])))
    median, p95 = path["step_median_ms"], path["step_p95_ms"]
    if (median is None) != (p95 is None):
        problems.append(_("{where}: step_median_ms and step_p95_ms must both be numbers or both null",
                          where=where))
    elif median is not None and p95 < median * (1 - 1e-9):
        problems.append(_("{where}: step_p95_ms {p95} is below step_median_ms {median}",
                          where=where, p95=p95, median=median))
    return problems


def _step_times_problems(where: str, path: dict, expected_count: int, repeats: int) -> list:
    times = path.get("step_times_ms")
    if times is None:
        return []
    problems = []
    if len(times) != expected_count or len(times) > repeats:
        problems.append(_("{where}.step_times_ms has {count} entries; expected {expected} "
                          "(successful_steps - warmup)", where=where, count=len(times),
                          expected=expected_count))
    elif times:
        median, p95 = path["step_median_ms"], path["step_p95_ms"]
        if median is not None and not close(median, _median(times)):
            problems.append(_("{where}.step_median_ms {median} is not the median of step_times_ms "
                              "({actual})", where=where, median=median, actual=_median(times)))
        if p95 is not None and not close(p95, _p95_nearest_rank(times)):
            problems.append(_("{where}.step_p95_ms {p95} is not the nearest-rank P95 of "
                              "step_times_ms ({actual})", where=where, p95=p95,
                              actual=_p95_nearest_rank(times)))
    return problems


def _scale_problems(where: str, path: dict, workload: dict, uses_scaler: bool, normal: bool) -> list:
    problems = []
    initial, before, after = path["scale_initial"], path["scale_before"], path["scale_after"]
    if not uses_scaler:
        # FP32 and BF16 paths run a disabled GradScaler, whose scale reads 1.0.
        if (initial, before, after) != (1.0, 1.0, 1.0):
            problems.append(_("{where}: a path without GradScaler keeps scale 1.0, got "
                              "{initial} / {before} / {after} (initial / before / after)",
                              where=where, initial=initial, before=before, after=after))
        return problems
    update = settings(workload)
    if not close(initial, float(workload["initial_scale"])):
        problems.append(_("{where}.scale_initial {initial} != workload.initial_scale {expected}",
                          where=where, initial=initial, expected=workload["initial_scale"]))
    if not normal:
        return problems
    backoffs = path["scale_backoff_steps"]
    if path["attempted_steps"] < update["growth_interval"]:
        # Fewer attempts than growth_interval: the scale never grows, each backoff halves it.
        expected = initial * update["backoff_factor"] ** backoffs
        if not close(after, expected):
            problems.append(_("{where}: {backoffs} backoffs from scale {initial} should end at "
                              "{expected:g}, but scale_after is {after} (backoff count does not match "
                              "the scale trajectory)", where=where, backoffs=backoffs,
                              initial=initial, expected=expected, after=after))
        if path["status"] == "measured" and not close(before, after):
            problems.append(_("{where}: the last attempt of a measured path succeeded, so "
                              "scale_before {before} must equal scale_after {after}",
                              where=where, before=before, after=after))
    return problems


def _overflow_problems(path: dict, workload: dict) -> list:
    where = "metrics.overflow"
    problems = _common_path_problems(where, path, "overflow", "torch.float16")
    if path["status"] != "measured":
        problems.append(_("{where}.status is {value}; the single overflow attempt is always "
                          "'measured'", where=where, value=shown(path["status"])))
    if path["attempted_steps"] != 1 or path["successful_steps"] != 0:
        problems.append(_("{where}: the overflow path makes exactly 1 attempt and 0 successful "
                          "steps (got {attempted} / {successful})", where=where,
                          attempted=path["attempted_steps"], successful=path["successful_steps"]))
    if path["scale_backoff_steps"] not in (0, 1):
        # The chapter's loop stops before counting (0); counting the one attempt gives 1.
        problems.append(_("{where}.scale_backoff_steps is {backoffs}; a single attempt backs off "
                          "at most once", where=where, backoffs=path["scale_backoff_steps"]))
    if path["step_median_ms"] is not None:
        problems.append(_("{where}: the overflow attempt is never timed, step_median_ms must be null",
                          where=where))
    if path.get("step_times_ms"):
        problems.append(_("{where}.step_times_ms must be empty", where=where))
    delta = path["parameter_delta_max"]
    applied = delta is not None and delta > 0
    if path["step_applied"] != applied:
        problems.append(_("{where}: step_applied is {applied} but parameter_delta_max is {delta}",
                          where=where, applied=str(path["step_applied"]), delta=shown(delta)))
    problems += _scale_problems(where, path, workload, uses_scaler=True, normal=False)
    factor = settings(workload)["backoff_factor"]
    before, after = path["scale_before"], path["scale_after"]
    if not close(before, path["scale_initial"]):
        problems.append(_("{where}: scale_before {before} must equal scale_initial {initial} on the "
                          "first attempt", where=where, before=before, initial=path["scale_initial"]))
    if not (close(after, before) or close(after, before * factor)):
        problems.append(_("{where}: scale_after {after} is neither scale_before {before} nor one "
                          "backoff ({backed_off:g})", where=where, after=after, before=before,
                          backed_off=before * factor))
    elif path["scale_backoff_steps"] == 1 and not close(after, before * factor):
        problems.append(_("{where}: scale_backoff_steps is 1 but the scale did not back off "
                          "({before} -> {after})", where=where, before=before, after=after))
    elif path["grad_is_finite"] == (not close(after, before)):
        # GradScaler backs off exactly when unscale_ finds a non-finite gradient.
        problems.append(_("{where}: grad_is_finite is {finite} but the scale went {before} -> "
                          "{after}; GradScaler backs off exactly on non-finite gradients",
                          where=where, finite=str(path["grad_is_finite"]), before=before,
                          after=after))
    return problems


# --------------------------------------------------------------------------- whole record

def _record_level_problems(record: dict) -> list:
    problems = []
    metrics, hardware = record["metrics"], record["hardware"]
    failed = gate_failures(metrics)
    if record["decision"] == "accept" and failed:
        problems.append(_("decision is 'accept' but the update gate fails: {failures}",
                          failures=joined(failed)))
    if record["decision"] == "reject" and not failed:
        problems.append(_("decision is 'reject' but every condition of the update gate holds"))
    if record["decision"] == "accept" and record["failure"] is not None:
        problems.append(_("decision is 'accept' but failure is set"))
    if record["decision"] == "reject" and record["failure"] is None:
        problems.append(_("decision is 'reject' but failure is null"))
    expected_device = EVIDENCE_DEVICE[record["evidence_level"]]
    if hardware["device"] != expected_device:
        problems.append(_("evidence_level {evidence} requires hardware.device {expected}, got {device}",
                          evidence=repr(record["evidence_level"]), expected=repr(expected_device),
                          device=shown(hardware["device"])))
    if hardware["device"] == "cuda":
        problems += _cuda_hardware_problems(metrics, hardware)
    problems += _config_only_problems(record)
    problems += _throughput_problems(record)
    problems += _model_flops_problems(record)
    return problems


def _config_only_problems(record: dict) -> list:
    """Random weights built from a config are an architecture benchmark, and only that."""
    source = record["model"]["resolution_source"]
    evidence = record["evidence_level"]
    if evidence == EVIDENCE_ARCHITECTURE and source != CONFIG_ONLY_SOURCE:
        return [_("evidence_level {evidence} is the lab's --config-only run, but "
                  "model.resolution_source is {value} (expected {expected})",
                  evidence=repr(evidence), value=shown(source), expected=repr(CONFIG_ONLY_SOURCE))]
    if source == CONFIG_ONLY_SOURCE and evidence not in (EVIDENCE_ARCHITECTURE, EVIDENCE_SMOKE):
        return [_("model.resolution_source {value} means random weights built from a config: its "
                  "evidence_level is {expected} on CUDA, not {evidence}",
                  value=repr(source), expected=repr(EVIDENCE_ARCHITECTURE), evidence=shown(evidence))]
    return []


def _cuda_hardware_problems(metrics: dict, hardware: dict) -> list:
    problems = []
    if hardware["cuda"] is None:
        problems.append(_("hardware.device is 'cuda' but hardware.cuda (the CUDA version) is null"))
    total = hardware["total_memory_mb"]
    if total is None or total <= 0:
        problems.append(_("hardware.total_memory_mb must be positive on CUDA"))
    if hardware["capability"] is None:
        problems.append(_("hardware.capability (the compute capability) is null on CUDA"))
    for name in PATH_NAMES:
        peak = metrics[name]["peak_allocated_mb"]
        if peak is None or peak <= 0:
            problems.append(_("metrics.{path}.peak_allocated_mb must be measured (positive) on CUDA",
                              path=name))
        elif total and peak > total:
            problems.append(_("metrics.{path}.peak_allocated_mb {peak} exceeds the GPU's "
                              "total_memory_mb {total}", path=name, peak=peak, total=total))
    return problems


def _throughput_problems(record: dict) -> list:
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
                problems.append(_("metrics.{path}.tokens_per_second {value} != "
                                  "batch_size * seq_len * 1000 / step_median_ms",
                                  path=name, value=path["tokens_per_second"]))
        if path.get("achieved_tflops") is not None:
            if record["hardware"]["device"] != "cuda":
                problems.append(_("metrics.{path}.achieved_tflops is reported for a non-CUDA run",
                                  path=name))
            elif (median is None or not is_number(flops)
                  or not close(path["achieved_tflops"], flops * 1000.0 / median / 1e12)):
                problems.append(_("metrics.{path}.achieved_tflops does not follow from "
                                  "measurement.flops_per_step_estimate and step_median_ms", path=name))
    return problems


def _model_flops_problems(record: dict) -> list:
    """The MFU fields (optional; records before them stay valid) follow from the measured
    median, the stated model FLOPs and the stated peak, and exist only on CUDA."""
    measurement = record.get("measurement") if isinstance(record.get("measurement"), dict) else {}
    workload = record["workload"]
    model_flops = measurement.get("model_flops_per_step")
    attention = measurement.get("attention_flops_per_step")
    estimate = measurement.get("flops_per_step_estimate")
    layers, width = measurement.get("num_layers"), measurement.get("attention_width")
    problems = []
    if is_number(attention) and layers is not None and width is not None:
        seq_len = workload["seq_len"]
        expected = 12 * layers * width * seq_len * workload["batch_size"] * seq_len
        if not close(attention, expected):
            problems.append(_("measurement.attention_flops_per_step {value} != 12 x num_layers x "
                              "attention_width x seq_len x tokens = {expected}",
                              value=attention, expected=expected))
    if is_number(model_flops) and is_number(attention) and is_number(estimate) \
            and not close(model_flops, estimate + attention):
        problems.append(_("measurement.model_flops_per_step {value} != flops_per_step_estimate + "
                          "attention_flops_per_step = {expected}",
                          value=model_flops, expected=estimate + attention))
    precision = measurement.get("fp32_matmul_precision")
    for name in PATH_NAMES:
        problems += _path_mfu_problems(name, record["metrics"][name], record["hardware"]["device"],
                                       model_flops, precision)
    return problems


def _path_mfu_problems(name: str, path: dict, device: str, model_flops, precision) -> list:
    problems = []
    median = path["step_median_ms"]
    model_tflops, peak, mfu = path.get("model_tflops"), path.get("peak_tflops"), path.get("mfu")
    kind = path.get("peak_kind")
    if model_tflops is not None:
        if device != "cuda":
            problems.append(_("metrics.{path}.model_tflops is reported for a non-CUDA run", path=name))
        elif (median is None or not is_number(model_flops)
              or not close(model_tflops, model_flops * 1000.0 / median / 1e12)):
            problems.append(_("metrics.{path}.model_tflops does not follow from "
                              "measurement.model_flops_per_step and step_median_ms", path=name))
    if mfu is not None and (model_tflops is None or peak is None or not close(mfu, model_tflops / peak)):
        problems.append(_("metrics.{path}.mfu {value} != model_tflops / peak_tflops", path=name,
                          value=mfu))
    if (peak is None) != (kind is None):
        problems.append(_("metrics.{path}: peak_tflops and peak_kind must both be set or both null",
                          path=name))
    expected_kinds = {"baseline": ("fp32", "tf32"), "candidate": ("fp16_bf16_tensor",)}.get(name, ())
    if kind is not None and kind not in expected_kinds:
        problems.append(_("metrics.{path}.peak_kind is {value}, which is not the math this path runs",
                          path=name, value=shown(kind)))
    elif kind == "tf32" and precision == "highest":
        problems.append(_("metrics.{path}.peak_kind is 'tf32' but measurement.fp32_matmul_precision is "
                          "'highest' (FP32 matmuls without TF32)", path=name))
    return problems
