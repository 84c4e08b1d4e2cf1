"""A module that undoes the built-by-hand guard from inside its own process
(issue 17) and then *is* GradScaler: it must not earn Module 2's points.

It tries every route the first round of hostile submissions used, with names
assembled from pieces so that no static scan sees them: destroy every
dispatcher library a gc walk finds, put the private ``_amp_*`` ops back from
torch's C bindings, re-execute a fresh copy of ``torch/amp/grad_scaler.py``
(source, then compiled cache), and rebuild the class from original function
objects still reachable through gc. What remains in reach is refused: the
sources are empty in the box, the overrides live where gc cannot find them,
and the original functions' code refuses.
"""
import pytest

from support.hostile import TIGHT, module_tests

pytestmark = [pytest.mark.hostile, pytest.mark.usefixtures("confinement_here")]

ROLLBACK = '''
import gc, importlib, marshal, os, sys, types
import torch

_n, _g, _a = "grad_" + "scaler", "Grad" + "Scaler", "_" + "amp_"
TRIED = []
for _obj in gc.get_objects():                      # 1. the dispatcher overrides
    if type(_obj).__name__ == "Lib" + "rary" and hasattr(_obj, "_destroy"):
        try:
            _obj._destroy()
            TRIED.append("destroyed a library")
        except Exception:
            pass
_C = getattr(torch, "_" + "C")                     # 2. the private ops from the C bindings
for _name in dir(_C._VariableFunctionsClass):
    if _name.startswith(_a):
        _fn = _C._VariableFunctionsClass.__dict__[_name]
        for _target in (torch, _C._VariableFunctions):
            try:
                setattr(_target, _name, _fn)
            except Exception:
                pass
_folder = os.path.join(os.path.dirname(torch.__file__), "amp")
_ns = {"__name__": "fresh_" + _n, "__builtins__": __builtins__}
try:                                                # 3. a fresh copy of the source ...
    with open(os.path.join(_folder, _n + ".py")) as _handle:
        exec(compile(_handle.read(), "fresh", "exec"), _ns)
except Exception as _exc:
    TRIED.append("source: %s" % type(_exc).__name__)
if _g not in _ns:                                   # ... or of its compiled cache
    try:
        _cache = [f for f in os.listdir(os.path.join(_folder, "__pycache__")) if f.startswith(_n)][0]
        with open(os.path.join(_folder, "__pycache__", _cache), "rb") as _handle:
            exec(marshal.loads(_handle.read()[16:]), _ns)
    except Exception as _exc:
        TRIED.append("cache: %s" % type(_exc).__name__)
_Base = _ns.get(_g)
if _Base is None:                                   # 4. the original methods, through gc
    _methods = {}
    for _obj in gc.get_objects():
        if isinstance(_obj, types.FunctionType) and _obj.__code__.co_filename.endswith(_n + ".py") \\
                and _obj.__qualname__.startswith(_g + "."):
            _methods.setdefault(_obj.__name__, _obj)
    _Base = type(_g, (), _methods)
    TRIED.append("rebuilt from %d functions" % len(_methods))

def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    _scale = torch.full((1,), float(scale))            # the restored kernel does the work
    _tracker = torch.full((1,), int(growth_tracker), dtype=torch.int32)
    getattr(torch, _a + "update_scale_")(_scale, _tracker, torch.full((1,), float(bool(found_inf))),
                                         growth_factor, backoff_factor, growth_interval)
    return float(_scale.item()), int(_tracker.item())

class LossScaler(_Base):
    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval)
'''


@pytest.mark.slow
def test_a_guard_rollback_earns_no_module_2_points(grade_dir):
    report = grade_dir({"loss_scaler": ROLLBACK}, seed=51, limits=TIGHT)
    scaler = module_tests(report, "loss_scaler")
    assert scaler and sum(t.score for t in scaler) == 0, [t.test_id for t in scaler if t.passed]
    table = report.by_module()
    assert table["amp_update"][0] == table["amp_update"][1]
    assert table["amp_training_step"][0] == table["amp_training_step"][1]


def test_the_scaler_sources_are_empty_in_the_loss_scaler_box_only(grade_dir):
    probe = '''
import os, sys
SIZES = {}
# found through sys.path, as any file would be (torch.__file__ is a sign the static check holds for review)
ROOTS = [os.path.join(entry, "torch") for entry in sys.path if os.path.isdir(os.path.join(entry, "torch", "amp"))]
for folder in ("amp", "cuda/amp", "cpu/amp"):
    path = os.path.join(ROOTS[0], folder, "grad_" + "scaler.py") if ROOTS else ""
    SIZES[folder] = os.path.getsize(path) if os.path.exists(path) else -1
'''
    scaler = probe + '''
def update_scale(*args, **kwargs):
    raise RuntimeError("SIZES=%r" % sorted(SIZES.items()))
'''
    step = probe + '''
def train_step(*args, **kwargs):
    raise RuntimeError("SIZES=%r" % sorted(SIZES.items()))
'''
    report = grade_dir({"loss_scaler": scaler, "amp_training_step": step}, seed=52, limits=TIGHT)
    in_scaler = "\n".join(t.output for t in module_tests(report, "loss_scaler"))
    in_step = "\n".join(t.output for t in module_tests(report, "amp_training_step"))
    assert "SIZES=[('amp', 0), ('cpu/amp', 0), ('cuda/amp', 0)]" in in_scaler, in_scaler[:1500]
    assert "SIZES=" in in_step and "('amp', 0)" not in in_step, in_step[:1500]


FROZEN_ORIGINALS = '''
import gc, json, os, sys, types
from autograder.sandbox import zygote
zygote._preload()                       # as the zygote: torch imported, its heap frozen
read, write = os.pipe()
pid = os.fork()
if pid == 0:                            # as a loss_scaler worker
    from autograder.assignment.hand_built import scaler_guard
    scaler_guard.install()
    gc.unfreeze()                       # student code can bring the frozen heap back into gc's reach
    names = ("GradScaler.", "_MultiDeviceReplicator", "_refresh_per_optimizer_state")
    outcomes = {}
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__qualname__.startswith(names) \\
                and obj.__module__.startswith("torch"):
            try:
                obj(*([None] * obj.__code__.co_argcount))
                outcomes[obj.__qualname__] = "ran"
            except Exception as exc:
                outcomes.setdefault(obj.__qualname__, type(exc).__name__)
    os.write(write, json.dumps(outcomes).encode())
    os._exit(0)
os.close(write)
os.waitpid(pid, 0)
print(os.read(read, 65536).decode())
'''


@pytest.mark.slow
def test_originals_in_the_zygotes_frozen_heap_refuse_too():
    """A forked worker's inherited heap is frozen: gc.get_objects() does not show
    it to the guard, but gc.unfreeze() shows it to student code. Every scaler
    function found there still refuses."""
    import json
    import subprocess
    import sys

    from support.helpers import ROOT

    done = subprocess.run([sys.executable, "-c", FROZEN_ORIGINALS], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcomes, "no scaler function survived to be tried"
    assert set(outcomes.values()) == {"DelegationRefused"}, outcomes


PREPARED_ZYGOTE = '''
import json, torch
from autograder.sandbox import zygote
zygote._preload()                       # the guard prepares here, once for all its workers
from autograder.assignment.hand_built import scaler_guard
print(json.dumps({"prepared": scaler_guard._PREPARED is not None and bool(scaler_guard._PREPARED[1]),
                  "scaled": torch.amp.GradScaler("cpu", init_scale=4.0).scale(torch.ones(1)).item()}))
'''


@pytest.mark.slow
def test_the_zygote_prepares_the_guard_but_keeps_the_real_gradscaler():
    """What the guard finds once in the zygote changes nothing there: the other
    modules' workers, forked from it too, use the real GradScaler."""
    import json
    import subprocess
    import sys

    from support.helpers import ROOT

    done = subprocess.run([sys.executable, "-c", PREPARED_ZYGOTE], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"prepared": True, "scaled": 4.0}
