"""The record: the chapter's update gate and decision, throughput and MFU per path, the
``measurement`` block that defines every figure, and the strict-JSON file itself (its name, the
rule that keeps earlier evidence, and an atomic write)."""
from __future__ import annotations

import datetime
import json
from pathlib import Path

import amp_lab_flops as flops_model
from amp_lab_common import require_torch
from amp_lab_layout import EVIDENCE_SMOKE, PROFILE_ID, RECORD_PREFIX, SCHEMA_VERSION, SEMANTIC_ID
from amp_lab_measure import TIMED_REGION
from amp_lab_stats import MEDIAN_DEFINITION, P95_DEFINITION, strip_non_finite

FLOPS_FORMULA = (  # flops_per_step_estimate, kept as before; MFU uses amp_lab_flops' model FLOPs
    "6 * parameter_count * tokens_per_step (forward 2 + backward 4 FLOPs per parameter "
    "per token; attention score FLOPs are not counted)"
)


def add_throughput(result: dict, tokens_per_step: int, flops_per_step, on_cuda: bool) -> None:
    median_ms = result["step_median_ms"]
    if median_ms is None or median_ms <= 0:
        result["tokens_per_second"] = None
        result["achieved_tflops"] = None
        return
    result["tokens_per_second"] = tokens_per_step * 1000.0 / median_ms
    result["achieved_tflops"] = (
        flops_per_step * 1000.0 / median_ms / 1e12 if on_cuda and flops_per_step else None
    )


def update_gate_passed(baseline: dict, candidate: dict, overflow: dict) -> bool:
    """The chapter's gate: both normal paths update with finite gradients, the overflow skips."""
    return (
        baseline["status"] == "measured"
        and candidate["status"] == "measured"
        and baseline["grad_is_finite"]
        and candidate["grad_is_finite"]
        and baseline["step_applied"]
        and candidate["step_applied"]
        and not overflow["step_applied"]
        and overflow["scale_after"] < overflow["scale_before"]
    )


def gate_failure(passed: bool):
    if passed:
        return None
    return {
        "type": "training_update_gate_failed",
        "message": (
            "the FP32 or AMP path did not complete finite, applied updates, or the injected "
            "overflow was not skipped with a scale backoff"
        ),
    }


def build_record(run_label, mode, source, workload, hardware, metrics, ops, evidence) -> dict:
    torch = require_torch()
    passed = update_gate_passed(metrics["baseline"], metrics["candidate"], metrics["overflow"])
    tokens_per_step = workload["batch_size"] * workload["seq_len"]
    flops = 6 * source.parameter_count * tokens_per_step if source.parameter_count else None
    for result in metrics.values():
        add_throughput(result, tokens_per_step, flops, ops.on_cuda)
    attention_flops = (
        flops_model.attention_flops_per_step(source.num_layers, source.attention_width,
                                             workload["batch_size"], workload["seq_len"])
        if source.num_layers and source.attention_width else None
    )
    model_flops = flops + attention_flops if flops and attention_flops is not None else None
    precision = torch.get_float32_matmul_precision()
    gpu_peak = flops_model.find_peak(hardware["name"]) if ops.on_cuda else None
    for key, result in metrics.items():
        amp_dtype = None if key == "baseline" else workload["candidate_dtype"]
        peak, kind = flops_model.path_peak(gpu_peak, amp_dtype, precision)
        flops_model.add_mfu(result, model_flops if ops.on_cuda else None, peak, kind)
    record = {
        "schema_version": SCHEMA_VERSION,
        "semantic_id": SEMANTIC_ID,
        "profile_id": PROFILE_ID,
        "run_label": run_label,
        "model": source.info,
        "workload": workload,
        "hardware": hardware,
        "metrics": metrics,
        "failure": gate_failure(passed),
        "evidence_level": evidence,
        "decision": "accept" if passed else "reject",
        # Fields below extend the chapter's layout.
        "run_mode": mode,
        "measurement": {
            "timing_method": ops.timing_method,
            "timed_region": TIMED_REGION,
            "median_definition": MEDIAN_DEFINITION,
            "p95_definition": P95_DEFINITION,
            "excluded_from_statistics": "warm-up updates, backoff attempts, the overflow path",
            "peak_memory_source": ops.peak_memory_source,
            "tokens_per_step": tokens_per_step,
            "tokens_per_second_definition": "tokens_per_step * 1000 / step_median_ms",
            "parameter_count": source.parameter_count,
            "flops_per_step_estimate": flops,
            "flops_formula": FLOPS_FORMULA,
            "achieved_tflops_definition": "flops_per_step_estimate * 1000 / step_median_ms / 1e12 (CUDA only)",
            "num_layers": source.num_layers,
            "attention_width": source.attention_width,
            "attention_flops_per_step": attention_flops,
            "model_flops_per_step": model_flops,
            "model_flops_formula": flops_model.MODEL_FLOPS_FORMULA,
            "mfu_definition": flops_model.MFU_DEFINITION + " (CUDA only; null for a GPU the table lacks)",
            "peak_tflops_source": flops_model.PEAK_SOURCE,
            "peak_gpu": gpu_peak[0] if gpu_peak else None,
            "attention_implementation": source.attention_implementation,
            "fp32_matmul_precision": torch.get_float32_matmul_precision(),
        },
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    return strip_non_finite(record)


def record_path_for(output_dir: Path, run_label: str) -> Path:
    return output_dir / f"{RECORD_PREFIX}_{run_label}.json"


def record_is_protected(path: Path, mode: str) -> bool:
    """A real_gpu run never replaces a record; a smoke run may replace only another smoke record."""
    if not path.exists():
        return False
    if mode == "real_gpu":
        return True
    try:
        existing = json.loads(path.read_text(encoding="utf-8"))
        return existing.get("evidence_level") != EVIDENCE_SMOKE
    except (OSError, ValueError, AttributeError):
        return True


def write_record(record: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, ensure_ascii=False, indent=2, allow_nan=False)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text + "\n", encoding="utf-8")
    temporary.replace(path)  # never leave a half-written record behind
    return path
