"""The lab's device boundary: where tensors live, how an update is timed (perf_counter on the
CPU, CUDA events on a GPU), the allocator's peak, the hardware block of the record, and the
device's failures (no CUDA, no BF16, out of memory) as one clear line each.

Tests that fake CUDA replace :func:`select_tensor_device` here (the run modes call it through
this module), so tensors stay on the CPU while everything else takes the CUDA path."""
from __future__ import annotations

import gc
import importlib.util
import os
import platform
import time
from pathlib import Path

from amp_lab_common import LabError, require_torch
from amp_lab_layout import FALLBACK_SEQ_LEN
from amp_lab_text import text


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
