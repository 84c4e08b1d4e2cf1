"""Model FLOPs per training step and model FLOPs utilisation (MFU), for the lab's records.

FLOPs of one training step (forward + backward), PaLM's accounting (Chowdhery et al. 2022, app. B):

    model_flops_per_step = 6 * N * T  +  12 * L * H * S * T

N the parameters (a tied embedding / lm_head counted once: the lm_head matmul is the work),
T = batch_size * seq_len tokens per step, L layers, H = attention width (heads * head_dim),
S = seq_len. 6 N T: 2 FLOPs per parameter per token forward, 4 backward. 12 L H S T: the
score matrix Q K^T and the weighted sum A V, 2 * 2 * S * H FLOPs per token per layer forward, three
times that with the backward; counted over the full S x S scores (causal masking's skipped half
included, as PaLM counts), so the MFU compares with published figures.

MFU = model_flops_per_step / step time / peak, the peak being the named GPU's dense vendor peak
for the math the path runs: FP16 / BF16 autocast on tensor cores; the FP32 path on the FP32 units
when ``torch.get_float32_matmul_precision()`` is 'highest' (PyTorch's default), on TF32 tensor
cores otherwise.

Why the lab carries its own peaks: it is standalone (it runs on a GPU machine without the grader)
and its record should say its MFU by itself. The figures are those of the checker's table
(``autograder/assignment/lab/gpu_specs.py``; a project test holds every entry here equal to it), and the
checker re-derives each MFU from it, so a record cannot carry a peak of its own invention.
GeForce "half" figures are the FP16-accumulate peak; autocast accumulates in FP32, which those
cards run at half that rate, so a GeForce MFU reads up to 2x low.
"""
from __future__ import annotations

import re

from amp_lab_layout import PEAK_KINDS

# (label, pattern, fp32, tf32, half) dense TFLOP/s. Most specific pattern first.
PEAKS = (
    ("GH200", r"\bGH200\b", 67.0, 494.5, 989.5),
    ("H200", r"\bH200\b", 67.0, 494.5, 989.5),
    ("H100 PCIe", r"\bH100\b.*\bPCIe\b", 51.0, 378.0, 756.5),
    ("H100 NVL", r"\bH100\b.*\bNVL\b", 60.0, 417.5, 835.5),
    ("H100 SXM", r"\bH100\b", 67.0, 494.5, 989.5),
    ("A100", r"\bA100\b", 19.5, 156.0, 312.0),
    ("L4", r"\bL4\b", 30.3, 60.0, 121.0),
    ("T4", r"\bT4\b", 8.1, 0.0, 65.0),
    ("RTX 5090", r"\bRTX 5090\b", 104.8, 104.8, 419.0),
    ("RTX 5070 Ti", r"\bRTX 5070 Ti\b", 43.9, 43.9, 175.8),
    ("RTX 4090", r"\bRTX 4090\b", 82.6, 82.6, 330.3),
)
FP32_KIND, TF32_KIND, HALF_KIND = PEAK_KINDS  # what each path's peak is, in the record
MODEL_FLOPS_FORMULA = (
    "6 * parameter_count * tokens_per_step + 12 * num_layers * attention_width * seq_len * "
    "tokens_per_step (PaLM appendix B; attention over the full seq_len x seq_len scores)"
)
MFU_DEFINITION = "model_tflops / peak_tflops, model_tflops = model_flops_per_step * 1000 / step_median_ms / 1e12"
PEAK_SOURCE = "vendor dense peak for the path's math (gpu_lab/amp_lab_flops.py PEAKS = check-lab's table)"


def attention_flops_per_step(num_layers: int, attention_width: int, batch_size: int, seq_len: int) -> int:
    return 12 * num_layers * attention_width * seq_len * batch_size * seq_len


def architecture_of(config) -> tuple[int | None, int | None]:
    """(layers, attention width) of a transformers config; (None, None) when it does not say."""
    layers = getattr(config, "num_hidden_layers", None)
    heads = getattr(config, "num_attention_heads", None)
    head_dim = getattr(config, "head_dim", None)
    hidden = getattr(config, "hidden_size", None)
    if not head_dim and heads and hidden:
        head_dim = hidden // heads
    if not (isinstance(layers, int) and isinstance(heads, int) and isinstance(head_dim, int)):
        return None, None
    return layers, heads * head_dim


def find_peak(device_name: str):
    """(label, fp32, tf32, half) of the GPU named ``device_name``; None when not in the table.
    A laptop part is not its desktop namesake: no peak for it."""
    if re.search(r"\b(Laptop|Mobile|Max-Q)\b", device_name, re.IGNORECASE):
        return None
    for label, pattern, fp32, tf32, half in PEAKS:
        if re.search(pattern, device_name, re.IGNORECASE):
            return label, fp32, tf32, half
    return None


def path_peak(peak, amp_dtype: str | None, fp32_matmul_precision: str):
    """(peak TFLOP/s, kind) for one path on the GPU ``peak`` (from find_peak); (None, None) if unknown."""
    if peak is None:
        return None, None
    _, fp32, tf32, half = peak
    if amp_dtype in ("float16", "bfloat16"):
        return (half, HALF_KIND) if half else (None, None)
    if fp32_matmul_precision != "highest" and tf32:
        return tf32, TF32_KIND
    return fp32, FP32_KIND


def add_mfu(result: dict, model_flops, peak_tflops, peak_kind) -> None:
    """model_tflops, peak_tflops, peak_kind and mfu of one path (None where not measured)."""
    median_ms = result.get("step_median_ms")
    timed = median_ms is not None and median_ms > 0 and bool(model_flops)
    result["model_tflops"] = model_flops * 1000.0 / median_ms / 1e12 if timed else None
    result["peak_tflops"] = peak_tflops if timed else None
    result["peak_kind"] = peak_kind if timed else None
    result["mfu"] = result["model_tflops"] / peak_tflops if timed and peak_tflops else None
