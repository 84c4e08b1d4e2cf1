"""Peak throughput, memory and compute capability of the GPUs a student may run the lab on.

Used by :mod:`autograder.assignment.lab.plausibility` as upper bounds, so every figure is the vendor's
spec-sheet peak at the reference boost clock, **dense** (the spec sheets' starred figures assume
2:4 structured sparsity and are halved here), and where one name covers several boards
(RTX 4080 / 4080 SUPER, H100 SXM / H200 NVL, ...) the faster board's figure and every board's
memory size. A table entry is a bound, never an expectation: the lab's small workload
(batch 1, 128 tokens) reaches a few percent of these peaks.

Fields: ``fp32`` non-tensor FP32 TFLOP/s; ``tf32`` dense TF32 tensor TFLOP/s (0: none);
``half`` dense FP16/BF16 tensor TFLOP/s, the faster accumulate mode (GeForce cards run FP16 with
FP16 accumulate at twice the FP32-accumulate rate); ``memory_gb`` the capacities boards ship
with; ``capability`` what ``torch.cuda.get_device_capability`` reports (None: not checked);
``partitioned`` True for data-centre parts that MIG or vGPU can slice, whose ``total_memory``
may be a fraction of the board's.

This table is the authority, and the lab's own ``PEAKS`` (``gpu_lab/amp_lab_flops.py``, which
puts MFU in a record) repeats a few of its rows, held equal by a test, rather than the checker
deriving its bounds from the lab: the lab must run with nothing of the grader beside it, and the
bounds need more than the lab's peaks (memory sizes, capabilities, every GPU a student may name).
The checker reads nothing from the lab but its record layout (``amp_lab_layout.py``, plain data),
and re-derives every MFU a record states from this table.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    label: str
    pattern: str
    fp32: float
    tf32: float
    half: float
    memory_gb: tuple
    capability: tuple | None
    partitioned: bool = False

    @property
    def fp32_path_peak(self) -> float:
        # The FP32 path may run its matmuls as TF32 (torch.backends.cuda.matmul.allow_tf32).
        return max(self.fp32, self.tf32)

    @property
    def half_path_peak(self) -> float:
        return max(self.half, self.fp32_path_peak)


# Most specific pattern first: "RTX 5070 Ti" before "RTX 5070", "H100 ... PCIe" before "H100".
# Names are what torch.cuda.get_device_name reports, e.g. "NVIDIA GeForce RTX 5070 Ti",
# "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "Tesla T4", "AMD Instinct MI300X".
GPU_SPECS = (
    # ---- NVIDIA Blackwell data centre
    # GB200 NVL72 datasheet, per GPU: FP16/BF16 5 PFLOPS*, TF32 2.5 PFLOPS*, FP32 80 TFLOPS;
    # HBM3e 186 GB (B200 in HGX B200: 180 GB; B200 product page: 192 GB). *sparse.
    GpuSpec("B200", r"\bG?B200\b", 80.0, 1250.0, 2500.0, (180, 186, 192), (10, 0), True),
    # GB300 NVL72 datasheet, per GPU: FP16/BF16 5 PFLOPS*, TF32 2.5 PFLOPS*, FP32 80 TFLOPS
    # (bounded like GB200); HBM3e up to 288 GB. Capability left unchecked.
    GpuSpec("B300", r"\bG?B300\b", 80.0, 1250.0, 2500.0, (270, 279, 288), None, True),
    # ---- NVIDIA Hopper
    # GH200 Grace Hopper datasheet: FP32 67 TFLOPS, TF32 989 TFLOPS*, FP16/BF16 1,979 TFLOPS*;
    # 96 GB HBM3 or 144 GB HBM3e.
    GpuSpec("GH200", r"\bGH200\b", 67.0, 494.5, 989.5, (96, 144), (9, 0), True),
    # H200 datasheet (SXM): FP32 67 TFLOPS, TF32 989 TFLOPS*, FP16/BF16 1,979 TFLOPS*;
    # 141 GB HBM3e (H200 NVL: 60 / 835* / 1,671*, also 141 GB).
    GpuSpec("H200", r"\bH200\b", 67.0, 494.5, 989.5, (141,), (9, 0), True),
    # H100 datasheet, PCIe: FP32 51 TFLOPS, TF32 756 TFLOPS*, FP16/BF16 1,513 TFLOPS*; 80 GB.
    GpuSpec("H100 PCIe", r"\bH100\b.*\bPCIe\b", 51.0, 378.0, 756.5, (80,), (9, 0), True),
    # H100 datasheet, NVL: FP32 60 TFLOPS, TF32 835 TFLOPS*, FP16/BF16 1,671 TFLOPS*; 94 GB.
    GpuSpec("H100 NVL", r"\bH100\b.*\bNVL\b", 60.0, 417.5, 835.5, (94,), (9, 0), True),
    # H100 datasheet, SXM: FP32 67 TFLOPS, TF32 989 TFLOPS*, FP16/BF16 1,979 TFLOPS*; 80 GB
    # (64 GB and 96 GB SXM variants exist).
    GpuSpec("H100 SXM", r"\bH100\b", 67.0, 494.5, 989.5, (64, 80, 94, 96), (9, 0), True),
    # ---- NVIDIA Ampere / Ada / Turing / Volta data centre
    # A100 datasheet: FP32 19.5 TFLOPS, TF32 156 TFLOPS, FP16/BF16 312 TFLOPS (dense); 40 or 80 GB.
    GpuSpec("A100", r"\bA100\b", 19.5, 156.0, 312.0, (40, 80), (8, 0), True),
    # A30 datasheet: FP32 10.3 TFLOPS, TF32 82 TFLOPS, FP16/BF16 165 TFLOPS; 24 GB.
    GpuSpec("A30", r"\bA30\b", 10.3, 82.0, 165.0, (24,), (8, 0), True),
    # A40 datasheet: FP32 37.4 TFLOPS, TF32 74.8 TFLOPS, FP16/BF16 149.7 TFLOPS; 48 GB.
    GpuSpec("A40", r"\bA40\b", 37.4, 74.8, 149.7, (48,), (8, 6), True),
    # A10G (AWS G5) has no public NVIDIA sheet; it is a cut-down A10, so the A10's figures bound it.
    GpuSpec("A10G", r"\bA10G\b", 31.2, 62.5, 125.0, (24,), (8, 6), True),
    # A10 datasheet: FP32 31.2 TFLOPS, TF32 62.5 TFLOPS, FP16/BF16 125 TFLOPS; 24 GB.
    GpuSpec("A10", r"\bA10\b", 31.2, 62.5, 125.0, (24,), (8, 6), True),
    # L40S datasheet: FP32 91.6 TFLOPS, TF32 183 TFLOPS, FP16/BF16 362.05 TFLOPS; 48 GB.
    GpuSpec("L40S", r"\bL40S\b", 91.6, 183.0, 362.05, (48,), (8, 9), True),
    # L40 datasheet: FP32 90.5 TFLOPS, TF32 90.5 TFLOPS, FP16/BF16 181.05 TFLOPS; 48 GB.
    GpuSpec("L40", r"\bL40\b", 90.5, 90.5, 181.05, (48,), (8, 9), True),
    # L4 datasheet: FP32 30.3 TFLOPS, TF32 120 TFLOPS*, FP16/BF16 242 TFLOPS*; 24 GB.
    GpuSpec("L4", r"\bL4\b", 30.3, 60.0, 121.0, (24,), (8, 9), True),
    # T4 datasheet: FP32 8.1 TFLOPS, mixed FP16/FP32 65 TFLOPS; no TF32 or BF16; 16 GB.
    GpuSpec("T4", r"\bT4\b", 8.1, 0.0, 65.0, (16,), (7, 5), True),
    # V100S datasheet: FP32 16.4 TFLOPS, tensor 130 TFLOPS (V100 SXM2: 15.7 / 125); 16 or 32 GB.
    GpuSpec("V100", r"\bV100S?\b", 16.4, 0.0, 130.0, (16, 32), (7, 0), True),
    # ---- NVIDIA workstation
    # RTX 6000 Ada datasheet: FP32 91.1 TFLOPS, tensor 1,457 TFLOPS (FP8, sparse) -> FP16 364.25
    # dense; TF32 not listed, bounded at half the FP16 rate as on the L40S; 48 GB.
    GpuSpec("RTX 6000 Ada", r"\bRTX 6000 Ada\b", 91.1, 182.1, 364.25, (48,), (8, 9), True),
    # RTX A6000 datasheet: FP32 38.7 TFLOPS, tensor 309.7 TFLOPS (FP16, sparse); 48 GB.
    GpuSpec("RTX A6000", r"\bRTX A6000\b", 38.7, 77.4, 154.85, (48,), (8, 6), True),
    # ---- NVIDIA GeForce Blackwell: spec pages give FP32 (shader) TFLOPS and "AI TOPS" (FP4,
    # sparse); dense FP16 tensor = AI TOPS / 8.
    # RTX 5090: 104.8 TFLOPS FP32, 3,352 AI TOPS -> 419 FP16; 32 GB GDDR7.
    GpuSpec("RTX 5090", r"\bRTX 5090\b", 104.8, 104.8, 419.0, (32,), (12, 0)),
    # RTX 5080: 56.3 TFLOPS FP32, 1,801 AI TOPS -> 225.1 FP16; 16 GB GDDR7.
    GpuSpec("RTX 5080", r"\bRTX 5080\b", 56.3, 56.3, 225.1, (16,), (12, 0)),
    # RTX 5070 Ti: 43.9 TFLOPS FP32, 1,406 AI TOPS -> 175.8 FP16; 16 GB GDDR7.
    GpuSpec("RTX 5070 Ti", r"\bRTX 5070 Ti\b", 43.9, 43.9, 175.8, (16,), (12, 0)),
    # RTX 5070: 30.9 TFLOPS FP32, 988 AI TOPS -> 123.5 FP16; 12 GB GDDR7.
    GpuSpec("RTX 5070", r"\bRTX 5070\b", 30.9, 30.9, 123.5, (12,), (12, 0)),
    # RTX 5060 Ti: 23.7 TFLOPS FP32, 759 AI TOPS -> 94.9 FP16; 8 or 16 GB GDDR7.
    GpuSpec("RTX 5060 Ti", r"\bRTX 5060 Ti\b", 23.7, 23.7, 94.9, (8, 16), (12, 0)),
    # ---- NVIDIA GeForce Ada (Ada Lovelace whitepaper, FP16 tensor with FP16 accumulate, dense)
    # RTX 4090: FP32 82.6 TFLOPS, FP16 330.3 TFLOPS; 24 GB GDDR6X.
    GpuSpec("RTX 4090", r"\bRTX 4090\b", 82.6, 82.6, 330.3, (24,), (8, 9)),
    # RTX 4080 SUPER: FP32 52.2 TFLOPS, 836 AI TOPS (FP8, sparse) -> 209 FP16 (RTX 4080:
    # 48.7 / 194.9); 16 GB.
    GpuSpec("RTX 4080", r"\bRTX 4080\b", 52.2, 52.2, 209.0, (16,), (8, 9)),
    # RTX 4070 Ti SUPER: FP32 44.1 TFLOPS, 706 AI TOPS -> 176.5 FP16; 16 GB (4070 Ti: 12 GB).
    GpuSpec("RTX 4070 Ti", r"\bRTX 4070 Ti\b", 44.1, 44.1, 176.5, (12, 16), (8, 9)),
    # RTX 4070 SUPER: FP32 35.5 TFLOPS, 568 AI TOPS -> 142 FP16; 12 GB.
    GpuSpec("RTX 4070", r"\bRTX 4070\b", 35.5, 35.5, 142.0, (12,), (8, 9)),
    # RTX 4060 Ti: FP32 22.1 TFLOPS, 353 AI TOPS -> 88.3 FP16; 8 or 16 GB.
    GpuSpec("RTX 4060 Ti", r"\bRTX 4060 Ti\b", 22.1, 22.1, 88.3, (8, 16), (8, 9)),
    # ---- NVIDIA GeForce Ampere (GA102 whitepaper, FP16 tensor with FP16 accumulate, dense)
    # RTX 3090 Ti: FP32 40 TFLOPS, FP16 160 TFLOPS (RTX 3090: 35.6 / 142); 24 GB GDDR6X.
    GpuSpec("RTX 3090", r"\bRTX 3090\b", 40.0, 40.0, 160.0, (24,), (8, 6)),
    # RTX 3080 Ti: FP32 34.1 TFLOPS, FP16 136.4 TFLOPS (RTX 3080: 29.8 / 119); 10 or 12 GB.
    GpuSpec("RTX 3080", r"\bRTX 3080\b", 34.1, 34.1, 136.4, (10, 12), (8, 6)),
    # ---- AMD Instinct (ROCm builds of torch report them through torch.cuda)
    # MI300X datasheet: FP32 matrix 163.4 TFLOPS, TF32 653.7, FP16/BF16 1,307.4 (dense); 192 GB.
    GpuSpec("MI300X", r"\bMI300X\b", 163.4, 653.7, 1307.4, (192,), None, True),
    # MI325X datasheet: compute as MI300X; 256 GB HBM3E.
    GpuSpec("MI325X", r"\bMI325X\b", 163.4, 653.7, 1307.4, (256,), None, True),
    # MI355X datasheet: FP32 matrix 157.3 TFLOPS, FP16/BF16 2.5 PFLOPS (dense); 288 GB HBM3E.
    GpuSpec("MI355X", r"\bMI355X\b", 157.3, 0.0, 2516.6, (288,), None, True),
)

# An unrecognised name is held to the fastest GPU in the table, per precision, and the largest
# memory: no shipping GPU exceeds them.
FASTEST_KNOWN = GpuSpec(
    "fastest known GPU", "",
    fp32=max(spec.fp32 for spec in GPU_SPECS),
    tf32=max(spec.tf32 for spec in GPU_SPECS),
    half=max(spec.half for spec in GPU_SPECS),
    memory_gb=(max(max(spec.memory_gb) for spec in GPU_SPECS),),
    capability=None, partitioned=True,
)

_LAPTOP = re.compile(r"\b(Laptop|Mobile|Max-Q)\b", re.IGNORECASE)


def lookup(name: str):
    """(spec, laptop) for a reported device name; spec is None for an unknown GPU.
    A laptop part is bounded by its desktop namesake, whose peaks are higher."""
    for spec in GPU_SPECS:
        if re.search(spec.pattern, name, re.IGNORECASE):
            return spec, bool(_LAPTOP.search(name))
    return None, bool(_LAPTOP.search(name))
