"""Hostile submissions against the channels between student code and the judge
(issue: nothing a submission prints, plants or sends can reach a score).

Covered here: forged reply frames on the worker's socket, "built by hand"
evaded through aliases, subclasses, private operators and helper modules,
symbolic links in the submission, compiled caches planted in the grader, and
the rule that the judge imports nothing after student code ran. The output
channels (terminal, summary, Classroom payload) have their own tests.
"""
import os
import pathlib
import sys
import time

import pytest

from autograder.sandbox.client import Limits
from support.helpers import make_submission, mutate, said_once_per_module, solution_source
from support.hostile import TIGHT, module_tests
from support.hostile_submissions import FORGER, SUBCLASS_EVASION

pytestmark = pytest.mark.hostile

@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="resource module (memory accounting)")
def test_forged_reply_frames_are_protocol_errors_charged_to_the_student(grade_dir):
    import resource

    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = grade_dir({"amp_update": FORGER}, seed=21, limits=TIGHT)
    elapsed = time.monotonic() - started
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    amp = module_tests(report, "amp_update")
    assert sum(t.score for t in amp) == 0
    outputs = "\n".join(t.output for t in amp)
    assert "could not be read" in outputs, outputs[:1500]
    assert "tell the course staff" not in outputs  # the student's fault, said as such
    assert report.by_module()["loss_scaler"][0] == report.by_module()["loss_scaler"][1]
    assert elapsed < 150, f"forged frames kept the judge busy {elapsed:.0f} s"
    assert grown_mib < 600, f"the judge grew by {grown_mib:.0f} MiB decoding forged frames"


# Writes raw frames to the worker's own socket, found among its descriptors (no frame
# walking needed): answers the judge cannot decode, and answers to no request.
RAW_WRITER = '''
import os, stat, struct

def _sockets():
    found = []
    for fd in range(3, 256):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                found.append(fd)
        except OSError:
            pass
    return found

def _write(payload):
    data = struct.pack(">I", len(payload)) + payload
    for fd in _sockets():
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

def unscale_gradients(scaled_gradients, scale):  # a number Python will not convert
    _write(b'{"id": "x", "ok": true, "result": {"value": 1' + b"0" * 5000 + b'}}')

def global_grad_norm(gradients):  # nesting past the judge's recursion limit
    _write(b'{"ok": true, "result": {"value": ' + b"[" * 100000 + b"]" * 100000 + b'}}')

def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):  # not UTF-8
    _write(b'{"ok": true, "result": {"value": "\\xff\\xfe\\xc0\\x80"}}')
'''

WRONG_IDS = '''
import os, stat, struct

def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    frame = b'{"id": "0123456789abcdef", "ok": true, "result": {"value": [1.0, 0]}}'
    data = struct.pack(">I", len(frame)) + frame
    fds = [fd for fd in range(3, 256) if _is_socket(fd)]
    while True:  # until the judge ends the box
        for fd in fds:
            os.write(fd, data)

def _is_socket(fd):
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False
'''


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux sandbox's descriptors")
def test_raw_frames_on_the_workers_socket_fail_only_the_students_tests(grade_dir):
    """A 5,000-digit number, nesting past the recursion limit, bytes that are not UTF-8,
    endless answers to no request: each call is the student's protocol error, charged to
    it; the grade completes within its limits with a complete report. (Graded in this
    process: the command line's own run is test_judge_imports_nothing_after_student_code_ran's.)"""
    scaler = solution_source("loss_scaler") + WRONG_IDS
    started = time.monotonic()
    report = grade_dir({"amp_update": RAW_WRITER, "loss_scaler": scaler}, seed=26,
                       limits=Limits(call_timeout=4.0, module_budget=30.0))
    elapsed = time.monotonic() - started
    results = report.to_gradescope()
    tests = {module: [t for t in results["tests"] if module in t["tags"]] for module in
             ("amp_update", "loss_scaler", "amp_training_step")}
    outputs = "\n".join(t["output"] for t in tests["amp_update"] + tests["loss_scaler"])
    assert "could not check" not in outputs and "tell the course staff" not in outputs, outputs[:2000]
    assert all(t["status"] == "failed" for t in tests["amp_update"])
    for words in ("digits", "nested too deeply", "malformed frame", "not for this request"):
        assert f"could not be read ({words}" in outputs or words in outputs, words
    failed_scaler = [t for t in tests["loss_scaler"] if t["status"] == "failed"]
    assert failed_scaler and all("could not be read" in t["output"] or "could not be used" in t["output"]
                                 or "Not run" in t["output"] or "TODO" in t["output"] for t in failed_scaler)
    assert all(t["status"] == "passed" for t in tests["amp_training_step"])
    # no call ran into its wall-clock backstop (4 x 4 s + 5 s each)
    assert elapsed < 150, f"the grade took {elapsed:.0f} s"


OPERATOR_EVASION = mutate("loss_scaler", ("    def update(self):\n",
                                          "    def update(self):\n"
                                          "        _op = getattr(torch.ops.aten, '_amp_' + 'update_scale_')\n"
                                          "        _s = torch.full((), self.get_scale())\n"
                                          "        _t = torch.zeros((), dtype=torch.int32)\n"
                                          "        _op(_s, _t, torch.zeros(()), 2.0, 0.5, 2000)\n"))


@pytest.mark.slow
@pytest.mark.parametrize("name, source", [("subclass_via_alias", SUBCLASS_EVASION),
                                          ("private_operator", OPERATOR_EVASION)])
def test_built_by_hand_is_checked_by_behaviour(grade_dir, name, source):
    report = grade_dir({"loss_scaler": source}, seed=22, limits=TIGHT)
    scaler = module_tests(report, "loss_scaler")
    assert sum(t.score for t in scaler) == 0, [t.test_id for t in scaler if t.passed]
    assert any("built by hand" in t.output for t in scaler)
    table = report.by_module()
    assert table["amp_update"][0] == table["amp_update"][1]
    assert table["amp_training_step"][0] == table["amp_training_step"][1]


@pytest.mark.slow
def test_helper_modules_are_not_part_of_a_submission(grade_dir):
    """The code moved into a helper next to loss_scaler.py: it cannot be imported."""
    helper = solution_source("loss_scaler")
    source = "from scaler_helper import *  # noqa\n"
    report = grade_dir({"loss_scaler": source, "scaler_helper.py": helper}, seed=23, limits=TIGHT)
    scaler = module_tests(report, "loss_scaler")
    assert sum(t.score for t in scaler) == 0
    assert any("scaler_helper" in t.output for t in scaler)
    assert any("scaler_helper.py" in note for note in report.notes)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges on Windows")
def test_symlinked_module_is_reported_as_a_link(shared_boxes, tmp_path_factory):
    from autograder.judging.engine import grade_submission

    folder = tmp_path_factory.mktemp("linked")
    make_submission(folder, omit=("amp_update",))
    outside = tmp_path_factory.mktemp("outside") / "amp_update.py"
    outside.write_text(solution_source("amp_update"))
    os.symlink(outside, folder / "amp_update.py")
    report = grade_submission(folder, seed=24, limits=TIGHT, boxes=shared_boxes)
    amp = module_tests(report, "amp_update")
    assert sum(t.score for t in amp) == 0
    assert said_once_per_module([t.output for t in amp], "symbolic link") and "missing" not in amp[0].output


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_a_module_does_not_block(shared_boxes, tmp_path_factory):
    from autograder.judging.engine import grade_submission

    folder = tmp_path_factory.mktemp("fifo")
    make_submission(folder, omit=("amp_update",))
    os.mkfifo(folder / "amp_update.py")
    started = time.monotonic()
    report = grade_submission(folder, seed=25, limits=TIGHT, boxes=shared_boxes)
    assert time.monotonic() - started < 120
    assert said_once_per_module([t.output for t in module_tests(report, "amp_update")], "not a regular file")


def test_planted_compiled_cache_is_found(tmp_path):
    import importlib.util
    import py_compile

    from autograder.intake.grader_guard import GraderGuard
    from autograder.intake.integrity import planted_caches

    package = tmp_path / "autograder" / "reports"
    package.mkdir(parents=True)
    source = package / "terminal.py"
    source.write_text("def render(report):\n    return 'honest'\n")
    guard = GraderGuard(tmp_path / "autograder")
    assert guard.planted == [] and guard.changes() == []
    evil = tmp_path / "evil.py"
    evil.write_text("def render(report):\n    return 'TOTAL 100 / 100'\n")
    cache = importlib.util.cache_from_source(str(source))
    py_compile.compile(str(evil), cfile=cache, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    assert guard.changes() == ["reports/__pycache__/" + pathlib.Path(cache).name]
    assert planted_caches(tmp_path / "autograder") == ["reports/__pycache__/" + pathlib.Path(cache).name]
    assert guard.restore() == ["reports/__pycache__/" + pathlib.Path(cache).name]
    assert not pathlib.Path(cache).exists()
    # a cache Python itself wrote for the unchanged source is not a plant, nor a change to undo
    py_compile.compile(str(source), cfile=cache)
    assert planted_caches(tmp_path / "autograder") == []
    assert guard.changes() == [] and guard.restore() == [] and pathlib.Path(cache).exists()


LATE_IMPORTS = """
import sys, json
from autograder import __main__ as entry
from autograder.judge_process import launcher
from autograder.judging import engine
from autograder.cli import grade as cli_grade
from autograder.sandbox import client

seen = {}
real = launcher.Judge.send


def recording(self, *args, **kwargs):  # the command-line process: nothing after the judge has its job
    seen["cli"] = set(sys.modules)
    return real(self, *args, **kwargs)


launcher.Judge.send = recording
code = entry.main(["grade", "--submission", sys.argv[1], "--results", sys.argv[2], "--seed", "5", "--classroom",
                   "--summary", sys.argv[3], "--lang", "zh"])
cli_late = set(sys.modules) - seen["cli"]

original = client.Sandbox._start


def recording_start(self):  # the judge: nothing after the first box starts
    seen.setdefault("judge", set(sys.modules))
    return original(self)


client.Sandbox._start = recording_start
report = engine.grade_submission(sys.argv[1], seed=5, lang="zh")
cli_grade.write_outputs(report, type("Args", (), {"results": sys.argv[2], "classroom": True,
                                                 "summary": sys.argv[3], "quiet": False, "verbose": False,
                                                 "lang": "zh"})())
judge_late = set(sys.modules) - seen["judge"]
ours = lambda names: sorted(n for n in names if n.split(".")[0] in
                            ("autograder", "matplotlib", "pytest", "_pytest", "pluggy", "babel", "rich"))
print("LATE", json.dumps({"cli": ours(cli_late), "judge": ours(judge_late)}), "CODE", code)
"""


@pytest.mark.slow
def test_judge_imports_nothing_after_student_code_ran(tmp_path):
    """Every grader module the judge and the command line use is loaded before the
    first box starts: nothing they load later can have been written by student code."""
    import subprocess

    from support.helpers import ROOT

    done = subprocess.run([sys.executable, "-c", LATE_IMPORTS, str(ROOT / "solutions"),
                           str(tmp_path / "results.json"), str(tmp_path / "summary.md")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), GITHUB_OUTPUT=str(tmp_path / "out")))
    assert 'LATE {"cli": [], "judge": []} CODE 0' in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
