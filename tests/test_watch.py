"""``python -m autograder watch``: a save re-grades and says what changed; Ctrl-C leaves no process behind."""
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

from autograder.cli import watch as cli_watch
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result
from autograder.sandbox.confine import limits
from helpers import interruptible, outliving

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _report(**passed):
    return GradeReport(tests=[Result(name=name, module="amp_update", max_score=1.0, score=float(ok),
                                         passed=ok, output="", visibility="visible") for name, ok in passed.items()], seed=1)


def test_changes_name_fixed_and_newly_failing_tests():
    fixed, broken = cli_watch.changes(_report(a=False, b=True, c=True), _report(a=True, b=False, c=True))
    assert (fixed, broken) == (["a"], ["b"])
    assert cli_watch.change_lines(_report(a=True), _report(a=True), "en") == ["No test changed since the last grade."]
    assert cli_watch.change_lines(None, _report(a=True), "en") == []


def _read_until(process, needle, count, timeout=120):
    seen, deadline = "", time.monotonic() + timeout
    while seen.count(needle) < count:
        assert time.monotonic() < deadline, seen
        line = process.stdout.readline()
        assert line, seen
        seen += line
    return seen


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_save_regrades_and_ctrl_c_ends_every_process(tmp_path):
    submission = tmp_path / "exercises"
    shutil.copytree(ROOT / "solutions", submission)
    process = subprocess.Popen([sys.executable, "-m", "autograder", "watch", "--submission", str(submission),
                                "--results", str(tmp_path / "results.json"), "--lang", "en", "--quiet",
                                "--visible-only", "--seed", "7"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=interruptible)
    try:
        first = _read_until(process, "Watching", 1)
        assert "TOTAL" in first
        # A broken module: its tests turn from passed to failing, and the table says so.
        (submission / "amp_update.py").write_text("raise ImportError('broken on purpose')\n")
        second = _read_until(process, "Watching", 1)
        assert "Saved amp_update.py: graded again in" in second
        assert "Newly failing since the last grade" in second
        assert (tmp_path / "results.json").is_file()
        tree = limits.descendants(process.pid)
        assert tree  # the judge and its zygote
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        assert "Stopped watching." in process.stdout.read()
        assert not outliving(tree, 10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

