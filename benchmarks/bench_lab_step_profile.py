#!/usr/bin/env python3
"""Where one training step of the GPU lab spends its time: the device's kernels or the host.

The lab times a whole update (autocast forward, scaled backward, unscale_, clip_grad_norm_, step,
update) with CUDA events. At the chapter's workload (batch 1, 128 tokens) that is a few
hundred GFLOPs spread over thousands of small kernels, so the step can be bound by the Python
host launching them rather than by the GPU running them; then a faster GPU does not give a
faster step. This script measures that for the three precision paths of the lab, in one run:

* wall ms per step (the lab's own ``attempt_update`` and timer, paths interleaved round by round
  so that a drifting machine affects all three alike);
* host ms per step spent before the first wait (launching: ``time.perf_counter`` around the
  forward and backward, which return as soon as their kernels are queued);
* GPU-busy ms per step and kernels per step (``torch.profiler``: the summed duration of device
  events over a few profiled steps);

and prints GPU-busy / wall and each AMP path's wall ratio to FP32, for the chapter's 128 tokens
and for longer sequences (``--seq-lens``), where the work per kernel grows until the GPU, not the
host, sets the pace. It builds Qwen2.5-0.5B's architecture with random weights (the lab's
``--config-only``), so it needs no download.

    python benchmarks/bench_lab_step_profile.py                 # CUDA, the chapter's workload
    python benchmarks/bench_lab_step_profile.py --rehearse      # CPU, tiny model, seconds
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gpu_lab"))  # the lab's own modules
import amp_lab_common as lab_common  # noqa: E402
import amp_lab_device as lab_device  # noqa: E402
import amp_lab_layout as lab_layout  # noqa: E402
import amp_lab_measure as lab_measure  # noqa: E402
import amp_lab_models as lab_models  # noqa: E402

PATHS = (("fp32", None), ("fp16", "float16"), ("bf16", "bfloat16"))
TINY = {"vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "tie_word_embeddings": True}


def device_time_us(event) -> float:
    # A device event (kernel, copy, set) spans its own time range on the GPU.
    return float(event.time_range.elapsed_us())


def build_paths(torch, source, device, workload):
    paths = {}
    for name, dtype in PATHS:
        torch.manual_seed(workload["seed"])
        model = source.build_model(device)
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=workload["learning_rate"])
        scaler = torch.amp.GradScaler(device.type, enabled=dtype == "float16",
                                      init_scale=workload["initial_scale"],
                                      growth_interval=workload["growth_interval"])
        spec = lab_measure.PathSpec(label=name, amp_dtype=dtype, inject_overflow=False)
        paths[name] = (model, optimizer, scaler, lab_models.find_probe_parameter(model)[1], spec)
    return paths


def timed_step(torch, ops, batch, path, max_norm):
    """One lab step; returns (wall ms, host ms until the backward was queued)."""
    model, optimizer, scaler, probe, spec = path
    launched = {}
    original_backward = torch.Tensor.backward

    def backward(tensor, *args, **kwargs):
        original_backward(tensor, *args, **kwargs)
        launched["t"] = time.perf_counter()

    started = time.perf_counter()
    torch.Tensor.backward = backward
    try:
        attempt = lab_measure.attempt_update(model, batch, optimizer, scaler, probe, ops, spec, max_norm)
    finally:
        torch.Tensor.backward = original_backward
    return attempt.elapsed_ms, (launched["t"] - started) * 1000.0


def profile_steps(torch, ops, batch, path, max_norm, steps, on_cuda):
    activities = [torch.profiler.ProfilerActivity.CPU]
    if on_cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(steps):
            timed_step(torch, ops, batch, path, max_norm)
    device_events = [e for e in prof.events()
                     if str(getattr(e, "device_type", "")).endswith("CUDA")]
    busy_ms = sum(device_time_us(e) for e in device_events) / 1000.0
    return busy_ms / steps, len(device_events) / steps


def measure_length(torch, ops, batch, paths, max_norm, args, on_cuda, seq_len) -> None:
    for path in paths.values():  # warm-up: first kernels, cuBLAS heuristics, allocator
        timed_step(torch, ops, batch, path, max_norm)
        timed_step(torch, ops, batch, path, max_norm)
    names = list(paths)
    walls = {name: [] for name in names}
    hosts = {name: [] for name in names}
    for round_index in range(args.rounds):
        order = names[round_index % 3:] + names[:round_index % 3]
        for name in order:
            wall, host = timed_step(torch, ops, batch, paths[name], max_norm)
            walls[name].append(wall)
            hosts[name].append(host)
    print(f"\nseq_len {seq_len}")
    print(f"{'path':<6}{'wall ms':>10}{'host ms to backward':>22}{'GPU-busy ms':>14}"
          f"{'kernels':>10}{'busy/wall':>11}{'wall/fp32':>11}")
    fp32_wall = statistics.median(walls["fp32"])
    for name in names:
        wall = statistics.median(walls[name])
        host = statistics.median(hosts[name])
        busy, kernels = profile_steps(torch, ops, batch, paths[name], max_norm, args.profiled_steps, on_cuda)
        # On a CPU rehearsal there are no device events: those columns say n/a, not 0.
        busy_text, kernel_text, share = ((f"{busy:.2f}", f"{kernels:.0f}", f"{busy / wall:.2f}")
                                         if on_cuda else ("n/a", "n/a", "n/a"))
        print(f"{name:<6}{wall:>10.2f}{host:>22.2f}{busy_text:>14}{kernel_text:>10}{share:>11}"
              f"{wall / fp32_wall:>11.2f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rehearse", action="store_true", help="CPU, tiny model")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--profiled-steps", type=int, default=3)
    parser.add_argument("--seq-lens", type=int, nargs="+", default=[128, 1024])
    args = parser.parse_args(argv)
    torch = lab_common.require_torch()
    lab_device.require_transformers()
    on_cuda = not args.rehearse
    if on_cuda and not torch.cuda.is_available():
        print("no CUDA device: use --rehearse on a CPU", file=sys.stderr)
        return 2
    device = torch.device("cuda" if on_cuda else "cpu")
    ops = lab_device.CudaOps(device) if on_cuda else lab_device.CpuOps(device)
    workload = dict(lab_layout.CHAPTER_WORKLOAD, **lab_layout.UPDATE_SETTINGS)
    if args.rehearse:
        with tempfile.TemporaryDirectory() as scratch:
            config = Path(scratch) / "tiny-qwen2.json"
            config.write_text(json.dumps(TINY), encoding="utf-8")
            source = lab_models.config_only_model_source(workload, str(config))
    else:
        source = lab_models.config_only_model_source(workload, lab_models.CONFIG_ONLY_BUILTIN)
    paths = build_paths(torch, source, device, workload)
    print(f"device {ops.hardware_snapshot().get('name')} | torch {torch.__version__} | "
          f"batch {workload['batch_size']} | {args.rounds} interleaved rounds per length")
    for seq_len in ([16] if args.rehearse else args.seq_lens):
        vocab_size = source.info["config"].get("vocab_size", lab_layout.QWEN_ARCHITECTURE["vocab_size"])
        rows = lab_models.seeded_token_rows(vocab_size, workload["batch_size"], seq_len, workload["seed"])
        batch = lab_models.build_causal_lm_batch(rows, workload["batch_size"], seq_len, device)
        measure_length(torch, ops, batch, paths, workload["max_grad_norm"], args, on_cuda, seq_len)
    return 0


if __name__ == "__main__":
    sys.exit(main())
