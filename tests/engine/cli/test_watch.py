"""``python -m autograder watch``: a save re-grades and says what changed; Ctrl-C leaves no process behind."""
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from rich.cells import cell_len

from autograder.reports import terminal
from autograder.judging.results import GradeReport
from autograder.judging.results import TestResult as Result
from autograder.sandbox.confine import limits
from support import toy
from support.helpers import ROOT, interruptible, outliving



def _report(**passed):
    return GradeReport(tests=[Result(name=name, module="toy_sum", max_score=1.0, score=float(ok),
                                         passed=ok, output="", visibility="visible") for name, ok in passed.items()], seed=1)


def test_changes_name_fixed_and_newly_failing_tests():
    fixed, broken = terminal.changes(_report(a=False, b=True, c=True), _report(a=True, b=False, c=True))
    assert (fixed, broken) == (["a"], ["b"])
    assert terminal.change_lines(_report(a=True), _report(a=True), "en") == ["No test changed since the last grade."]
    assert terminal.change_lines(None, _report(a=True), "en") == []


def _read_until(process, needle, count, timeout=120):
    seen, deadline = "", time.monotonic() + timeout
    while seen.count(needle) < count:
        assert time.monotonic() < deadline, seen
        line = process.stdout.readline()
        assert line, seen
        seen += line
    return seen


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_save_regrades_and_ctrl_c_ends_every_process(tmp_path):
    """On the toy assignment: regrading on a save and ending are watch's, whatever it grades."""
    submission = toy.submission(tmp_path / "exercises")
    process = subprocess.Popen([sys.executable, "-m", "autograder", "watch", "--submission", str(submission),
                                "--results", str(tmp_path / "results.json"), "--lang", "en", "--quiet",
                                "--visible-only", "--seed", "7"],
                               cwd=ROOT, env=toy.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=interruptible)
    try:
        first = _read_until(process, "Watching", 1)
        assert "TOTAL" in first
        # A broken module: its tests turn from passed to failing, and the table says so.
        (submission / "toy_sum.py").write_text("raise ImportError('broken on purpose')\n")
        second = _read_until(process, "Watching", 1)
        assert "Saved toy_sum.py: graded again in" in second
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



def test_what_changed_fits_two_lines_per_kind_and_breaks_between_words():
    names = {f"toy_sum: total {131072 * (i + 1)} and its count {i} stay exact": i % 2 == 0 for i in range(12)}
    before = _report(**{name: not ok for name, ok in names.items()})
    after = _report(**names)
    for lang in ("en", "zh"):
        lines = terminal.change_lines(before, after, lang, width=80)
        assert len(lines) == 2 * terminal.CHANGE_LINES, lines
        assert all(cell_len(line) <= 80 for line in lines), lines
        assert lines[1].endswith(" …") and lines[3].endswith(" …")
        whole = {str(131072 * (i + 1)) for i in range(12)} | {str(i) for i in range(12)}
        numbers = re.findall(r"\d+", "\n".join(lines).replace("(6)", ""))
        assert numbers and set(numbers) <= whole, numbers  # never "1" + newline + "31072"
    assert "(6)" in terminal.change_lines(before, after, "en")[0]


LOOPING = '''
def unscale_gradients(scaled_gradients, scale):
    while True:
        pass
'''


def _frames(data):
    """The screens watch drew, as their lines (control sequences and colours taken out)."""
    frames = [frame.split(terminal.ERASE_BELOW)[0] for frame in data.split(terminal.HOME)[1:]]
    return [[re.sub(r"\x1b\[[0-9;]*m", "", line.replace(terminal.ERASE_LINE, "")) for line in frame.split("\r\n")]
            for frame in frames]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pseudo-terminal and /proc")
def test_in_a_terminal_the_screen_fits_a_save_cancels_the_old_grade_and_the_running_test_shows(tmp_path):
    """80 x 24: each redraw keeps the table and the diagnosis on screen and leaves the
    last line to the running test; a loop shows which test runs; a fix saved while
    the loop runs cancels that grade (the call limit is a minute here)."""
    import os
    import pty
    import select

    from support.helpers import mutate

    submission = tmp_path / "exercises"
    shutil.copytree(ROOT / "solutions", submission)
    (submission / "loss_scaler.py").write_text(mutate("loss_scaler", ("        return float(scale * backoff_factor), 0\n",
                                                                       "        return float(scale * backoff_factor), 1\n")))
    pid, fd = pty.fork()
    if pid == 0:
        # Ctrl-C as a terminal sends it, even where this run was started with SIGINT ignored
        # (a background job of a script), which exec would pass on to watch.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.environ.update(COLUMNS="80", LINES="24", AUTOGRADER_CALL_TIMEOUT="60")
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "autograder", "watch", "--submission", str(submission),
                                  "--results", str(tmp_path / "results.json"), "--lang", "en", "--visible-only",
                                  "--seed", "7"])
    import fcntl
    import struct
    import termios

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    seen = [""]

    def read_until(needle, count, timeout):
        deadline = time.monotonic() + timeout
        while seen[0].count(needle) < count:
            assert time.monotonic() < deadline, seen[0][-3000:]
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    seen[0] += os.read(fd, 65536).decode("utf-8", "replace")
                except OSError:
                    break
        return time.monotonic()

    try:
        read_until("Ctrl-C to stop", 1, 120)
        (submission / "amp_update.py").write_text(LOOPING)
        read_until("Running amp_update:", 1, 30)
        time.sleep(2.0)
        (submission / "amp_update.py").write_text((ROOT / "solutions" / "amp_update.py").read_text())
        saved = time.monotonic()
        redrawn = read_until("Ctrl-C to stop", 2, 60)
        assert redrawn - saved < 20, "the obsolete grade was not cancelled"
        for frame in _frames(seen[0]):
            lines = [line for line in frame if line]
            assert len(frame) <= 24 and len(lines) <= 23, frame
            assert all(cell_len(line) <= 80 for line in frame), frame
            assert lines[0].startswith("Module") and "loss_scaler" in "\n".join(frame)
        last = "\n".join(_frames(seen[0])[-1])
        assert "Saved amp_update.py" in last and "TODO 4" in last
        assert "within 60 s" not in seen[0]
    finally:
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and os.waitpid(pid, os.WNOHANG) == (0, 0):
            try:
                if select.select([fd], [], [], 0)[0]:  # never block on a silent terminal
                    os.read(fd, 65536)
            except OSError:
                pass
            time.sleep(0.05)
        os.close(fd)
