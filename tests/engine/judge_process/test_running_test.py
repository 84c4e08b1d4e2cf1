"""While a grade runs, the command line knows which test runs (the judge appends a
line as each starts) and, in a terminal, shows it once a test has kept the grade
silent for a second: cut to the width, the seconds kept, erased afterwards."""
import io
import re
import time

import pytest
from rich.cells import cell_len

from autograder.judge_process.running_test import ERASE, RunningTest
from autograder.judge_process.grading import grade_in_clean_process
from support.helpers import ROOT


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Progress:
    def __init__(self, current, seconds_ago):
        self.current, self.since = current, time.monotonic() - seconds_ago


TITLE = "total adds the floats, ints and fractions of every list, long or empty, in the order they come " * 2


def test_the_running_test_shows_after_a_second_and_fits_the_line(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    screen = Terminal()
    running = RunningTest("en", screen)
    running(Progress(("toy_sum", TITLE), 0.4))
    assert screen.getvalue() == ""  # not silent for a second yet
    running(Progress(("toy_sum", TITLE), 3.2))
    shown = screen.getvalue()
    assert shown.startswith(ERASE + "Running toy_sum: total adds the floats")
    assert shown.endswith("… (3 s)") and cell_len(shown[len(ERASE):]) <= 79
    running(Progress(("toy_sum", "the next test\x1b[2J"), 0.0))  # once shown, it follows the grade
    assert screen.getvalue().endswith(ERASE + "Running toy_sum: the next test\\x1b[2J (0 s)")
    running.clear()
    assert screen.getvalue().endswith(ERASE)
    chinese = Terminal()
    RunningTest("zh", chinese)(Progress(("toy_sum", "一个测试"), 2.0))
    assert chinese.getvalue() == ERASE + "正在运行 toy_sum：一个测试（2 秒）"


def test_nothing_is_shown_where_standard_error_is_no_terminal():
    pipe = io.StringIO()
    running = RunningTest("en", pipe)
    running(Progress(("toy_sum", "t"), 5.0))
    running.say("saved")
    running.clear()
    assert pipe.getvalue() == ""


@pytest.mark.slow
def test_a_grade_tells_its_command_line_each_test_as_it_starts(tmp_path):
    seen = []

    def on_wait(progress):
        if progress.current and progress.current not in seen:
            seen.append(progress.current)

    report = grade_in_clean_process(ROOT / "solutions", seed=5, include_hidden=False, flags=[], lang="zh",
                                    modules=["loss_scaler"], on_wait=on_wait)
    assert report.score == report.max_score
    titles = {test.name for test in report.tests}
    assert seen and all(module == "loss_scaler" for module, _title in seen)
    assert all(re.search("[\u4e00-\u9fff]", title) for _module, title in seen)
    assert {title for _module, title in seen} <= {name.split(": ", 1)[-1] for name in titles}


def test_of_modules_graded_apart_the_test_running_longest_is_shown(tmp_path, monkeypatch):
    """Each module's tests run in a process of their own (a lane): the one that has kept the
    grade silent longest is the running test, and a lane that has finished drops out."""
    import json

    from autograder.judge_process import launcher

    clock = [100.0]
    monkeypatch.setattr(launcher.time, "monotonic", lambda: clock[0])
    progress = launcher.Progress(str(tmp_path / "progress"))

    def started(module, title, lane, at):
        clock[0] = at
        with open(progress.path, "a", encoding="utf-8") as log:
            log.write(json.dumps([module, title, lane]) + "\n")
        progress.poll()

    started("amp_update", "the loop", 1, 101.0)
    started("loss_scaler", "quick one", 2, 102.0)
    assert (progress.current, progress.since) == (("amp_update", "the loop"), 101.0)
    started("loss_scaler", "next one", 2, 103.0)
    started(None, None, 2, 104.0)  # loss_scaler's lane is done
    assert progress.current == ("amp_update", "the loop")
    started("amp_update", "after the loop", 1, 130.0)
    assert (progress.current, progress.since) == (("amp_update", "after the loop"), 130.0)
    started(None, None, 1, 131.0)
    started("amp_training_step", "in turn", 3, 132.0)  # a lane of its own, the only one left
    assert (progress.current, progress.since) == (("amp_training_step", "in turn"), 132.0)
