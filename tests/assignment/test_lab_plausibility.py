"""Physical plausibility of lab records (autograder.assignment.lab.plausibility) and the GPU table behind
it (autograder.assignment.lab.gpu_specs). Each rule is tested on both sides of its bound; the fixtures
that break one rule each are checked against manifest.json in test_lab_check.py."""
from __future__ import annotations

import json
import sys

import pytest
from support.helpers import ROOT
from support.lab_records import RECORDS, chapter_record

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.assignment.lab import (check as lab_check, gpu_specs as lab_gpu_specs,  # noqa: E402
                                       plausibility as lab_plausibility)
from autograder.assignment.lab.layout import (QWEN_FP32_WEIGHTS_AND_GRADS_MB, QWEN_FP32_WEIGHTS_MB,  # noqa: E402
                                              QWEN_PARAMETERS, parse_capability)

FLOPS_128 = 6 * QWEN_PARAMETERS * 128  # one step of the chapter's workload


def on_gpu(record, name, total_mb, capability):
    record["hardware"].update(name=name, total_memory_mb=total_mb, capability=capability)
    return record


def set_times(record, path, median, p95=None):
    record["metrics"][path].update(step_median_ms=median, step_p95_ms=p95 or median)
    return record


def floor_ms(peak_tflops):
    """The shortest step the compute rule accepts at a given peak."""
    return FLOPS_128 / (lab_plausibility.COMPUTE_MARGIN * peak_tflops * 1e12) * 1000.0


# --------------------------------------------------------------------------- compute

@pytest.mark.parametrize("path, peak", [("baseline", 43.9), ("candidate", 175.8)])
def test_step_time_is_checked_against_the_paths_own_peak(path, peak):
    # RTX 5070 Ti: the FP32 path against 43.9 TFLOP/s (FP32), the FP16 path against 175.8 (tensor).
    possible = set_times(chapter_record(), path, floor_ms(peak) * 1.01)
    verdict = lab_check.check_record(possible)
    assert verdict.earns_credit, verdict.reasons
    impossible = set_times(chapter_record(), path, floor_ms(peak) * 0.99)
    verdict = lab_check.check_record(impossible)
    assert verdict.valid and not verdict.plausible and not verdict.earns_credit
    assert [r for r in verdict.reasons if f"metrics.{path}.step_median_ms" in r and f"{peak:g} TFLOP/s" in r]


def test_fp32_path_is_not_held_to_the_tensor_core_peak():
    # A step that is possible for FP16 tensor cores but not for FP32 is refused on the FP32 path.
    ms = floor_ms(100.0)  # above twice the FP32 peak (87.8), below twice the FP16 peak (351.6)
    assert not lab_check.check_record(set_times(chapter_record(), "baseline", ms)).plausible
    assert lab_check.check_record(set_times(chapter_record(), "candidate", ms)).plausible


def test_bfloat16_candidate_is_named_in_the_reason():
    record = json.loads((RECORDS / "credit_bfloat16_candidate.json").read_text(encoding="utf-8"))
    set_times(record, "candidate", 0.5)
    verdict = lab_check.check_record(record)
    assert not verdict.plausible and any("BF16 dense tensor peak" in r for r in verdict.reasons)


def test_the_fastest_measured_step_counts_not_only_the_median():
    record = chapter_record()
    times = [94.0 + 0.1 * i for i in range(20)]
    times_median = (times[9] + times[10]) / 2
    record["metrics"]["candidate"].update(step_times_ms=times, step_median_ms=times_median,
                                          step_p95_ms=times[18])
    assert lab_check.check_record(record).earns_credit
    times[0] = 0.5  # one step faster than the GPU can compute; median and P95 unchanged
    record["metrics"]["candidate"]["step_times_ms"] = times
    verdict = lab_check.check_record(record)
    assert verdict.valid and not verdict.plausible
    assert any("metrics.candidate.step_times_ms: a 0.5 ms step" in r for r in verdict.reasons)


def test_a_bigger_workload_needs_proportionally_longer_steps():
    # seq_len 256 doubles the FLOPs: a step time that is possible at 128 tokens is not at 256.
    ms = floor_ms(175.8) * 1.5
    record = set_times(chapter_record(), "candidate", ms)
    assert lab_check.check_record(record).plausible
    record["workload"]["seq_len"] = 256
    assert not lab_check.check_record(record).plausible


def test_unknown_gpu_is_held_to_the_fastest_known():
    record = on_gpu(chapter_record(), "Imaginary Accelerator 9000", 16302.5, [12, 0])
    fastest = lab_gpu_specs.FASTEST_KNOWN.half_path_peak
    verdict = lab_check.check_record(set_times(record, "candidate", floor_ms(fastest) * 1.01))
    assert verdict.earns_credit, verdict.reasons
    assert "unknown GPU Imaginary Accelerator 9000, checked against the fastest known" in verdict.plausibility
    verdict = lab_check.check_record(set_times(record, "candidate", floor_ms(fastest) * 0.99))
    assert not verdict.plausible and any("any known GPU" in r for r in verdict.reasons)


def test_the_fastest_known_bound_is_above_every_table_entry():
    fastest = lab_gpu_specs.FASTEST_KNOWN
    for spec in lab_gpu_specs.GPU_SPECS:
        assert spec.fp32_path_peak <= fastest.fp32_path_peak and spec.half_path_peak <= fastest.half_path_peak
        assert max(spec.memory_gb) <= max(fastest.memory_gb)
        assert spec.half_path_peak >= spec.fp32_path_peak > 0, spec.label


def test_other_models_are_not_held_to_qwens_flops():
    # The FLOP count is known for Qwen2.5-0.5B only; another model earns no credit anyway.
    record = set_times(chapter_record(), "candidate", 0.5)
    record["model"]["id"] = "Qwen/Qwen2.5-1.5B"
    verdict = lab_check.check_record(record)
    assert verdict.valid and verdict.plausible and not verdict.earns_credit
    assert any("model.id" in r for r in verdict.reasons)


def test_cpu_records_skip_the_gpu_rules():
    verdict = lab_check.check_file(RECORDS / "cpu_smoke_sample.json")
    assert verdict.valid and verdict.plausible and verdict.plausibility == []


# --------------------------------------------------------------------------- memory

@pytest.mark.parametrize("peak, plausible", [
    (QWEN_FP32_WEIGHTS_AND_GRADS_MB + 1, True),
    (QWEN_FP32_WEIGHTS_AND_GRADS_MB - 1, False),
    (QWEN_FP32_WEIGHTS_MB - 1, False),
])
def test_every_path_holds_the_weights_and_gradients(peak, plausible):
    for path in ("baseline", "candidate", "overflow"):
        record = chapter_record()
        record["metrics"][path]["peak_allocated_mb"] = peak
        verdict = lab_check.check_record(record)
        assert verdict.plausible is plausible, (path, verdict.reasons)
        assert verdict.valid


@pytest.mark.parametrize("name, total_mb, capability, plausible", [
    ("NVIDIA GeForce RTX 5070 Ti", 16302.5, [12, 0], True),
    ("NVIDIA GeForce RTX 5070 Ti", 81920.0, [12, 0], False),      # no 80 GB 5070 Ti
    ("NVIDIA GeForce RTX 5070 Ti", 8151.0, [12, 0], False),       # nor an 8 GB one
    ("NVIDIA GeForce RTX 5070 Ti Laptop GPU", 12227.0, [12, 0], True),  # laptops: 12 GB
    ("NVIDIA H200", 143771.0, [9, 0], True),
    ("NVIDIA H200", 300000.0, [9, 0], False),
    ("NVIDIA H100 80GB HBM3", 81559.0, [9, 0], True),
    ("NVIDIA H100 80GB HBM3", 9984.0, [9, 0], True),              # a MIG slice
    ("NVIDIA A100-SXM4-40GB", 40536.0, [8, 0], True),
    ("NVIDIA A100-SXM4-40GB", 40536.0, [8, 6], False),            # A100 is 8.0
    ("Tesla T4", 15095.0, [7, 5], True),
    ("Tesla T4", 15095.0, [8, 9], False),
    ("NVIDIA L4", 22478.0, [8, 9], True),
    ("Imaginary Accelerator 9000", 2_000_000.0, [12, 0], False),  # more than any GPU
])
def test_board_memory_and_capability(name, total_mb, capability, plausible):
    record = on_gpu(chapter_record(), name, total_mb, capability)
    verdict = lab_check.check_record(record)
    assert verdict.valid, verdict.reasons
    assert verdict.plausible is plausible, verdict.reasons
    assert verdict.earns_credit is plausible


def test_a_mig_slice_is_noted_not_refused():
    record = on_gpu(chapter_record(), "NVIDIA H100 80GB HBM3", 9984.0, [9, 0])
    verdict = lab_check.check_record(record)
    assert any("MIG or vGPU slice" in note for note in verdict.plausibility)


# --------------------------------------------------------------------------- model size, update size

def test_parameter_count_and_flops_estimate_must_be_qwens():
    record = chapter_record()
    record["measurement"] = {"parameter_count": QWEN_PARAMETERS, "flops_per_step_estimate": FLOPS_128}
    assert lab_check.check_record(record).earns_credit
    record["measurement"]["parameter_count"] = QWEN_PARAMETERS // 4
    assert not lab_check.check_record(record).plausible
    record["measurement"] = {"parameter_count": QWEN_PARAMETERS, "flops_per_step_estimate": FLOPS_128 / 4}
    assert not lab_check.check_record(record).plausible


@pytest.mark.parametrize("delta, plausible", [(1.0e-4, True), (7.63e-6, True), (1.2e-4, False), (0.5, False)])
def test_a_clipped_sgd_step_moves_no_weight_more_than_lr_times_max_norm(delta, plausible):
    record = chapter_record()  # lr 1e-4, max_grad_norm 1.0
    record["metrics"]["baseline"]["parameter_delta_max"] = delta
    verdict = lab_check.check_record(record)
    assert verdict.valid and verdict.plausible is plausible, verdict.reasons


# --------------------------------------------------------------------------- the table

@pytest.mark.parametrize("reported, label", [
    ("NVIDIA GeForce RTX 5070 Ti", "RTX 5070 Ti"),
    ("NVIDIA GeForce RTX 5070", "RTX 5070"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"),
    ("NVIDIA GeForce RTX 4080 SUPER", "RTX 4080"),
    ("NVIDIA GeForce RTX 3090 Ti", "RTX 3090"),
    ("NVIDIA GeForce RTX 5090", "RTX 5090"),
    ("NVIDIA GeForce RTX 5080", "RTX 5080"),
    ("NVIDIA H200", "H200"),
    ("NVIDIA H200 NVL", "H200"),
    ("NVIDIA GH200 480GB", "GH200"),
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA A100-SXM4-80GB", "A100"),
    ("NVIDIA A100 80GB PCIe", "A100"),
    ("NVIDIA A10", "A10"),
    ("NVIDIA A10G", "A10G"),
    ("NVIDIA L4", "L4"),
    ("NVIDIA L40S", "L40S"),
    ("NVIDIA L40", "L40"),
    ("Tesla T4", "T4"),
    ("Tesla V100-SXM2-16GB", "V100"),
    ("NVIDIA B200", "B200"),
    ("AMD Instinct MI300X", "MI300X"),
])
def test_reported_names_find_their_entry(reported, label):
    spec, laptop = lab_gpu_specs.lookup(reported)
    assert spec is not None and spec.label == label and not laptop


def test_unknown_and_laptop_names():
    assert lab_gpu_specs.lookup("Quadro P1000") == (None, False)
    spec, laptop = lab_gpu_specs.lookup("NVIDIA GeForce RTX 4090 Laptop GPU")
    assert spec.label == "RTX 4090" and laptop


@pytest.mark.parametrize("value, parsed", [
    ([12, 0], (12, 0)), ("8.6", (8, 6)), ("sm_120", (12, 0)), ("sm_86", (8, 6)),
    ({"major": 9, "minor": 0}, (9, 0)), ("twelve", None), ([12], None), (None, None),
])
def test_capability_formats(value, parsed):
    assert parse_capability(value) == parsed
