"""The GPU lab (gpu_lab/) loaded in the test process, for the lab's test files: its
command line and its modules, the strict reader of its records, and CUDA faked at its
boundary (events, synchronize, allocator statistics, device properties)."""
import importlib.util
import sys
import time
import types
from pathlib import Path

from support.helpers import ROOT

LAB_SCRIPT = ROOT / "gpu_lab" / "amp_backward_lab.py"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.assignment.lab import check as lab_check  # noqa: E402,F401 - for the lab's test files

MIB = 2**20


def load_lab():
    spec = importlib.util.spec_from_file_location("amp_backward_lab", LAB_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


lab = load_lab()  # the command line; it puts gpu_lab/ on the path for its modules, used below by owner
import amp_lab_common as lab_common  # noqa: E402,F401 - for the lab's test files
import amp_lab_config as lab_config  # noqa: E402,F401 - for the lab's test files
import amp_lab_device as lab_device  # noqa: E402,F401 - for the lab's test files
import amp_lab_flops as lab_flops  # noqa: E402,F401 - for the lab's test files
import amp_lab_layout as lab_layout  # noqa: E402,F401 - for the lab's test files
import amp_lab_measure as lab_measure  # noqa: E402,F401 - for the lab's test files
import amp_lab_models as lab_models  # noqa: E402,F401 - for the lab's test files
import amp_lab_record as lab_record  # noqa: E402,F401 - for the lab's test files
import amp_lab_stats as lab_stats  # noqa: E402,F401 - for the lab's test files


def read_strict(path: Path) -> dict:
    return lab_check.parse_strict_json(path.read_text(encoding="utf-8"))


class FakeCuda:
    """Stands in for torch.cuda at the lab's boundary and records how it was used."""

    def __init__(self, bf16=True, peaks_mb=(900.0, 700.0, 710.0)):
        self.bf16 = bf16
        self.peaks = list(peaks_mb)
        self.calls = []
        self.sequence = 0
        self.synchronized_at = -1
        fake = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing, "timing events need enable_timing=True"
                self.seq = None

            def record(self, stream=None):
                fake.sequence += 1
                self.seq, self.time = fake.sequence, time.perf_counter()

            def elapsed_time(self, end):
                if self.seq is None or end.seq is None or fake.synchronized_at < end.seq:
                    raise RuntimeError("elapsed_time read before the end event was synchronized")
                fake.calls.append("elapsed")
                return (end.time - self.time) * 1000.0

        self.Event = Event

    def synchronize(self, device=None):
        self.sequence += 1
        self.synchronized_at = self.sequence

    def reset_peak_memory_stats(self, device=None):
        self.calls.append("reset")

    def max_memory_allocated(self, device=None):
        self.calls.append("peak")
        return self.peaks.pop(0) * MIB

    def install(self, monkeypatch, torch):
        patches = {
            "is_available": lambda: True,
            "is_bf16_supported": lambda *a, **k: self.bf16,
            "Event": self.Event,
            "synchronize": self.synchronize,
            "reset_peak_memory_stats": self.reset_peak_memory_stats,
            "max_memory_allocated": self.max_memory_allocated,
            "empty_cache": lambda: None,
            "get_device_name": lambda *a: "Fake H200",
            "get_device_capability": lambda *a: (9, 0),
            "get_device_properties": lambda *a: types.SimpleNamespace(total_memory=141 * 2**30, name="Fake H200"),
        }
        for name, value in patches.items():
            monkeypatch.setattr(torch.cuda, name, value)
        monkeypatch.setattr(torch.version, "cuda", "12.8")
        # Tensors stay on the CPU; everything device-typed follows them.
        monkeypatch.setattr(lab_device, "select_tensor_device", lambda mode: torch.device("cpu"))
