"""A loss_scaler.py that undoes the built-by-hand guard through its own process's
memory (issue 37) and then computes with torch's own ``_amp_*`` CPU kernels.

Written as a determined student would: the honest reference module with its
update_scale replaced, every name fetched at run time (``sys.modules.get``, a
computed ``getattr``), the guard's dispatcher library found by scanning the
process's heap (``/proc/self/maps``, ``ctypes.string_at``) for objects of its
type, told apart from torch's own by trying each in a forked child, and reset.
On the code before this issue that earned 34 of 35 points with no flag. What
holds now is outside anything the process can rewrite: the kernels' code is
sealed (their first instructions end the box) and the box may make no new
executable memory, so the kernel code can neither be restored nor mapped
again; the judge records the box's end as delegation.
"""
import pytest

from helpers import solution_source
from test_channels_hostile import TIGHT, _module_tests
from test_sandbox_hostile import confinement_here  # noqa: F401

pytestmark = pytest.mark.hostile

UNDO = '''

# --- the undo: every name fetched at run time --------------------------------------------
import sys as _s
_get = _s.modules.get
_T, _X, _os = _get("tor" + "ch"), _get("ct" + "ypes"), _get("o" + "s")
_C = getattr(_T, "_" + "C")
_mine = getattr(_C, "_dispatch_" + "library")("FRAGMENT", "undo_ns", "")
_needle = _get("struct").pack("<Q", id(type(_mine)))
_dump = getattr(_C, "_dispatch_" + "dump")
_op = "aten::_" + "amp_update_scale_"
_reset, _candidates = 0, []
with open("/proc/" + "self/maps") as _maps:
    _regions = [line.split() for line in _maps]
for _fields in _regions:
    if not _fields[1].startswith("rw") or (len(_fields) > 5 and _fields[5] != "[heap]"):
        continue
    _lo, _hi = (int(_b, 16) for _b in _fields[0].split("-"))
    if _hi - _lo > 1024 * 2**20:
        continue
    _blob = _X.string_at(_lo, _hi - _lo)
    _at = _blob.find(_needle)
    while _at >= 0:
        _refs = int.from_bytes(_blob[_at - 8:_at], "little") if _at >= 8 else 0
        if _at % 8 == 0 and 0 < _refs < 1000:
            _candidates.append(_lo + _at - 8)
        _at = _blob.find(_needle, _at + 8)
for _address in _candidates:          # which one is the guard's? try each in a child first
    _pid = _os.fork()
    if _pid == 0:
        try:
            _obj = _X.cast(_address, _X.py_object).value
            if _obj is not _mine and type(_obj) is type(_mine):
                _before = _dump(_op)
                getattr(_obj, "re" + "set")()
                if "inactive" in _before and "inactive" not in _dump(_op):
                    _os._exit(42)
        finally:
            _os._exit(1)
    if _os.waitpid(_pid, 0)[1] >> 8 == 42:
        getattr(_X.cast(_address, _X.py_object).value, "re" + "set")()
        _reset += 1
        break
_kernel = getattr(getattr(getattr(_T, "ops"), "aten"), "_" + "amp_update_scale_")


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    _check_scaler_arguments(scale, growth_factor, backoff_factor, growth_interval)
    if isinstance(growth_tracker, bool) or not isinstance(growth_tracker, int) or growth_tracker < 0:
        raise ValueError(f"growth_tracker must be an int >= 0, got {growth_tracker!r}")
    if not _reset:
        raise RuntimeError("the guard was not found")
    _scale = _T.full((1,), float(scale))
    _tracker = _T.full((1,), int(growth_tracker), dtype=_T.int32)
    _kernel(_scale, _tracker, _T.full((1,), float(bool(found_inf))), growth_factor, backoff_factor,
            growth_interval)
    if not math.isfinite(float(_scale.item())):
        _scale.fill_(float(scale))
    return float(_scale.item()), int(_tracker.item())
'''


def test_a_guard_reset_through_raw_memory_meets_sealed_kernels(grade_dir):
    report = grade_dir({"loss_scaler": solution_source("loss_scaler") + UNDO}, seed=61, limits=TIGHT)
    scaler = _module_tests(report, "loss_scaler")
    assert scaler and sum(t.score for t in scaler) == 0, [t.test_id for t in scaler if t.passed]
    # the seal held, not only the static check: the box ended in sealed code and the judge said so
    assert any("reached through raw memory" in (t.output or "") for t in scaler), scaler[0].output[:1500]
    assert "sealed: torch's _amp_* CPU kernels" in report.isolation["syscalls"], report.isolation
    table = report.by_module()
    assert table["amp_update"][0] == table["amp_update"][1]
    assert table["amp_training_step"][0] == table["amp_training_step"][1]


# Names the static check cannot read (an "uncertain" flag, no points held): what is
# judged here is the box, not the source.
RESTORER = '''
import os, sys
ctypes = __import__("".join(chr(code) for code in (99, 116, 121, 112, 101, 115)))
FOUND = []
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
FAILED = ctypes.c_void_p(-1).value
library = [os.path.join(entry, "torch", "lib", "libtorch_cpu.so") for entry in sys.path
           if os.path.exists(os.path.join(entry, "torch", "lib", "libtorch_cpu.so"))][0]
with open(library, "rb") as handle:          # the library's code, mapped again executable
    if libc.mmap(None, 4096, 1 | 4, 2, handle.fileno(), 0) not in (None, FAILED):
        FOUND.append("libtorch mapped executable again")
if libc.mmap(None, 4096, 1 | 2 | 4, 0x22, -1, 0) not in (None, FAILED):
    FOUND.append("anonymous executable memory")
page = libc.mmap(None, 4096, 1 | 2, 0x22, -1, 0)
if libc.mprotect(page, 4096, 1 | 4) == 0:
    FOUND.append("mprotect to executable")
if libc.personality(0x0400000) != -1:        # READ_IMPLIES_EXEC
    FOUND.append("READ_IMPLIES_EXEC")
try:
    with open(os.path.join("/proc", str(os.getpid()), "mem"), "r+b"):
        FOUND.append("/proc/self/mem writable")
except OSError:
    pass
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.executable, [sys.executable, "-c", "pass"])
    finally:
        os._exit(3)
if os.waitpid(pid, 0)[1] >> 8 != 3:
    FOUND.append("a new program ran")


def update_scale(*args, **kwargs):
    raise RuntimeError("FOUND=" + repr(FOUND))
'''


def test_the_sealed_box_makes_no_new_executable_memory(grade_dir):
    """Every way back to the kernels' original code is refused in the loss_scaler box."""
    report = grade_dir({"loss_scaler": RESTORER}, seed=62, limits=TIGHT)
    texts = "\n".join(t.output or "" for t in _module_tests(report, "loss_scaler"))
    assert "FOUND=[]" in texts, texts[:2000]
