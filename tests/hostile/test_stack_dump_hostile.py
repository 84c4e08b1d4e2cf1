"""A submission that silences or forges the stack its box dumps when a call runs out of
time (autograder.intake.stack_dump): the grade goes on as it did before there was a stack,
asks a silenced module only twice, and what a forged dump says is at most a wrong place in
the student's own file, in plain characters."""
import pytest

from autograder.sandbox import boxes
from autograder.sandbox.client import Limits, Sandbox
from support import toy

pytestmark = [pytest.mark.hostile, pytest.mark.slow]  # loops wait out their limits

LOOPING_ADD = '''
def add(a, b):
    # TODO 1: return the sum of a and b.
    while True:
        pass


def total(numbers):
    # TODO 2: add up the numbers with add(), starting from 0.
    return sum(numbers)
'''
SILENCED = "import signal\nsignal.signal(signal.SIGUSR2, signal.SIG_IGN)\n" + LOOPING_ADD
# The student's own handler replaces faulthandler's and writes a dump of its own to every socket it has.
FORGED = '''import os, signal, stat

def forge(signum, frame):
    mine = os.path.abspath(__file__)
    text = ("Current thread 0x1 (most recent call first):\\n"
            f'  File "{mine}", line 3 in \\x1b]0;owned\\x07evil\\n'
            '  File "/grader/autograder/judging/judge.py", line 10 in check\\n'
            f'  File "{mine}", line 4 in forged_place\\n').encode()
    for fd in range(3, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.write(fd, text)
        except OSError:
            pass

signal.signal(signal.SIGUSR2, forge)
''' + LOOPING_ADD
SHORT = Limits(call_timeout=0.5)


def test_a_silenced_module_is_asked_for_its_stack_twice(tmp_path, toy_boxes, monkeypatch):
    asked = []
    monkeypatch.setattr(boxes.Box, "stack", lambda box, stack=boxes.Box.stack: asked.append(1) or stack(box))
    with toy.active():
        sandbox = Sandbox(toy.MODULE, toy.box_spec(tmp_path, SILENCED), toy_boxes, SHORT)
        try:
            outcomes = [sandbox.call("add", 1, 2) for _ in range(3)]
        finally:
            sandbox.close()
    assert [outcome.error.kind for outcome in outcomes] == ["timeout"] * 3
    assert not any(outcome.error.traceback for outcome in outcomes) and len(asked) == 2


def test_a_silenced_stack_leaves_the_feedback_as_it_was(toy_grade):
    report = toy_grade(SILENCED, limits=SHORT)
    add = next(test for test in report.tests if test.test_id == "test_add")
    assert add.error.kind == "timeout" and not add.error.traceback and add.blamed == 1
    assert "did not finish within 0.5 s: look for an endless loop" in add.output
    assert report.diagnosis["toy_sum"]["todo"] == 1


def test_a_forged_stack_is_only_a_place_in_the_students_own_file(toy_grade):
    report = toy_grade(FORGED, limits=SHORT)
    add = next(test for test in report.tests if test.test_id == "test_add")
    assert add.error.kind == "timeout"
    assert "line 4, in forged_place" in add.output  # believed only as far as showing it
    assert "\x1b" not in add.output and "owned" not in add.output and "judge.py" not in add.output
