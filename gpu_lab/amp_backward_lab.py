#!/usr/bin/env python3
"""Optional GPU lab: AMP update semantics and resource evidence (the chapter's Step 5).

Three precision paths train the same model on the same batch with the same optimizer:

* ``fp32``     -- FP32 baseline (a disabled GradScaler, so its scale stays 1.0);
* ``amp``      -- the candidate: FP16 autocast with a dynamic GradScaler, or BF16 autocast
                  without a scaler;
* ``overflow`` -- FP16 autocast + GradScaler with ``inf`` injected into the loss: the update
                  must be skipped and the loss scale must back off.

Each normal path runs 1 warm-up and N measured updates. Attempts whose gradient is not
finite (or whose update did not change the probe parameter) are counted as backoff steps
and never enter the timing statistics. The result is one strict-JSON record,
``DIR/train-amp-backward_<LABEL>.json``; ``python -m autograder check-lab RECORD`` grades it.

Run modes:
  dry_run   (default) validate the configuration and print the plan; imports no torch.
  cpu_smoke the same measurement code on the CPU with a tiny random Qwen2 model built from a
            ``transformers`` config and a byte encoding of the prompt (no download).
  real_gpu  the chapter's experiment on CUDA with Qwen/Qwen2.5-0.5B.

--config-only qwen2.5-0.5b (or a config.json file), in cpu_smoke or real_gpu: the model is built
from the architecture alone, with random weights seeded by the workload's seed, and fed token ids
drawn from that seed: no download, no tokenizer. Step time and peak memory depend on the
architecture, the length and the dtype path, not on the weights' values, so such a record is an
architecture benchmark (its own evidence_level); it never earns the lab's credit.

Every message is printed in English or Chinese (--lang, AUTOGRADER_LANG, or pyproject.toml's
[tool.autograder] lang, as for the grader); see amp_lab_text.py.

Where the model comes from (real_gpu, or cpu_smoke with --model-path):
  * by default the Hugging Face Hub id Qwen/Qwen2.5-0.5B, at --model-revision, resolved to an
    immutable commit. huggingface_hub reads the HF_ENDPOINT environment variable, so a mirror
    works without any change here: HF_ENDPOINT=https://hf-mirror.com python gpu_lab/...;
  * --model-path DIR: a checkpoint folder downloaded elsewhere (e.g. `modelscope download
    --model Qwen/Qwen2.5-0.5B --local_dir DIR`, or `hf download ... --local-dir DIR`). Nothing is
    downloaded; the record's model block says so (resolution_source "local_path...", the folder
    and the sha256 of its weight files).

This script is standalone: it imports nothing from the rest of the repository (only its
neighbours in gpu_lab/: amp_lab_models.py where the model and batch come from, amp_lab_flops.py the
model FLOPs and MFU, amp_lab_layout.py the record's layout it shares with check-lab, amp_lab_text.py
its words in two languages, amp_lab_common.py the shared error) and writes only into its output folder.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import gc
import importlib.util
import json
import math
import os
import platform
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# The lab's own helpers live beside it (it imports nothing from the rest of the repository).
sys.path.insert(0, str(Path(__file__).resolve().parent))
import amp_lab_flops as flops_model  # noqa: E402
from amp_lab_text import resolve_language, set_language, text  # noqa: E402
from amp_lab_common import (  # noqa: E402
    EXIT_GATE_REJECTED, EXIT_OK, EXIT_OUT_OF_MEMORY, LabError, require_torch,
)
from amp_lab_layout import (  # noqa: E402,F401  (re-exported: tests and readers use lab.<name>)
    CHAPTER_WORKLOAD, CONFIG_ONLY_SOURCE, EVIDENCE_ARCHITECTURE, EVIDENCE_REAL, EVIDENCE_SMOKE, FALLBACK_SEQ_LEN,
    MODEL_ID, PROBE_SUFFIX, PROFILE_ID, QWEN_ARCHITECTURE, RECORD_PREFIX, RESULTS_RELATIVE_DIR, SCHEMA_VERSION,
    SEMANTIC_ID, UPDATE_SETTINGS,
)
from amp_lab_models import (  # noqa: E402,F401  (re-exported: tests and readers use lab.<name>)
    CONFIG_ONLY_BUILTIN, DEFAULT_REVISION, QWEN_CONFIG, TINY_QWEN2, ModelSource, build_causal_lm_batch,
    config_only_model_source, config_only_values, count_parameters, dtype_keyword, find_probe_parameter,
    local_commit, local_model_id, local_model_source, pretrained_model_source, read_local_config,
    seeded_token_rows, tiny_model_source, weight_files,
)

SMOKE_DEFAULTS = {"seq_len": 32, "repeats": 3}
MEDIAN_DEFINITION = (
    "middle value of the sorted measured step times; the mean of the two middle values "
    "when their count is even"
)
P95_DEFINITION = "nearest rank: the ceil(0.95 * n)-th smallest measured step time"
TIMED_REGION = (
    "one update attempt: autocast forward and loss, GradScaler scale + backward, unscale_, "
    "clip_grad_norm_, scaler.step, scaler.update; zero_grad and the probe copy are outside"
)
FLOPS_FORMULA = (  # flops_per_step_estimate, kept as before; MFU uses amp_lab_flops' model FLOPs
    "6 * parameter_count * tokens_per_step (forward 2 + backward 4 FLOPs per parameter "
    "per token; attention score FLOPs are not counted)"
)

# --------------------------------------------------------------------------- statistics

def median(values: list[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of an empty list")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def percentile_nearest_rank(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of an empty list")
    rank = max(1, math.ceil(percent / 100.0 * len(ordered)))
    return float(ordered[rank - 1])


def finite_or_none(value):
    """JSON has no NaN/Infinity: a non-finite measurement is recorded as null."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def strip_non_finite(obj):
    if isinstance(obj, float):
        return finite_or_none(obj)
    if isinstance(obj, dict):
        return {key: strip_non_finite(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strip_non_finite(value) for value in obj]
    return obj


# --------------------------------------------------------------------------- configuration

def build_workload(args: argparse.Namespace, mode: str) -> dict:
    workload = copy.deepcopy(CHAPTER_WORKLOAD)
    workload["candidate_dtype"] = args.candidate_dtype
    if mode == "cpu_smoke":
        workload.update(SMOKE_DEFAULTS)
    if args.seq_len is not None:
        workload["seq_len"] = args.seq_len
    if args.repeats is not None:
        workload["repeats"] = args.repeats
    if args.seq_len is not None and args.seq_len < 2:
        raise LabError(text("seq_len_too_small"))
    if args.repeats is not None and args.repeats < 1:
        raise LabError(text("repeats_too_small"))
    workload.update(UPDATE_SETTINGS)
    return workload


def resolve_run_label(args: argparse.Namespace, mode: str) -> str:
    # A smoke run must never overwrite a real record called "default".
    label = args.run_label
    if label is None:
        label = "cpu_smoke" if mode == "cpu_smoke" else "default"
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", label):
        raise LabError(text("unsafe_label", label=repr(label)))
    return label


def record_path_for(output_dir: Path, run_label: str) -> Path:
    return output_dir / f"{RECORD_PREFIX}_{run_label}.json"


# --------------------------------------------------------------------------- device boundary

def require_transformers() -> None:
    """Every model source builds through transformers, the lab's own requirement."""
    if importlib.util.find_spec("transformers") is None:
        raise LabError(text("transformers_missing"))


def select_tensor_device(mode: str):
    """Where tensors live. Tests that fake CUDA replace this to keep tensors on the CPU."""
    torch = require_torch()
    return torch.device("cuda" if mode == "real_gpu" else "cpu")


class CpuOps:
    """Timing with perf_counter; the CPU has no allocator peak statistics."""

    timing_method = "time.perf_counter"
    peak_memory_source = None
    on_cuda = False

    def __init__(self, device):
        self.device = device

    def start_timer(self):
        return time.perf_counter()

    def stop_timer(self, started) -> float:
        return (time.perf_counter() - started) * 1000.0

    def reset_peak_memory(self) -> None:
        pass

    def peak_allocated_mb(self):
        return None

    def release_cached_memory(self) -> None:
        gc.collect()

    def hardware_snapshot(self) -> dict:
        torch = require_torch()
        return {
            "device": "cpu",
            "name": cpu_name(),
            "total_memory_mb": host_memory_mb(),
            "capability": None,
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cpu_threads": torch.get_num_threads(),
        }


class CudaOps:
    """CUDA events bracket the update; elapsed_time is read only after a synchronize."""

    timing_method = "torch.cuda.Event.elapsed_time"
    peak_memory_source = "torch.cuda.max_memory_allocated (reset per path)"
    on_cuda = True

    def __init__(self, device):
        self.device = device

    def start_timer(self):
        torch = require_torch()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        return start, end

    def stop_timer(self, events) -> float:
        torch = require_torch()
        start, end = events
        end.record()
        torch.cuda.synchronize()
        return float(start.elapsed_time(end))

    def reset_peak_memory(self) -> None:
        require_torch().cuda.reset_peak_memory_stats(self.device)

    def peak_allocated_mb(self) -> float:
        return require_torch().cuda.max_memory_allocated(self.device) / 2**20

    def release_cached_memory(self) -> None:
        gc.collect()
        require_torch().cuda.empty_cache()

    def hardware_snapshot(self) -> dict:
        torch = require_torch()
        props = torch.cuda.get_device_properties(self.device)
        major, minor = torch.cuda.get_device_capability(self.device)
        return {
            "device": "cuda",
            "name": torch.cuda.get_device_name(self.device),
            "total_memory_mb": props.total_memory / 2**20,
            "capability": [int(major), int(minor)],
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
        }


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"


def host_memory_mb():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    except (AttributeError, ValueError, OSError):
        return None


def ensure_cuda_ready(candidate_dtype: str) -> None:
    torch = require_torch()
    if not torch.cuda.is_available():
        raise LabError(text("cuda_missing", torch=torch.__version__, cuda=torch.version.cuda))
    if candidate_dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        raise LabError(text("no_bf16"))


def is_out_of_memory(exc: BaseException) -> bool:
    torch = require_torch()
    oom_type = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    if isinstance(exc, oom_type):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def out_of_memory_message(path_label: str, seq_len: int) -> str:
    key = "oom_fallback" if seq_len > FALLBACK_SEQ_LEN else "oom_too_small"
    return text(key, path=path_label, seq_len=seq_len, fallback=FALLBACK_SEQ_LEN)


# --------------------------------------------------------------------------- one precision path

@dataclass
class PathSpec:
    label: str  # 'fp32' | 'amp' | 'overflow'
    amp_dtype: str | None  # None (FP32), 'float16' or 'bfloat16'
    inject_overflow: bool = False


@dataclass
class Attempt:
    elapsed_ms: float
    grad_norm: float | None
    grad_is_finite: bool
    parameter_delta_max: float | None
    applied: bool
    scale_before: float
    scale_after: float


@dataclass
class PathTally:
    attempted: int = 0
    successful: int = 0
    backoffs: int = 0
    times_ms: list = field(default_factory=list)
    applied_flags: list = field(default_factory=list)
    last: Attempt | None = None


def torch_dtype(name: str | None):
    torch = require_torch()
    return {None: torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]


def attempt_update(model, batch, optimizer, scaler, probe, ops, spec, max_grad_norm) -> Attempt:
    torch = require_torch()
    optimizer.zero_grad(set_to_none=True)
    before = probe.detach().clone()
    autocast = (
        torch.autocast(ops.device.type, dtype=torch_dtype(spec.amp_dtype))
        if spec.amp_dtype
        else contextlib.nullcontext()
    )
    timer = ops.start_timer()
    with autocast:
        loss = model(**batch, use_cache=False).loss
        if spec.inject_overflow:
            loss = loss * torch.tensor(float("inf"), device=loss.device)
    scale_before = float(scaler.get_scale())
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    grad_is_finite = bool(torch.isfinite(norm).item())
    scaler.step(optimizer)  # skips optimizer.step when unscale_ found inf/NaN
    scaler.update()
    scale_after = float(scaler.get_scale())
    elapsed_ms = ops.stop_timer(timer)
    delta = finite_or_none((probe.detach() - before).abs().max())
    return Attempt(
        elapsed_ms=elapsed_ms,
        grad_norm=float(norm) if grad_is_finite else None,
        grad_is_finite=grad_is_finite,
        parameter_delta_max=delta,
        applied=delta is not None and delta > 0.0,
        scale_before=scale_before,
        scale_after=scale_after,
    )


def run_attempts(step: Callable[[], Attempt], workload: dict, inject_overflow: bool) -> PathTally:
    """The chapter's loop: failed attempts are backoffs; warm-up successes are not timed."""
    tally = PathTally()
    required = workload["warmup"] + workload["repeats"]
    max_attempts = 1 if inject_overflow else required + workload["max_scale_backoff_steps"]
    for _ in range(max_attempts):
        tally.attempted += 1
        attempt = tally.last = step()
        if inject_overflow:
            # One attempt only; its backoff shows in scale_before -> scale_after.
            tally.applied_flags.append(attempt.applied)
            break
        if not attempt.grad_is_finite or not attempt.applied:
            tally.backoffs += 1
            continue
        tally.successful += 1
        if tally.successful > workload["warmup"]:
            tally.times_ms.append(attempt.elapsed_ms)
            tally.applied_flags.append(True)
        if len(tally.times_ms) == workload["repeats"]:
            break
    return tally


def run_precision_path(spec: PathSpec, source: ModelSource, batch: dict, workload: dict, ops) -> dict:
    torch = require_torch()
    torch.manual_seed(workload["seed"])  # identical initialisation for every path
    model = source.build_model(ops.device)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=workload["learning_rate"])
    scaler = torch.amp.GradScaler(
        ops.device.type,
        enabled=spec.amp_dtype == "float16",
        init_scale=workload["initial_scale"],
        backoff_factor=workload["backoff_factor"],
        growth_interval=workload["growth_interval"],
    )
    probe_name, probe = find_probe_parameter(model)
    scale_initial = float(scaler.get_scale())
    ops.reset_peak_memory()  # after loading: the peak includes the weights, as in the chapter

    def step():
        return attempt_update(model, batch, optimizer, scaler, probe, ops, spec, workload["max_grad_norm"])

    tally = run_attempts(step, workload, spec.inject_overflow)
    peak_mb = ops.peak_allocated_mb()
    result = summarise_path(spec, tally, workload, probe_name, scale_initial, peak_mb)
    del optimizer, scaler, model, probe
    ops.release_cached_memory()
    return result


def summarise_path(spec, tally: PathTally, workload, probe_name, scale_initial, peak_mb) -> dict:
    last = tally.last
    completed = spec.inject_overflow or len(tally.times_ms) == workload["repeats"]
    times = [float(value) for value in tally.times_ms]
    return {
        "label": spec.label,
        "dtype": "torch." + (spec.amp_dtype or "float32"),
        "status": "measured" if completed else "failed_to_stabilize",
        "step_median_ms": median(times) if times else None,
        "step_p95_ms": percentile_nearest_rank(times, 95) if times else None,
        "peak_allocated_mb": finite_or_none(peak_mb),
        "grad_norm": finite_or_none(last.grad_norm),
        "grad_is_finite": last.grad_is_finite,
        "probe_parameter": probe_name,
        "parameter_delta_max": last.parameter_delta_max,
        "scale_initial": scale_initial,
        "scale_before": last.scale_before,
        "scale_after": last.scale_after,
        "scale_backoff_steps": tally.backoffs,
        "attempted_steps": tally.attempted,
        "successful_steps": tally.successful,
        "step_applied": bool(tally.applied_flags) and all(tally.applied_flags),
        "step_times_ms": times,
    }


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


# --------------------------------------------------------------------------- gate and record

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


def write_record(record: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, ensure_ascii=False, indent=2, allow_nan=False)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text + "\n", encoding="utf-8")
    temporary.replace(path)  # never leave a half-written record behind
    return path


# --------------------------------------------------------------------------- run modes

def run_experiment(args, mode: str, workload: dict, run_label: str, record_path: Path) -> int:
    require_torch()
    require_transformers()
    if not args.overwrite and record_is_protected(record_path, mode):
        raise LabError(text("record_exists", path=record_path))
    if mode == "real_gpu":
        ensure_cuda_ready(workload["candidate_dtype"])
        ops = CudaOps(select_tensor_device(mode))
        evidence = EVIDENCE_ARCHITECTURE if args.config_only else EVIDENCE_REAL
    else:
        ops = CpuOps(select_tensor_device(mode))
        evidence = EVIDENCE_SMOKE
    if args.config_only is not None:
        source = config_only_model_source(workload, args.config_only)
        if mode == "cpu_smoke" and source.info["id"] == MODEL_ID:
            print(text("full_model_on_cpu"), flush=True)
    elif args.model_path is not None:
        source = local_model_source(workload, args.model_path)
    elif mode == "real_gpu":
        source = pretrained_model_source(workload, requested_revision(args), args.local_files_only)
    else:
        source = tiny_model_source(workload)
    batch = build_causal_lm_batch(source.token_rows, workload["batch_size"], workload["seq_len"], ops.device)
    paths = {
        "baseline": PathSpec("fp32", None),
        "candidate": PathSpec("amp", workload["candidate_dtype"]),
        "overflow": PathSpec("overflow", "float16", inject_overflow=True),
    }
    metrics = {}
    for key, spec in paths.items():
        print(text("running_path", path=spec.label), flush=True)
        try:
            metrics[key] = run_precision_path(spec, source, batch, workload, ops)
        except LabError:
            raise
        except Exception as exc:
            if is_out_of_memory(exc):
                raise LabError(out_of_memory_message(spec.label, workload["seq_len"]), EXIT_OUT_OF_MEMORY) from None
            raise
    record = build_record(run_label, mode, source, workload, ops.hardware_snapshot(), metrics, ops, evidence)
    write_record(record, record_path)
    for line in summary_lines(record):
        print(line)
    if source.info["resolution_source"] == CONFIG_ONLY_SOURCE:
        print(text("config_only_notice"))
    print(text("record_written", path=record_path))
    return EXIT_OK if record["decision"] == "accept" else EXIT_GATE_REJECTED


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


def requested_revision(args) -> str:
    return args.model_revision or DEFAULT_REVISION


def check_model_options(args) -> None:
    """A local folder has exactly one version: --model-revision belongs to the hub id;
    --config-only takes neither."""
    if args.config_only is not None:
        for option, given in (("--model-path", args.model_path is not None),
                              ("--model-revision", args.model_revision is not None),
                              ("--local-files-only", args.local_files_only)):
            if given:
                raise LabError(text("config_only_conflict", option=option))
        config_only_values(args.config_only)  # fail early, before anything is loaded or written
        return
    if args.model_path is None:
        return
    if args.model_revision is not None:
        raise LabError(text("revision_with_path"))
    read_local_config(args.model_path)  # fail early, before anything is loaded or written


def print_plan(args, workload: dict, record_path: Path) -> None:
    scaler = (
        text("plan_scaler_fp16", init=f"{workload['initial_scale']:g}", backoff=workload["backoff_factor"],
             interval=workload["growth_interval"])
        if workload["candidate_dtype"] == "float16"
        else text("plan_scaler_bf16")
    )
    installed = {name: text("installed" if importlib.util.find_spec(name) else "not_installed")
                 for name in ("torch", "transformers")}
    if args.config_only is not None:
        values, origin = config_only_values(args.config_only)
        matches = all(values.get(key) == value for key, value in QWEN_ARCHITECTURE.items() if key != "model_type")
        model_lines = [text("plan_model_config", model=MODEL_ID if matches else args.config_only,
                            source=origin, seed=workload["seed"])]
    elif args.model_path is not None:
        config = read_local_config(args.model_path)
        weights = ", ".join(item.name for item in weight_files(args.model_path))
        model_lines = [text("plan_model_local", path=args.model_path,
                            model=local_model_id(config, args.model_path), weights=weights)]
    else:
        endpoint = os.environ.get("HF_ENDPOINT") or text("plan_hub_default")
        model_lines = [
            text("plan_model_hub", model=MODEL_ID, revision=requested_revision(args),
                 offline=text("yes" if args.local_files_only else "no")),
            text("plan_hub", endpoint=endpoint),
        ]
    lines = [
        text("plan_title"),
        *model_lines,
        text("plan_batch", batch=workload["batch_size"], seq_len=workload["seq_len"], seed=workload["seed"]),
        text("plan_updates", lr=f"{workload['learning_rate']:g}", clip=workload["max_grad_norm"],
             warmup=workload["warmup"], repeats=workload["repeats"],
             backoffs=workload["max_scale_backoff_steps"]),
        text("plan_paths", dtype=workload["candidate_dtype"], scaler=scaler),
        text("plan_gate"),
        text("plan_record", path=record_path, exists=text("yes" if record_path.exists() else "no")),
        text("plan_packages", torch=installed["torch"], transformers=installed["transformers"]),
        text("plan_next"),
    ]
    print("\n".join(lines))


# --------------------------------------------------------------------------- --show

def format_ms(value) -> str:
    return text("not_completed") if value is None else f"{value:.2f} ms"


def format_mb(value) -> str:
    return "n/a MB" if value is None else f"{value:.1f} MB"


def summary_lines(record: dict) -> list[str]:
    """The chapter's 5.3 read-out, plus memory change, throughput and MFU."""
    base, cand, over = (record["metrics"][key] for key in ("baseline", "candidate", "overflow"))
    delta = cand["parameter_delta_max"]
    lines = [
        text("summary_fp32", median=format_ms(base["step_median_ms"]), p95=format_ms(base["step_p95_ms"]),
             peak=format_mb(base["peak_allocated_mb"]), applied=base["step_applied"]),
        text("summary_amp", median=format_ms(cand["step_median_ms"]), p95=format_ms(cand["step_p95_ms"]),
             peak=format_mb(cand["peak_allocated_mb"]), applied=cand["step_applied"],
             backoffs=cand["scale_backoff_steps"]),
        text("summary_overflow", applied=over["step_applied"], before=over["scale_before"],
             after=over["scale_after"]),
        text("summary_probe", probe=cand["probe_parameter"], delta="n/a" if delta is None else format(delta, ".3e")),
        text("summary_decision", decision=record["decision"], evidence=record["evidence_level"]),
    ]
    if base["peak_allocated_mb"] and cand["peak_allocated_mb"] is not None:
        change = (cand["peak_allocated_mb"] - base["peak_allocated_mb"]) / base["peak_allocated_mb"]
        lines.append(text("summary_memory", change=f"{change:+.1%}"))
    throughput = [
        f"{name} {path['tokens_per_second']:.0f} tok/s"
        + (f" ({path['achieved_tflops']:.3g} TFLOP/s)" if path.get("achieved_tflops") is not None else "")
        for name, path in (("FP32", base), ("AMP", cand))
        if path.get("tokens_per_second") is not None
    ]
    if throughput:
        lines.append(text("summary_throughput", items=", ".join(throughput)))
    mfu = [f"{name} {path['mfu']:.2%} ({path['model_tflops']:.3g} / {path['peak_tflops']:g} TFLOP/s"
           f" {path['peak_kind']})"
           for name, path in (("FP32", base), ("AMP", cand)) if path.get("mfu") is not None]
    if mfu:
        gpu = (record.get("measurement") or {}).get("peak_gpu") or record["hardware"].get("name")
        lines.append(text("summary_mfu", gpu=gpu, items=", ".join(mfu)))
    return lines


def load_record_for_show(path: Path) -> dict:
    if not path.is_file():
        raise LabError(text("record_not_found", path=path))
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        for key in ("baseline", "candidate", "overflow"):
            record["metrics"][key]["step_median_ms"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabError(text("record_not_json", path=path, error=exc)) from None
    except (KeyError, TypeError):
        raise LabError(text("record_not_lab", path=path)) from None
    return record


def render_chart(record: dict, png_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base, cand = record["metrics"]["baseline"], record["metrics"]["candidate"]
    names = ["FP32", f"AMP ({record['workload'].get('candidate_dtype', '?')})"]
    fig, (time_ax, memory_ax) = plt.subplots(1, 2, figsize=(10, 4.2))

    samples = [base.get("step_times_ms") or [], cand.get("step_times_ms") or []]
    if all(samples):
        time_ax.boxplot(samples, whis=(0, 100), showfliers=False)
        for position, (values, path) in enumerate(zip(samples, (base, cand)), start=1):
            offsets = [position + 0.06 * ((index % 5) - 2) for index in range(len(values))]
            time_ax.scatter(offsets, values, s=10, alpha=0.6, color="tab:gray", zorder=3)
            time_ax.scatter([position + 0.3], [path["step_p95_ms"]], marker="<", color="tab:red",
                            zorder=4, label="P95 (nearest rank)" if position == 1 else None)
        time_ax.set_xticks([1, 2], names)
        time_ax.legend(loc="best")  # wherever it hides the fewest points
        time_ax.set_title("step time per measured update\n(box: quartiles, whiskers: min-max)")
    else:  # records without per-step times (e.g. the chapter's) still show median and P95
        xs = range(len(names))
        medians = [path["step_median_ms"] or 0.0 for path in (base, cand)]
        p95s = [path["step_p95_ms"] or 0.0 for path in (base, cand)]
        time_ax.bar([x - 0.2 for x in xs], medians, width=0.4, label="median")
        time_ax.bar([x + 0.2 for x in xs], p95s, width=0.4, label="P95")
        time_ax.set_xticks(list(xs), names)
        time_ax.legend(loc="lower center")
        time_ax.set_title("step time (median and P95)")
    time_ax.set_ylabel("ms")

    peaks = [base["peak_allocated_mb"], cand["peak_allocated_mb"]]
    if None in peaks:
        memory_ax.text(0.5, 0.5, "peak memory not measured\n(no CUDA allocator on this run)",
                       ha="center", va="center", transform=memory_ax.transAxes)
        memory_ax.set_xticks([])
        memory_ax.set_yticks([])
    else:
        bars = memory_ax.bar(names, peaks, color=["tab:blue", "tab:orange"])
        memory_ax.bar_label(bars, fmt="%.0f MB")
        memory_ax.margins(y=0.1)  # room above the tallest bar for its label
        memory_ax.set_ylabel("MiB (max_memory_allocated)")
    memory_ax.set_title("peak allocated memory")

    hardware = record.get("hardware", {})
    fig.suptitle(
        f"{record.get('run_label')} on {hardware.get('name')} ({hardware.get('device')}) -- "
        f"decision {record.get('decision')}"
    )
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)
    plt.close(fig)


def show_record(path: Path) -> int:
    record = load_record_for_show(path)
    try:
        lines = summary_lines(record)
    except (KeyError, TypeError) as exc:
        raise LabError(text("record_incomplete", path=path, key=exc)) from None
    print("\n".join(lines))
    if importlib.util.find_spec("matplotlib") is None:
        print(text("chart_skipped"))
        return EXIT_OK
    png_path = path.with_suffix(".png")
    try:
        render_chart(record, png_path)
    except OSError as exc:
        raise LabError(text("chart_unwritable", path=png_path, error=exc)) from None
    print(text("chart_written", path=png_path))
    return EXIT_OK


# --------------------------------------------------------------------------- command line

def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python gpu_lab/amp_backward_lab.py",
        description="Chapter Step 5: FP32 vs AMP update semantics, step time and peak memory.",
        epilog="The model: Qwen/Qwen2.5-0.5B from the Hugging Face Hub (huggingface_hub honours"
               " HF_ENDPOINT, e.g. https://hf-mirror.com), or --model-path DIR with a checkpoint"
               " downloaded elsewhere (modelscope download --model Qwen/Qwen2.5-0.5B --local_dir DIR).",
    )
    parser.add_argument("--run-mode", choices=("dry_run", "cpu_smoke", "real_gpu"), default="dry_run")
    parser.add_argument("--run-label", default=None,
                        help="record name part (default: 'default'; 'cpu_smoke' for cpu_smoke)")
    parser.add_argument("--candidate-dtype", choices=("float16", "bfloat16"), default="float16")
    parser.add_argument("--output-dir", type=Path, default=Path(RESULTS_RELATIVE_DIR),
                        help=f"record folder (default: {RESULTS_RELATIVE_DIR}, relative to the cwd)")
    parser.add_argument("--seq-len", type=int, default=None,
                        help=f"tokens per sequence (default 128; {SMOKE_DEFAULTS['seq_len']} in cpu_smoke;"
                             f" {FALLBACK_SEQ_LEN} is the chapter's low-memory fallback)")
    parser.add_argument("--repeats", type=int, default=None,
                        help=f"measured updates per path (default 20; {SMOKE_DEFAULTS['repeats']} in cpu_smoke)")
    parser.add_argument("--model-revision", default=None,
                        help=f"branch, tag or commit of {MODEL_ID} on the hub (default {DEFAULT_REVISION};"
                             " recorded with its resolved commit)")
    parser.add_argument("--local-files-only", action="store_true",
                        help="offline re-run: load the model from the Hugging Face cache only")
    parser.add_argument("--model-path", type=lambda value: Path(value).expanduser(), default=None, metavar="DIR",
                        help="load the checkpoint from DIR (downloaded elsewhere, e.g. from ModelScope)"
                             " instead of the hub; also works with cpu_smoke. For a hub mirror set"
                             " HF_ENDPOINT instead, e.g. HF_ENDPOINT=https://hf-mirror.com")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing record with the same label (by default a real_gpu"
                             " record is never replaced, and cpu_smoke replaces only smoke records)")
    parser.add_argument("--config-only", metavar="NAME_OR_FILE", default=None,
                        help=f"build the model from an architecture alone, with random weights and"
                             f" seeded token ids (no download, no tokenizer): {CONFIG_ONLY_BUILTIN}"
                             f" for {MODEL_ID}'s published config, or a Qwen2 config.json file. The"
                             f" record is an architecture benchmark ({EVIDENCE_ARCHITECTURE} on CUDA)"
                             " and earns no credit")
    parser.add_argument("--lang", choices=("zh", "en"), default=None,
                        help="language of the messages (default: AUTOGRADER_LANG, else pyproject.toml's"
                             " [tool.autograder] lang, else English)")
    parser.add_argument("--show", metavar="RECORD", type=Path, default=None,
                        help="print the summary of RECORD and write RECORD's stem .png next to it")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    set_language(resolve_language(args.lang))
    try:
        if args.show is not None:
            return show_record(args.show)
        mode = args.run_mode
        workload = build_workload(args, mode)
        run_label = resolve_run_label(args, mode)
        record_path = record_path_for(args.output_dir, run_label)
        check_model_options(args)
        if mode == "dry_run":
            print_plan(args, workload, record_path)
            return EXIT_OK
        return run_experiment(args, mode, workload, run_label, record_path)
    except LabError as exc:
        print(text("error_prefix", message=exc), file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
