"""Regenerate the held-out-style lab records from chapter_default14.json.

    python tests/data/lab_records/make_fixtures.py

Each ``bad_*`` record differs from the chapter's published run by ONE inconsistency and must
be refused as invalid; each ``impossible_*`` record is consistent but breaks ONE physical bound
(autograder/assignment/lab/plausibility.py) and earns no credit; ``nocredit_*`` records are consistent and
possible but earn no GPU credit; ``credit_*`` records are variants that still earn it. ``cpu_smoke_sample.json``
comes from ``python gpu_lab/amp_backward_lab.py --run-mode cpu_smoke`` (valid, no credit). ``manifest.json`` lists the
expected verdict and a phrase the refusal reason must contain; tests/assignment/test_lab_check.py reads it.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHAPTER = json.loads((HERE / "chapter_default14.json").read_text(encoding="utf-8"))


def variant(change):
    record = copy.deepcopy(CHAPTER)
    change(record)
    return record


def setter(dotted: str, value):
    def change(record):
        *parents, last = dotted.split(".")
        target = record
        for key in parents:
            target = target[key]
        target[last] = value
    return change


def apply_all(*changes):
    def change(record):
        for one in changes:
            one(record)
    return change


def drop(dotted: str):
    def change(record):
        *parents, last = dotted.split(".")
        target = record
        for key in parents:
            target = target[key]
        del target[last]
    return change


CAND = "metrics.candidate"
OVER = "metrics.overflow"
BASE = "metrics.baseline"

# name -> (change, expected valid, expected credit, phrase the reasons must contain)
RECORDS = {
    "bad_p95_below_median": (setter(f"{CAND}.step_p95_ms", 90.0), False, False,
                             "below step_median_ms"),
    "bad_backoffs_vs_scale": (apply_all(setter(f"{CAND}.scale_backoff_steps", 5),
                                        setter(f"{CAND}.attempted_steps", 26)), False, False,
                              "scale trajectory"),
    "bad_attempts_vs_successes": (setter(f"{CAND}.attempted_steps", 28), False, False,
                                  "attempted_steps 28 != successful_steps"),
    "bad_successes_vs_repeats": (apply_all(setter(f"{CAND}.successful_steps", 20),
                                           setter(f"{CAND}.attempted_steps", 26)), False, False,
                                 "needs successful_steps == warmup + repeats"),
    "bad_overflow_applied": (apply_all(setter(f"{OVER}.step_applied", True),
                                       setter(f"{OVER}.parameter_delta_max", 7.63e-06)), False, False,
                             "overflow.step_applied is true"),
    "bad_overflow_no_backoff": (setter(f"{OVER}.scale_after", 65536.0), False, False,
                                "no backoff"),
    "bad_overflow_two_attempts": (setter(f"{OVER}.attempted_steps", 2), False, False,
                                  "exactly 1 attempt"),
    "bad_overflow_backoff_count": (setter(f"{OVER}.scale_backoff_steps", 3), False, False,
                                   "backs off at most once"),
    "bad_overflow_grad_norm": (setter(f"{OVER}.grad_norm", 3.5), False, False,
                               "grad_norm must be a number exactly when grad_is_finite"),
    "bad_overflow_finite_but_backed_off": (apply_all(setter(f"{OVER}.grad_is_finite", True),
                                                     setter(f"{OVER}.grad_norm", 3.5)), False, False,
                                           "backs off exactly on non-finite gradients"),
    "bad_reject_with_passing_gate": (apply_all(setter("decision", "reject"), setter("failure", {
        "type": "training_update_gate_failed", "message": "gate failed"})), False, False,
                                     "every condition of the update gate holds"),
    "bad_accept_with_failure": (setter("failure", {"type": "training_update_gate_failed",
                                                   "message": "gate failed"}), False, False,
                                "decision is 'accept' but failure is set"),
    "bad_baseline_scaled": (setter(f"{BASE}.scale_after", 65536.0), False, False,
                            "without GradScaler keeps scale 1.0"),
    "bad_candidate_dtype": (setter(f"{CAND}.dtype", "torch.bfloat16"), False, False,
                            "expected 'torch.float16'"),
    "bad_cpu_claims_real_model": (setter("hardware.device", "cpu"), False, False,
                                  "requires hardware.device 'cuda'"),
    "bad_peak_over_gpu_memory": (setter(f"{BASE}.peak_allocated_mb", 17000.0), False, False,
                                 "exceeds the GPU's total_memory_mb"),
    "bad_cuda_version_missing": (setter("hardware.cuda", None), False, False,
                                 "hardware.cuda"),
    "bad_missing_key": (drop(f"{CAND}.scale_after"), False, False,
                        "missing key metrics.candidate.scale_after"),
    "bad_missing_metrics_path": (drop(OVER), False, False, "missing key metrics.overflow"),
    "bad_string_boolean": (setter(f"{CAND}.step_applied", "true"), False, False,
                           "metrics.candidate.step_applied"),
    "bad_schema_version": (setter("schema_version", "training-mechanism-gpu/v2"), False, False,
                           "schema_version"),
    "bad_unknown_evidence": (setter("evidence_level", "synthetic"), False, False,
                             "evidence_level"),
    "nocredit_gate_rejected": (apply_all(
        setter(f"{CAND}.status", "failed_to_stabilize"), setter(f"{CAND}.attempted_steps", 33),
        setter(f"{CAND}.successful_steps", 20), setter(f"{CAND}.scale_backoff_steps", 13),
        setter(f"{CAND}.scale_before", 16.0), setter(f"{CAND}.scale_after", 8.0),
        setter(f"{CAND}.grad_is_finite", False), setter(f"{CAND}.grad_norm", None),
        setter(f"{CAND}.parameter_delta_max", 0.0), setter("decision", "reject"),
        setter("failure", {"type": "training_update_gate_failed", "message": "gate failed"})),
        True, False, "decision is 'reject'"),
    "nocredit_seq_len_256": (setter("workload.seq_len", 256), True, False, "workload.seq_len is 256"),
    "nocredit_repeats_10": (apply_all(
        setter("workload.repeats", 10), setter(f"{BASE}.attempted_steps", 11),
        setter(f"{BASE}.successful_steps", 11), setter(f"{CAND}.attempted_steps", 17),
        setter(f"{CAND}.successful_steps", 11)), True, False, "at least 20"),
    "nocredit_other_model": (setter("model.id", "Qwen/Qwen2.5-1.5B"), True, False, "model.id"),
    "nocredit_branch_not_commit": (setter("model.resolved_commit", "main"), True, False,
                                   "40-hex commit"),
    "credit_seq_len_64_fallback": (setter("workload.seq_len", 64), True, True, ""),
    "credit_bfloat16_candidate": (apply_all(
        setter("workload.candidate_dtype", "bfloat16"), setter(f"{CAND}.dtype", "torch.bfloat16"),
        setter(f"{CAND}.scale_initial", 1.0), setter(f"{CAND}.scale_before", 1.0),
        setter(f"{CAND}.scale_after", 1.0), setter(f"{CAND}.scale_backoff_steps", 0),
        setter(f"{CAND}.attempted_steps", 21)), True, True, ""),
    "credit_overflow_backoff_counted": (setter(f"{OVER}.scale_backoff_steps", 1), True, True, ""),
    # Other GPUs, each within its own figures (lab_gpu_specs): still credited.
    "credit_h200_run": (apply_all(
        setter("hardware.name", "NVIDIA H200"), setter("hardware.total_memory_mb", 143771.0),
        setter("hardware.capability", [9, 0]), setter(f"{BASE}.step_median_ms", 30.0),
        setter(f"{BASE}.step_p95_ms", 31.2), setter(f"{CAND}.step_median_ms", 20.0),
        setter(f"{CAND}.step_p95_ms", 21.5)), True, True, ""),
    "credit_a100_mig_slice": (apply_all(
        setter("hardware.name", "NVIDIA A100-SXM4-40GB MIG 2g.10gb"),
        setter("hardware.total_memory_mb", 9728.0), setter("hardware.capability", [8, 0])),
        True, True, ""),
    "credit_laptop_gpu": (apply_all(
        setter("hardware.name", "NVIDIA GeForce RTX 5070 Ti Laptop GPU"),
        setter("hardware.total_memory_mb", 12227.0)), True, True, ""),
    "credit_unknown_gpu": (setter("hardware.name", "Imaginary Accelerator 9000"), True, True, ""),
    "credit_lab_measurement_fields": (apply_all(
        setter("measurement", {"parameter_count": 494_032_768,
                               "flops_per_step_estimate": 6 * 494_032_768 * 128}),
        setter(f"{BASE}.achieved_tflops", 6 * 494_032_768 * 128 * 1000 / 96.50 / 1e12),
        setter(f"{CAND}.achieved_tflops", 6 * 494_032_768 * 128 * 1000 / 94.21 / 1e12)),
        True, True, ""),
}

# name -> (change, phrase): consistent records no GPU could have measured (lab_plausibility);
# each breaks ONE physical bound and earns no credit.
IMPOSSIBLE = {
    # 6 x 494,032,768 x 128 = 3.79e11 FLOPs in 2 ms is 190 TFLOP/s; the RTX 5070 Ti's FP32 peak
    # is 43.9, and the check allows twice that.
    "impossible_fp32_faster_than_gpu": (apply_all(
        setter(f"{BASE}.step_median_ms", 2.0), setter(f"{BASE}.step_p95_ms", 2.1)),
        "faster than the RTX 5070 Ti can compute it"),
    # 0.9 ms is 422 TFLOP/s against twice the 175.8 TFLOP/s FP16 tensor peak.
    "impossible_amp_faster_than_gpu": (apply_all(
        setter(f"{CAND}.step_median_ms", 0.9), setter(f"{CAND}.step_p95_ms", 1.0)),
        "FP16 dense tensor peak"),
    # An unknown GPU is held to the fastest known one: 0.05 ms is 7,600 TFLOP/s.
    "impossible_unknown_gpu_too_fast": (apply_all(
        setter("hardware.name", "Imaginary Accelerator 9000"),
        setter(f"{CAND}.step_median_ms", 0.05), setter(f"{CAND}.step_p95_ms", 0.06)),
        "faster than any known GPU"),
    "impossible_memory_over_board": (setter("hardware.total_memory_mb", 81920.0),
                                     "more memory than any RTX 5070 Ti board"),
    "impossible_memory_under_board": (setter("hardware.total_memory_mb", 8151.0),
                                      "less than any RTX 5070 Ti board"),
    "impossible_capability_mismatch": (setter("hardware.capability", [8, 0]),
                                       "is not the RTX 5070 Ti's compute capability (12.0)"),
    "impossible_peak_below_weights": (setter(f"{CAND}.peak_allocated_mb", 1500.0),
                                      "FP32 weights alone"),
    "impossible_peak_below_weights_and_grads": (setter(f"{OVER}.peak_allocated_mb", 3000.0),
                                                "FP32 weights and gradients"),
    "impossible_parameter_count": (setter("measurement", {
        "parameter_count": 135_000_000, "flops_per_step_estimate": 6 * 135_000_000 * 128}),
        "measurement.parameter_count 135,000,000"),
    "impossible_flops_estimate": (setter("measurement", {
        "parameter_count": 494_032_768, "flops_per_step_estimate": 1.0e9}),
        "measurement.flops_per_step_estimate"),
    "impossible_update_larger_than_lr": (setter(f"{CAND}.parameter_delta_max", 0.01),
                                         "larger than one SGD step can move a weight"),
}

# Files whose defect is in the JSON text itself.
RAW_TEXT = {
    "bad_nan_literal": ('"grad_norm": 11.857', '"grad_norm": NaN', "NaN"),
    "bad_infinity_literal": ('"step_p95_ms": 98.73', '"step_p95_ms": Infinity', "Infinity"),
    "bad_overflowing_number": ('"step_median_ms": 96.5', '"step_median_ms": 1e999', "overflows"),
    "bad_duplicate_key": ('"decision": "accept"', '"decision": "reject",\n  "decision": "accept"',
                          "duplicate key 'decision'"),
    "bad_truncated": (None, None, "not valid JSON"),
}


def dump(record) -> str:
    return json.dumps(record, indent=2, allow_nan=False) + "\n"


def main() -> None:
    manifest = {"chapter_default14.json": {"valid": True, "plausible": True, "earns_credit": True,
                                           "reason": ""}}
    for name, (change, valid, credit, reason) in RECORDS.items():
        (HERE / f"{name}.json").write_text(dump(variant(change)), encoding="utf-8")
        manifest[f"{name}.json"] = {"valid": valid, "plausible": valid, "earns_credit": credit,
                                    "reason": reason}
    for name, (change, reason) in IMPOSSIBLE.items():
        (HERE / f"{name}.json").write_text(dump(variant(change)), encoding="utf-8")
        manifest[f"{name}.json"] = {"valid": True, "plausible": False, "earns_credit": False,
                                    "reason": reason}
    chapter_text = dump(CHAPTER)
    for name, (old, new, reason) in RAW_TEXT.items():
        if old is None:
            text = chapter_text[: len(chapter_text) // 2]
        else:
            assert chapter_text.count(old) == 1, old
            text = chapter_text.replace(old, new)
        (HERE / f"{name}.json").write_text(text, encoding="utf-8")
        manifest[f"{name}.json"] = {"valid": False, "plausible": False, "earns_credit": False,
                                    "reason": reason}
    if (HERE / "cpu_smoke_sample.json").exists():  # written by the lab's cpu_smoke, not here
        manifest["cpu_smoke_sample.json"] = {"valid": True, "plausible": True, "earns_credit": False,
                                             "reason": "no GPU credit"}
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
