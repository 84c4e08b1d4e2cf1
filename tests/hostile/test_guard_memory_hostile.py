"""A loss_scaler.py that undoes the built-by-hand guard through its own process's
memory (issue 37) and then computes with torch's own ``_amp_*`` CPU kernels.

Written as a determined student would: the honest reference module with its
update_scale replaced, every name decoded at run time (``sys.modules.get``, a
computed ``getattr``: the static check can only hold it for review), the
guard's dispatcher library found by scanning the
process's heap (``/proc/self/maps``, ``ctypes.string_at``) for objects of its
type, told apart from torch's own by trying each in a forked child, and reset.
On the code before this issue that earned 34 of 35 points with no flag. What
holds now is outside anything the process can rewrite: the kernels' code is
sealed (their first instructions end the box) and the box may make no new
executable memory, so the kernel code can neither be restored nor mapped
again; the judge records the box's end as delegation.
"""
import dataclasses

import pytest

from support.helpers import solution_source
from support.hostile import TIGHT, module_tests

pytestmark = [pytest.mark.hostile, pytest.mark.usefixtures("confinement_here")]
# Each call ends the box and each new box repeats the heap scan (~0.5 s charged): a small
# budget stops the module after a few boxes instead of one per test (~20 s).
FEW_BOXES = dataclasses.replace(TIGHT, module_budget=3.0)

UNDO = '''

# --- the undo: every name decoded at run time, so that no check reads it -----------------
def _n(code):
    return bytes.fromhex(code).decode()


_get = getattr(__import__(_n("737973")), _n("6d6f64756c6573")).get
_T, _X, _os = _get(_n("746f726368")), _get(_n("637479706573")), _get(_n("6f73"))
_C = getattr(_T, _n("5f43"))
_mine = getattr(_C, _n("5f64697370617463685f6c696272617279"))("FRAGMENT", "undo_ns", "")
_needle = _get(_n("737472756374")).pack("<Q", id(type(_mine)))
_dump = getattr(_C, _n("5f64697370617463685f64756d70"))
_op = _n("6174656e3a3a5f616d705f7570646174655f7363616c655f")
_reset, _candidates = 0, []
with open(_n("2f70726f632f73656c662f6d617073")) as _maps:
    _regions = [line.split() for line in _maps]
for _fields in _regions:
    if not _fields[1].startswith("rw") or (len(_fields) > 5 and _fields[5] != "[heap]"):
        continue
    _lo, _hi = (int(_b, 16) for _b in _fields[0].split("-"))
    if _hi - _lo > 1024 * 2**20:
        continue
    _blob = getattr(_X, _n("737472696e675f6174"))(_lo, _hi - _lo)
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
            _obj = getattr(_X, _n("63617374"))(_address, getattr(_X, _n("70795f6f626a656374"))).value
            if _obj is not _mine and type(_obj) is type(_mine):
                _before = _dump(_op)
                getattr(_obj, _n("7265736574"))()
                if "inactive" in _before and "inactive" not in _dump(_op):
                    _os._exit(42)
        finally:
            _os._exit(1)
    if _os.waitpid(_pid, 0)[1] >> 8 == 42:
        _obj = getattr(_X, _n("63617374"))(_address, getattr(_X, _n("70795f6f626a656374"))).value
        getattr(_obj, _n("7265736574"))()
        _reset += 1
        break
_kernel = getattr(getattr(getattr(_T, _n("6f7073")), _n("6174656e")), _n("5f616d705f7570646174655f7363616c655f"))


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


@pytest.mark.slow
def test_a_guard_reset_through_raw_memory_meets_sealed_kernels(grade_dir):
    report = grade_dir({"loss_scaler": solution_source("loss_scaler") + UNDO}, seed=61, limits=FEW_BOXES)
    scaler = module_tests(report, "loss_scaler")
    assert scaler and sum(t.score for t in scaler) == 0, [t.test_id for t in scaler if t.passed]
    # the seal held, not only the static check: the box ended in sealed code and the judge said so
    assert any("reached through raw memory" in (t.output or "") for t in scaler), scaler[0].output[:1500]
    assert "sealed: torch's _amp_* CPU kernels" in report.isolation["syscalls"], report.isolation
    table = report.by_module()
    assert table["amp_update"][0] == table["amp_update"][1]
    assert table["amp_training_step"][0] == table["amp_training_step"][1]


RESTORER = '''
import ctypes, os, sys
import torch
FOUND = []
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
FAILED = ctypes.c_void_p(-1).value
library = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
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
    with open("/proc/self/mem", "r+b"):
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


def test_the_sealed_box_makes_no_new_executable_memory(tmp_path, shared_boxes):
    """Every way back to the kernels' original code is refused in the loss_scaler box
    (asked of the box directly: the grade would hold this source for review anyway)."""
    from support.helpers import box_specs

    from autograder.sandbox.client import Limits, Sandbox

    specs = box_specs(tmp_path, {"loss_scaler": RESTORER})
    sandbox = Sandbox("loss_scaler", specs["loss_scaler"], shared_boxes, Limits())
    try:
        outcome = sandbox.call("update_scale", 1.0, 0, False)
    finally:
        sandbox.close()
    assert not outcome.ok and "FOUND=[]" in outcome.error.message, outcome.error
    assert "sealed" in sandbox.isolation[0].get("syscalls", ""), sandbox.isolation
