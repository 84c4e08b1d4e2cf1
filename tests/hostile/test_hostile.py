"""Hostile submissions: whatever the student code does, grading finishes in bounded
time with a complete report, the misbehaving module earns nothing, and the other
modules keep their points."""
import os
import secrets
import time

import pytest

from support.cli import autograder_command
from support.helpers import said_once_per_module
from support.hostile import sweep

from autograder.sandbox.client import Limits

pytestmark = [pytest.mark.hostile, pytest.mark.slow]  # each test grades hostile submissions
# Short limits: a hostile call costs its limit, or on a busy machine (a box starved of CPU)
# up to its wall-clock backstop, four times that plus 5 s; honest modules are charged ~0.2 s.
# 512 MiB refuses exhaust_memory's first 1 GiB at once instead of letting it fill 1 GiB.
TIGHT = Limits(call_timeout=1.0, import_timeout=2.0, module_budget=3.0, memory_bytes=512 * 2**20)

# A wrong but importable amp_update, for hostile code that needs functions to exist.
WRONG_FUNCTIONS = '''
import torch
def unscale_gradients(scaled_gradients, scale):
    return [g for g in scaled_gradients]
def global_grad_norm(gradients):
    return torch.tensor(0.0)
def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    return {}
'''

HOSTILE = {
    "exit_at_import": "import os\nos._exit(3)\n",
    "sys_exit_and_interrupt_in_calls": WRONG_FUNCTIONS.replace(
        "    return [g for g in scaled_gradients]", "    raise SystemExit(0)").replace(
        "    return torch.tensor(0.0)", "    raise KeyboardInterrupt"),
    "os_exit_in_call": WRONG_FUNCTIONS.replace("    return {}", "    import os; os._exit(0)"),
    "hang_at_import": "while True:\n    pass\n",
    "hang_in_calls": WRONG_FUNCTIONS.replace("    return [g for g in scaled_gradients]",
                                             "    import time; time.sleep(1000)").replace(
        "    return {}", "    while True: pass"),
    "keyboard_interrupt_at_import": "raise KeyboardInterrupt\n",
    "exhaust_memory": WRONG_FUNCTIONS.replace("    return [g for g in scaled_gradients]",
                                              "    hog = [bytearray(2**30) for _ in range(64)]\n    return hog"),
    "patch_torch_and_pytest": WRONG_FUNCTIONS + '''
import sys
torch.allclose = torch.equal = lambda *a, **k: True
torch.isclose = lambda a, b, *x, **k: torch.ones_like(a, dtype=torch.bool)
torch.Tensor.__eq__ = lambda self, other: True
for name in list(sys.modules):
    if name.startswith(("pytest", "_pytest", "numpy")):
        module = sys.modules[name]
        for attribute in ("fail", "raises", "approx", "allclose"):
            if hasattr(module, attribute):
                setattr(module, attribute, lambda *a, **k: True)
''',
    "inspect_frames": '''
import sys, torch
def _steal():
    frame, found = sys._getframe(1), None
    while frame is not None:
        for key, value in frame.f_locals.items():
            if key in ("expected", "want", "reference"):
                found = value
        frame = frame.f_back
    return found
def unscale_gradients(scaled_gradients, scale):
    return _steal() or scaled_gradients
def global_grad_norm(gradients):
    return _steal() or torch.tensor(1.0)
def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    return _steal() or {}
''',
    "lying_tensors": '''
import torch
class Liar(torch.Tensor):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func.__name__ in ("allclose", "equal", "isclose", "__eq__"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
def unscale_gradients(scaled_gradients, scale):
    return [None if g is None else torch.zeros_like(g).as_subclass(Liar) for g in scaled_gradients]
def global_grad_norm(gradients):
    return torch.tensor(-1.0).as_subclass(Liar)
def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    return {"gradients": unscale_gradients(scaled_gradients, scale), "grad_norm": global_grad_norm([]),
            "clip_coefficient": 1.0, "should_step": True, "next_scale": scale, "reason": "finite_gradient"}
''',
    "fake_output_and_result_files": WRONG_FUNCTIONS + '''
import os, json
print("PASS all tests\\nTOTAL 100 / 100\\n::notice title=Autograding complete::Points 100/100")
for folder in (os.getcwd(), "/proc/%d/cwd" % os.getppid()):
    try:
        with open(os.path.join(folder, "results.json"), "w") as out:
            json.dump({"score": 100, "max_score": 100, "tests": []}, out)
    except OSError:
        pass
if os.environ.get("GITHUB_OUTPUT"):
    with open(os.environ["GITHUB_OUTPUT"], "a") as out:
        out.write("result=FORGED\\n")
''',
    "import_solutions": "from solutions.amp_update import *\n",
    "background_processes": WRONG_FUNCTIONS + '''
import subprocess, os
subprocess.Popen(["sleep", "SLEEPER_MARK7"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "SLEEPER_MARK8"])
    os._exit(0)
''',
}


# The sleepers' durations, a number of this session's own: the sweep kills what carries it,
# and nothing else on the machine does (another test's seed or path, a neighbour's process).
SLEEPER_MARK = f"3{secrets.randbelow(10 ** 9):09d}"
HOSTILE["background_processes"] = HOSTILE["background_processes"].replace("SLEEPER_MARK", SLEEPER_MARK)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_amp_update_is_contained(grade_dir, name, tmp_path, monkeypatch):
    output = tmp_path / "github_output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    report = grade_dir({"amp_update": HOSTILE[name]}, seed=5, limits=TIGHT)
    elapsed = time.monotonic() - started
    modules = report.by_module()
    assert modules["amp_update"][0] == 0, [t.test_id for t in report.tests if t.passed]
    assert modules["loss_scaler"][0] == modules["loss_scaler"][1]
    assert modules["amp_training_step"][0] == modules["amp_training_step"][1]
    assert report.max_score == 100 and len(report.tests) == 93
    assert elapsed < 120, f"grading took {elapsed:.0f} s"
    assert "FORGED" not in output.read_text()
    if os.path.isdir("/proc"):
        assert sweep(SLEEPER_MARK) == [], "a background process outlived grading"


def test_feedback_names_the_cause(grade_dir):
    """A crash at import and an endless loop are reported as such, not as wrong values."""
    report = grade_dir({"amp_update": HOSTILE["exit_at_import"], "loss_scaler": "while True:\n    pass\n"},
                       seed=6, limits=TIGHT)
    amp = [t.output for t in report.tests if t.module == "amp_update"]
    scaler = [t.output for t in report.tests if t.module == "loss_scaler"]
    assert said_once_per_module(amp, "amp_update.py could not be imported", "exit code 3")
    assert said_once_per_module(scaler, "Importing", "took longer than")


def teardown_module():
    sweep(SLEEPER_MARK)  # never leave a test's sleeper behind, even on failure


REWRITE_GRADER = WRONG_FUNCTIONS + '''
import os, sys, glob
package = os.path.dirname(sys.modules["autograder"].__file__)
for path in glob.glob(os.path.join(package, "*", "test_*amp_update.py")):
    try:
        with open(path, "w") as out:
            out.write("def test_everything_passes():\\n    pass\\n")
    except OSError:
        pass
try:  # and forge the results file where the judge will write it
    with open("/proc/%d/cwd/results.json" % os.getppid(), "w") as out:
        out.write('{"score": 100, "max_score": 100, "tests": []}')
except OSError:
    pass
'''


def test_rewriting_grader_files_is_refused(tmp_path):
    """Run in a throwaway copy of the grader: a submission that tries to rewrite the
    hidden tests on disk and to forge results.json changes nothing and gains nothing."""
    import hashlib
    import json

    from support.helpers import copy_grader, make_submission

    copy_grader(tmp_path)

    def digest():  # the sources; caches are checked against them below
        return {path: hashlib.sha256(path.read_bytes()).hexdigest()
                for path in sorted((tmp_path / "autograder").rglob("*"))
                if path.is_file() and path.suffix != ".pyc"}

    before = digest()
    make_submission(tmp_path / "exercises", {"amp_update": REWRITE_GRADER})
    env = dict(os.environ, AUTOGRADER_CALL_TIMEOUT="5", AUTOGRADER_MODULE_BUDGET="20")
    done = autograder_command("grade", "--seed", "9", "--quiet", cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    amp = [t for t in results["tests"] if "amp_update" in t["tags"]]
    assert len(amp) == 33 and sum(t["score"] for t in amp) == 0
    assert results["max_score"] == 100 and len(results["tests"]) == 93
    if results["extra_data"]["isolation"].get("confined"):
        from autograder.intake.integrity import planted_caches

        assert digest() == before, "a confined submission changed the grader's files"
        assert planted_caches(tmp_path / "autograder") == []
    else:  # where workers are not confined the change must at least be flagged
        assert any("grader files changed on disk" in flag for flag in results["extra_data"]["flags"])
