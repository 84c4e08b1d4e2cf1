"""Hostile students in a class graded by ``grade-many --jobs 2``: they try to kill
their neighbours, outlive the batch, fill the disk and read each other's work.
Honest students keep full marks, the hostile ones earn nothing for the trick,
nothing of theirs remains, and the batch writes its whole report. CI runs this
file as root and as an unprivileged user."""
import json
import os
import pathlib
import secrets
import subprocess
import sys
import time

import pytest

from support.cli import autograder_command
from support.helpers import ROOT, make_submission, said_once_per_module
from support.hostile import sweep
from support.hostile_submissions import FORGER, SUBCLASS_EVASION

pytestmark = [pytest.mark.hostile, pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux sandbox")]
MARK = f"ampclass{secrets.token_hex(4)}"

KILLER = '''
import os, signal
def _targets():
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                text = open("/proc/%s/cmdline" % entry, "rb").read()
            except OSError:
                continue
            if b"{mark}" in text or b"zygote" in text:
                yield int(entry)
for _ in range(3):
    for pid in _targets():
        for sig in (signal.SIGKILL, signal.SIGSTOP):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
def unscale_gradients(scaled_gradients, scale):
    raise RuntimeError("no")
'''

REFORKER = '''
import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    while True:
        ctypes.CDLL(None).prctl(15, b"{comm}", 0, 0, 0)
        if os.fork():
            os._exit(0)
        time.sleep(0.002)
def unscale_gradients(scaled_gradients, scale):
    raise RuntimeError("no")
'''

FILLER = '''
import os, tempfile
for folder in (tempfile.gettempdir(), os.getcwd(), "{out}", os.path.expanduser("~")):
    for index in range(40):
        try:
            with open(os.path.join(folder, "{mark}-fill-%d" % index), "wb") as handle:
                for _ in range(16):
                    handle.write(b"x" * 2**20)
        except OSError:
            break
def unscale_gradients(scaled_gradients, scale):
    raise RuntimeError("no")
'''

READER = '''
import glob
FOUND = [path for path in glob.glob("{root}/*/exercises/*.py") + glob.glob("{out}/*/results.json")
         if open(path, errors="replace").read(10)]
def unscale_gradients(scaled_gradients, scale):
    raise RuntimeError("FOUND=%r" % (FOUND[:5],))
'''


def test_hostile_class_is_contained(tmp_path):

    root = tmp_path / MARK
    out = tmp_path / "out"
    comm = MARK[:15]
    hostile = {"killer": KILLER.format(mark=MARK), "reforker": REFORKER.format(comm=comm),
               "filler": FILLER.format(mark=MARK, out=out), "reader": READER.format(root=root, out=out),
               "forger": FORGER}
    students = ["a-honest", "z-honest"] + list(hostile) + ["delegator", "linker"]
    for name in students:
        make_submission(root / name / "exercises",
                        {"amp_update": hostile[name]} if name in hostile else None)
    (root / "delegator" / "exercises" / "loss_scaler.py").write_text(SUBCLASS_EVASION)
    (root / "linker" / "exercises" / "amp_update.py").unlink()
    os.symlink(root / "a-honest" / "exercises" / "amp_update.py", root / "linker" / "exercises" / "amp_update.py")
    env = dict(os.environ, AUTOGRADER_CALL_TIMEOUT="5", AUTOGRADER_MODULE_BUDGET="30",
               PYTHONPATH=str(ROOT))
    try:
        done = autograder_command("grade-many", root, "-o", out, "--jobs", "2", "--seed", "3", "--no-progress", env=env,
                                  timeout=900)
        time.sleep(1.0)
        survivors = sweep(comm)
    finally:
        for leftover in list(tmp_path.rglob(f"{MARK}-fill-*")) + list(pathlib.Path("/tmp").glob(f"{MARK}-fill-*")):
            leftover.unlink()
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("run.json", "scores.csv", "report.md"):
        assert (out / name).is_file(), f"{name} missing"
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["isolation"]["confined"] is True
    totals = {}
    for name in students:
        data = json.loads((out / name / "results.json").read_text())
        totals[name] = data["extra_data"]["modules"]
        assert data["extra_data"]["isolation"]["confined"] is True
        if os.geteuid() == 0:
            assert "of its own" in data["extra_data"]["isolation"]["uid"]
    for name in ("a-honest", "z-honest"):
        assert all(entry["score"] == entry["max_score"] for entry in totals[name].values()), totals[name]
    for name in list(hostile) + ["linker"]:
        assert totals[name]["amp_update"]["score"] == 0, name
        assert totals[name]["loss_scaler"]["score"] == totals[name]["loss_scaler"]["max_score"], name
    assert totals["delegator"]["loss_scaler"]["score"] == 0
    assert totals["delegator"]["amp_update"]["score"] == totals["delegator"]["amp_update"]["max_score"]
    linker = json.loads((out / "linker" / "results.json").read_text())
    assert said_once_per_module([t["output"] for t in linker["tests"] if "amp_update" in t["tags"]], "symbolic link")
    reader = json.loads((out / "reader" / "results.json").read_text())
    assert all("FOUND=[]" in t["output"] for t in reader["tests"] if "amp_update" in t["tags"]
               and "FOUND" in t["output"])
    assert survivors == [], "a re-forking student outlived grade-many"
    assert not list(tmp_path.rglob(f"{MARK}-fill-*")), "a student's files were left behind"
    uids = {json.loads((out / n / "results.json").read_text())["extra_data"]["isolation"]["uid"]
            for n in students}
    if os.geteuid() == 0:
        assert len(uids) == len(students), "students must not share a uid"


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root")
def test_a_full_disk_costs_only_rows_and_the_report_is_written(tmp_path):
    """The output folder is a 6 MiB file system: whatever fills it, run.json,
    scores.csv and report.md are written."""
    root = tmp_path / "class"
    out = tmp_path / "small"
    out.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(out)], check=True)
    try:
        for name in ("alice", "bob"):
            make_submission(root / name / "exercises")
        filler = out / "someone-elses-big-file"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        # Fill the disk while the batch runs (after its reserve was taken).
        batch = subprocess.Popen([sys.executable, "-m", "autograder", "grade-many", str(root), "-o", str(out),
                                  "--jobs", "1", "--seed", "4", "--no-progress", "--visible-only"],
                                 cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not (out / ".grade-many-reserve").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(filler, "wb", buffering=0) as handle:  # nothing left to flush on close
            try:
                while True:
                    handle.write(b"x" * 2**16)
            except OSError:
                pass
        _, stderr = batch.communicate(timeout=600)
        assert batch.returncode == 0, stderr[-2000:]
        for name in ("run.json", "scores.csv", "report.md"):
            assert (out / name).is_file() and (out / name).stat().st_size > 0, f"{name} missing"
        manifest = json.loads((out / "run.json").read_text())
        assert set(manifest["students"]) == {"alice", "bob"}
    finally:
        subprocess.run(["umount", "-l", str(out)], check=False)
