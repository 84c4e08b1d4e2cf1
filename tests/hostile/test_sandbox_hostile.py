"""Hostile submissions against the sandbox (issue: a submission sees nothing of the
judge, touches nothing outside its scratch, and dies with its grade).

Each submission tries one trick and reports what it achieved through the text
of an exception, which reaches the feedback: the tests then assert that the
trick found nothing, earned nothing, left nothing behind, and cost the honest
modules nothing. CI runs this file as root and as an unprivileged user.

Keep these tricks harmless for the machine they run on: they only create new
files with unique names (removed by the tests), never edit existing ones, and
every process they start carries a marker the tests sweep for.
"""
import os
import pathlib
import secrets
import sys
import socket
import threading
import time

import pytest

from autograder.sandbox.client import Limits
from support.cli import autograder_command
from support.helpers import ROOT
from support.hostile import MARK, TIGHT, full_marks, report_texts, sweep
from support.hostile_submissions import REPORTING_STEP

pytestmark = [pytest.mark.hostile, pytest.mark.usefixtures("confinement_here"),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux sandbox")]



MEMORY_PROBE = '''
for name, module in list(sys.modules.items()):
    if any(word in name for word in ("hidden", "oracle", "visible")) \
            or name.split(".")[0] in ("pytest", "_pytest", "pluggy") \
            or name in ("autograder.judging.plugin", "autograder.judging.judge", "autograder.judging.engine"):
        FOUND.append(name)
for obj in gc.get_objects():
    try:
        code = getattr(obj, "__code__", None)
        if code is not None and any(w in code.co_filename for w in ("hidden", "visible", "oracle")):
            FOUND.append(code.co_filename)
    except Exception:
        pass
FOUND.extend(v for v in ("1234567891",) if v in repr(sys.argv) + repr(dict(os.environ)))
'''
ORACLE_USE = '''
    for name in list(sys.modules):
        if "oracle" in name:
            return sys.modules[name].train_step(model, optimizer, microbatches, loss_fn,
                                                precision=precision, scaler=scaler, max_norm=max_norm,
                                                weights=weights)
'''


@pytest.mark.slow
def test_judge_memory_holds_no_oracle_hidden_tests_or_seed(grade_dir):
    report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=MEMORY_PROBE, use=ORACLE_USE)},
                       seed=1234567891, limits=TIGHT)
    texts = report_texts(report, "amp_training_step")
    assert "FOUND=[]" in texts, texts[:2000]
    assert report.by_module()["amp_training_step"][0] == 0
    assert full_marks(report, "amp_update", "loss_scaler")


@pytest.mark.slow
def test_command_line_grade_holds_nothing_of_the_judge_either(tmp_path, monkeypatch):
    """``python -m autograder grade`` forks its zygote inside the grading process:
    before that process has seen the job, the suites or the caller's environment."""
    import json

    canary = f"canary-{secrets.token_hex(6)}"
    probe = MEMORY_PROBE + f'''
import ctypes
if {canary!r} in repr(dict(os.environ)):
    FOUND.append("environment")
try:
    with open("/proc/self/environ", "rb") as handle:
        if {canary!r}.encode() in handle.read():
            FOUND.append("environ block")
except OSError:
    pass
'''
    from support.helpers import make_submission

    make_submission(tmp_path / "exercises",
                    {"amp_training_step": REPORTING_STEP.format(probe=probe, use=ORACLE_USE)})
    env = dict(os.environ, CALLER_SECRET_CANARY=canary, GITHUB_OUTPUT=str(tmp_path / canary),
               AUTOGRADER_CALL_TIMEOUT="5", PYTHONPATH=str(ROOT))
    done = autograder_command("grade", "--submission", tmp_path / "exercises", "--results", tmp_path / "results.json",
                              "--seed", "1234567891", "--quiet", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text())
    texts = "\n".join(t["output"] for t in results["tests"] if "amp_training_step" in t["tags"])
    assert "FOUND=[]" in texts, texts[:2000]
    modules = results["extra_data"]["modules"]
    assert modules["loss_scaler"]["score"] == modules["loss_scaler"]["max_score"] > 0


def test_hidden_tests_and_solutions_cannot_be_read_from_disk(grade_dir):
    targets = [ROOT / "autograder" / "hidden" / "test_hidden_amp_update.py",
               ROOT / "autograder" / "hidden" / "oracle_train_step.py",
               ROOT / "autograder" / "hidden" / "loss_scaler_checks.py",
               ROOT / "autograder" / "locale" / "zh" / "loss_scaler.po",
               ROOT / "solutions" / "amp_training_step.py", ROOT / "autograder" / "plugin.py"]
    probe = f'''
for path in {[str(t) for t in targets]!r}:
    try:
        with open(path) as handle:
            FOUND.append(path + ":" + handle.read(60))
    except OSError as exc:
        pass
for folder in {[str(ROOT), str(ROOT / "autograder"), "/"]!r}:
    try:
        names = os.listdir(folder)
        if "hidden" in names or "solutions" in names:
            FOUND.append("listed " + folder)
    except OSError:
        pass
'''
    report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=probe, use="pass")},
                       seed=11, limits=TIGHT)
    texts = report_texts(report, "amp_training_step")
    assert "FOUND=[]" in texts, texts[:2000]
    assert "def test_" not in texts and "oracle" not in texts.lower().replace("found", "")
    assert full_marks(report, "amp_update", "loss_scaler")


@pytest.mark.slow
def test_judge_environment_is_out_of_reach(grade_dir, monkeypatch):
    canary = f"canary-{secrets.token_hex(8)}"
    monkeypatch.setenv("CALLER_SECRET_CANARY", canary)
    monkeypatch.setenv("GITHUB_OUTPUT", f"/tmp/{canary}-output")
    probe = f'''
if {canary!r} in repr(dict(os.environ)):
    FOUND.append("own environment")
for entry in os.listdir("/proc"):
    if entry.isdigit():
        for name in ("environ", "cmdline", "maps"):
            try:
                with open("/proc/%s/%s" % (entry, name), "rb") as handle:
                    if {canary!r}.encode() in handle.read():
                        FOUND.append(entry + "/" + name)
            except OSError:
                pass
try:
    with open("/proc/%d/environ" % os.getppid(), "rb") as handle:
        FOUND.append("parent environ readable")
except OSError:
    pass
'''
    report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=probe, use="pass")},
                       seed=12, limits=TIGHT)
    texts = "\n".join(t.output for t in report.tests)
    assert "FOUND=[]" in texts, texts[:2000]
    assert canary not in texts
    assert full_marks(report, "amp_update", "loss_scaler")


def test_writes_outside_scratch_are_refused_and_the_scratch_is_bounded(grade_dir, tmp_path):
    import site
    import sysconfig

    targets = [pathlib.Path(sysconfig.get_paths()["stdlib"]), pathlib.Path(site.getsitepackages()[0]),
               ROOT / "autograder", ROOT / "autograder" / "reports" / "__pycache__", tmp_path,
               pathlib.Path("/tmp"), pathlib.Path("/dev/shm")]
    names = [target / f"{MARK}.py" for target in targets]
    probe = f'''
import tempfile
for path in {[str(n) for n in names]!r}:
    try:
        with open(path, "x") as handle:
            handle.write("raise SystemExit('planted')\\n")
        FOUND.append(path)
    except OSError:
        pass
written = 0
try:  # fill whatever is writable: 8 files of 12 MiB, more than the box's 64 MiB tmpfs
    for index in range(8):
        with open(os.path.join(tempfile.gettempdir(), "{MARK}-fill-%d" % index), "wb") as handle:
            for _ in range(12):
                handle.write(b"x" * 2**20)
                written += 2**20
except OSError:
    pass
if written >= 96 * 2**20:
    FOUND.append("wrote %d MiB" % (written // 2**20))
'''
    try:
        report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=probe, use="pass")},
                           seed=13, limits=TIGHT)
        texts = report_texts(report, "amp_training_step")
        assert "FOUND=[]" in texts, texts[:2000]
        assert not [str(n) for n in names if n.exists()]
        assert full_marks(report, "amp_update", "loss_scaler")
    finally:
        for name in names + list(pathlib.Path("/tmp").glob(f"{MARK}-fill-*")):
            try:  # never leave a planted file behind, even on failure
                name.unlink()
            except OSError:
                pass


@pytest.mark.slow
def test_no_tcp_connection_leaves_the_box(grade_dir):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                accepted.append(conn.recv(100))
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    probe = f'''
import socket
for host in ("127.0.0.1", "localhost", "::1"):
    try:
        with socket.create_connection((host, {port}), timeout=2) as conn:
            conn.sendall(b"stolen")
            FOUND.append("connected to " + host)
    except OSError:
        pass
try:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    FOUND.append("listening")
except OSError:
    pass
'''
    try:
        report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=probe, use="pass")},
                           seed=14, limits=TIGHT)
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
    assert accepted == []
    assert "FOUND=[]" in report_texts(report, "amp_training_step")
    assert full_marks(report, "amp_update", "loss_scaler")


@pytest.mark.slow
def test_a_fast_reforking_process_dies_with_the_grade(grade_dir):
    marker = MARK[:15]  # a process name holds 15 characters
    source = f'''
import ctypes, os, time
def _name():
    ctypes.CDLL(None).prctl(15, {marker.encode()!r}, 0, 0, 0)
if os.fork() == 0:
    os.setsid()
    _name()
    while True:  # each generation lives a moment, then hands over to a child
        if os.fork():
            os._exit(0)
        _name()
        time.sleep(0.001)
def unscale_gradients(scaled_gradients, scale):
    raise RuntimeError("no")
'''
    report = grade_dir({"amp_update": source}, seed=15, limits=TIGHT)
    time.sleep(1.0)
    survivors = sweep(marker)
    assert survivors == [], "a re-forking process outlived its grade"
    assert report.by_module()["amp_update"][0] == 0
    assert full_marks(report, "loss_scaler", "amp_training_step")


@pytest.mark.slow
def test_signals_cannot_leave_the_box(grade_dir):
    """A decoy process stands for the judge and the neighbours: the box can
    neither signal it nor even learn that it may (signal 0)."""
    import subprocess

    decoy = subprocess.Popen(["sleep", "300"])
    try:
        source = f'''
import os, signal
FOUND = []
for pid in ({decoy.pid}, {os.getpid()}):
    try:
        os.kill(pid, 0)
        FOUND.append("may signal %d" % pid)
    except OSError:
        pass
try:
    os.kill({decoy.pid}, signal.SIGKILL)
except OSError:
    pass
def unscale_gradients(scaled_gradients, scale):
    raise RuntimeError("FOUND=" + repr(FOUND))
'''
        report = grade_dir({"amp_update": source}, seed=16, limits=TIGHT)
        assert decoy.poll() is None, "the box killed a process outside it"
        assert "FOUND=[]" in report_texts(report, "amp_update")
        assert full_marks(report, "loss_scaler", "amp_training_step")
        assert report.by_module()["amp_update"][0] == 0
    finally:
        decoy.kill()
        decoy.wait()


def test_isolation_is_reported(grade_dir):
    report = grade_dir(seed=17)
    isolation = report.isolation
    assert isolation, "results must say what confined the code"
    for key in ("fs", "network", "signals", "process_namespace", "uid", "scratch", "confined"):
        assert key in isolation
    data = report.to_gradescope()["extra_data"]["isolation"]
    assert data == isolation
    if os.geteuid() == 0:
        assert "of its own" in isolation["uid"]
    else:
        assert str(os.geteuid()) in isolation["uid"]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="without root memory is bounded per process only (the isolation report says so)")
def test_many_processes_share_one_memory_bound(grade_dir):
    """Four children each touching 320 MiB, each within its own address-space bound
    (384 MiB): under the box's cgroup (384 + 512 MiB for the whole box) at most two can
    hold their memory at once; the others are killed, never the machine. (Small blocks:
    a box fills its cgroup at a few hundred MiB a second on a busy machine.)"""
    source = '''
import os, time
held = 0
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            block = bytearray(320 * 2**20)
            for index in range(0, len(block), 4096):
                block[index] = 1
            time.sleep(2)
            os._exit(0)
        except MemoryError:
            os._exit(3)
    children.append(pid)
for pid in children:
    _, status = os.waitpid(pid, 0)
    held += os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
def unscale_gradients(scaled_gradients, scale):
    raise RuntimeError("HELD=%d" % held)
'''
    report = grade_dir({"amp_update": source}, seed=18,
                       limits=Limits(call_timeout=10.0, import_timeout=40.0, module_budget=60.0,
                                     memory_bytes=384 * 2**20))
    assert report.by_module()["amp_update"][0] == 0
    assert full_marks(report, "loss_scaler", "amp_training_step")
    texts = report_texts(report, "amp_update")
    held = [int(part.split("=")[1].split()[0].strip("'\"")) for part in texts.split() if part.startswith("HELD=")]
    assert held and all(1 <= count <= 2 for count in held), texts[:1500]  # one fits its own bound
    assert "cgroup" in report.isolation["memory"]
