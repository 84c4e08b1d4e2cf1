"""grade-many grades in a judge process of its own (autograder/batch/clean_process.py):
the command line never imports torch, the judge process holds nothing of the
command line's arguments, and Ctrl-C or SIGTERM still ends in a full report with
no process left behind."""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from autograder.sandbox.confine import limits
from support import toy
from support.helpers import ROOT, interruptible, make_submission, outliving

# The slow tier (docs/maintaining.md): each test grades a class through the command line.
pytestmark = pytest.mark.slow

def test_the_command_line_never_imports_torch(tmp_path):
    """Nor the judge (pytest): the judge process starts as soon as the class is
    planned, and its imports are its own."""
    make_submission(tmp_path / "class" / "ada" / "exercises")
    code = ("import json, sys\nfrom autograder.__main__ import main\n"
            f"code = main(['grade-many', {str(tmp_path / 'class')!r}, '-o', {str(tmp_path / 'out')!r}, "
            "'--seed', '5', '--no-progress', '--visible-only'])\n"
            "print(json.dumps({'code': code, 'torch': 'torch' in sys.modules, 'pytest': 'pytest' in sys.modules}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"code": 0, "torch": False, "pytest": False}
    results = json.loads((tmp_path / "out" / "ada" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == results["max_score"] > 0


def test_the_judge_process_holds_nothing_of_the_command_line(tmp_path):
    """B is a fresh interpreter: its arguments, and so every box's, name no student
    folder, no output folder and no seed."""
    root = tmp_path / "class-with-a-telling-name"
    toy.submission(root / "ada" / "exercises", toy.ENDLESS_ADD)  # any assignment's class will do
    env = toy.env(dict(os.environ, PYTHONPATH=str(ROOT), AUTOGRADER_CALL_TIMEOUT="1"))  # ada's endless call ends soon
    batch = subprocess.Popen([sys.executable, "-m", "autograder", "grade-many", str(root), "-o", str(tmp_path / "out"),
                              "--seed", "424242", "--no-progress", "--visible-only"],
                             cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline, seen = time.monotonic() + 120, []
        while time.monotonic() < deadline and batch.poll() is None:
            seen = [pathlib.Path(f"/proc/{pid}/cmdline").read_bytes() for pid in limits.children(batch.pid)]
            if any(b"class_judge" in line for line in seen):
                break
            time.sleep(0.05)
        assert any(b"class_judge" in line for line in seen), "no judge process was started"
        for line in seen:
            assert b"424242" not in line and b"telling-name" not in line and b"out" not in line.split(b"\0")[-2:]
    finally:
        _, stderr = batch.communicate(timeout=600)
    assert batch.returncode == 0, stderr[-2000:]


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c"])
def test_an_interrupted_class_still_gets_its_report(tmp_path, how):
    root, out = tmp_path / "class", tmp_path / "out"  # a toy class: the interruption is the engine's
    toy.submission(root / "s1-quick" / "exercises")
    toy.submission(root / "s2-endless" / "exercises", toy.ENDLESS_ADD)
    toy.submission(root / "s3-waiting" / "exercises")
    env = toy.env(dict(os.environ, PYTHONPATH=str(ROOT)))
    batch = subprocess.Popen([sys.executable, "-m", "autograder", "grade-many", str(root), "-o", str(out),
                              "--jobs", "1", "--seed", "6", "--no-progress", "--visible-only", "--no-similarity"],
                             cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, preexec_fn=interruptible)
    try:
        deadline = time.monotonic() + 300
        while not (out / "s2-endless" / "grader.log").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # s1 is graded, s2's grading child has started
        time.sleep(1.0)  # its endless call runs
        family = limits.children(batch.pid)
        family += [grandchild for pid in family for grandchild in limits.children(pid)]
        if how == "sigterm":
            batch.send_signal(signal.SIGTERM)
        else:  # a terminal's Ctrl-C reaches the whole foreground group
            os.killpg(batch.pid, signal.SIGINT)
        _, stderr = batch.communicate(timeout=300)
    finally:
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
    assert batch.returncode == 130, stderr[-3000:]
    manifest = json.loads((out / "run.json").read_text(encoding="utf-8"))
    rows = manifest["students"]
    assert rows["s1-quick"]["status"] == "ok"
    assert rows["s2-endless"]["status"] == "crashed" and "interrupted" in rows["s2-endless"]["reason"]
    assert rows["s3-waiting"]["status"] == "crashed" and "not graded" in rows["s3-waiting"]["reason"]
    assert "interrupted" in (out / "report.md").read_text(encoding="utf-8")
    for name in rows:
        assert json.loads((out / name / "results.json").read_text(encoding="utf-8"))["score"] is not None
    assert not outliving(family, 30), "a process of the batch outlived it"


# SIGTERM sent by the command line to itself the moment its judge process exists: the
# narrowest window a TA's kill (or a cancelled CI job) can hit.
_SIGNALLED_AS_THE_JUDGE_STARTS = """
import os, signal, sys
from autograder.judge_process import launcher
from autograder.__main__ import main
started = launcher.Judge.__init__
def and_signalled(self, *args, **kwargs):
    started(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)
launcher.Judge.__init__ = and_signalled
sys.exit(main(sys.argv[1:]))
"""


def test_a_signal_as_the_judge_starts_still_ends_in_a_report(tmp_path):
    """The judge exists but the command line had no handle on it yet: once it died of the
    signal (exit -15), with no report; now the interrupt is raised after the start."""
    root, out = tmp_path / "class", tmp_path / "out"
    make_submission(root / "s1" / "exercises")
    done = subprocess.run([sys.executable, "-c", _SIGNALLED_AS_THE_JUDGE_STARTS, "grade-many", str(root), "-o",
                           str(out), "--seed", "6", "--no-progress", "--visible-only", "--no-similarity"],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 130, done.stderr[-3000:]
    rows = json.loads((out / "run.json").read_text(encoding="utf-8"))["students"]
    assert rows["s1"]["reason"] == "not graded: the batch was interrupted"
    assert (out / "report.md").is_file()


@pytest.mark.parametrize("when", ["importing torch", "zygote forked"])
def test_a_class_interrupted_while_its_judge_loads_says_so_for_every_student(tmp_path, when):
    """SIGTERM before the judge process has graded anyone (it is still importing
    torch, or it has forked its zygote and warms up): every student is a zero row
    saying the batch was interrupted, not that the grading process failed, and the
    report is written."""
    root, out = tmp_path / "class", tmp_path / "out"
    for name in ("s1", "s2"):
        make_submission(root / name / "exercises")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    batch = subprocess.Popen([sys.executable, "-m", "autograder", "grade-many", str(root), "-o", str(out),
                              "--seed", "6", "--no-progress", "--visible-only", "--no-similarity"],
                             cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        deadline, family = time.monotonic() + 120, []
        while time.monotonic() < deadline and batch.poll() is None:
            family = limits.children(batch.pid)
            judges = [pid for pid in family if b"class_judge" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()]
            if judges and (when == "importing torch" or limits.children(judges[0])):
                family += limits.children(judges[0])
                break
            time.sleep(0.01)
        assert family, "no judge process was started"
        batch.send_signal(signal.SIGTERM)
        _, stderr = batch.communicate(timeout=300)
    finally:
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
    assert batch.returncode == 130, stderr[-3000:]
    rows = json.loads((out / "run.json").read_text(encoding="utf-8"))["students"]
    assert {name: (row["status"], row["reason"]) for name, row in rows.items()} == {
        name: ("crashed", "not graded: the batch was interrupted") for name in ("s1", "s2")}
    assert "grading process failed" not in stderr
    assert (out / "report.md").is_file()
    assert not outliving(family, 30), "a process of the batch outlived it"
