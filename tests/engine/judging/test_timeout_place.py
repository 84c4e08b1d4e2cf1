"""Where a stopped call was (issue 45): a call that runs out of time (or prints without end)
is diagnosed at the TODO whose code was running then, named by file, line and function in
both languages, with the student's frames; an exception the given code raises because of the
student's call goes to that call's TODO. On the toy assignment (TODO 2, total, builds on TODO
1, add): a loop in add reached only through total is TODO 1's, not the failing test's TODO 2."""
import re

import pytest

from autograder.i18n import _
from autograder.judging import feedback
from autograder.judging.results import TestResult as Result
from autograder.sandbox.client import Limits, StudentError
from support import toy

# The toy's stub, written: add loops when total calls it (total starts from 0)
LOOPS_WHEN_TOTAL_CALLS = toy.STUB.replace(
    'raise NotImplementedError("TODO 1: add")',
    "if a == 0:\n        while True:\n            pass\n    return a + b").replace(
    'raise NotImplementedError("TODO 2: total")',
    "result = 0\n    for number in numbers:\n        result = add(result, number)\n    return result")
LOOP = LOOPS_WHEN_TOTAL_CALLS.splitlines().index("        while True:") + 1  # the loop's line (its body: LOOP + 1)
CALL = LOOPS_WHEN_TOTAL_CALLS.splitlines().index("        result = add(result, number)") + 1
# (slowly enough that the judge sees the print storm before the log file's own limit stops it)
PRINTS_WHEN_TOTAL_CALLS = LOOPS_WHEN_TOTAL_CALLS.replace(
    "            pass\n", "            print('a' * 1000)\n            __import__('time').sleep(0.001)\n")
SHORT = Limits(call_timeout=0.5)


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.slow)])
def test_a_loop_is_diagnosed_at_the_todo_it_runs_in(toy_grade, lang):
    report = toy_grade(LOOPS_WHEN_TOTAL_CALLS, limits=SHORT, lang=lang)
    total = next(test for test in report.tests if test.test_id == "test_total")
    assert not total.passed and total.error.kind == "timeout"
    assert next(test for test in report.tests if test.test_id == "test_add").passed
    diagnosis = report.diagnosis["toy_sum"]
    assert diagnosis["todo"] == 1 and total.blamed == 1  # the loop is in add (TODO 1), not in total
    # the loop's line: its "while" or its body, wherever the interpreter was
    at = f"({LOOP}|{LOOP + 1})"
    where = {"en": rf"exercises/toy_sum\.py line {at}, in add \(TODO 1\)",
             "zh": rf"exercises/toy_sum\.py 第 {at} 行，add 中（TODO 1）"}[lang]
    assert re.search(where, diagnosis["message"]) and re.search(where, total.output)
    lines = total.output.splitlines()
    assert re.search(r"(while True:|pass)$", lines[2])  # the line itself, under the sentence
    # the student's frames (what --verbose shows in full): total's call, then the loop in add
    frames = {"en": [f"line {CALL}, in total: result = add(result, number)",
                     rf"line {at}, in add: (while True:|pass)"],
              "zh": [f"第 {CALL} 行，total 中：result = add(result, number)",
                     rf"第 {at} 行，add 中：(while True:|pass)"]}[lang]
    assert lines[-2].strip() == frames[0] and re.fullmatch(frames[1], lines[-1].strip())
    assert "worker.py" not in total.output and "autograder" not in total.output  # never the grader's frames


def test_a_print_storm_is_placed_too(toy_grade):
    report = toy_grade(PRINTS_WHEN_TOTAL_CALLS, limits=SHORT)
    total = next(test for test in report.tests if test.test_id == "test_total")
    assert total.error.kind == "output" and report.diagnosis["toy_sum"]["todo"] == 1
    assert re.search(rf"was stopped at exercises/toy_sum\.py line ({LOOP + 1}|{LOOP + 2}), in add \(TODO 1\)",
                     total.output)


def _failed(todo, error, points=1.0):
    return Result(name=_("a test"), module="toy_sum", max_score=points, score=0.0, passed=False, output="",
                  todo=todo, blamed=todo, hint=_("the hint of TODO {todo}", todo=todo), error=error)


def test_a_later_short_timeout_follows_the_first_when_its_place_is_unknown():
    """Without a stack (a student who disabled it), the calls that met the short limit after a
    timeout are no evidence against their own TODO: they follow the first one."""
    with toy.active():
        first = _failed(1, StudentError("timeout", "", "20"))
        later = _failed(2, StudentError("timeout", "after_timeout", "0.5"))
        diagnosis = feedback.finish([first, later], "en", "exercises", {"toy_sum": toy.SOLUTION})
    assert later.blamed == 1 and diagnosis["toy_sum"]["todo"] == 1
    assert "the hint of TODO 2" not in later.output


def test_the_given_codes_rule_broken_by_a_call_goes_to_the_calls_todo():
    """The stub's given code (above a function's first TODO comment) raised because a written
    TODO called it wrongly: the call's TODO, with the call's line, not the given code's."""
    source = ('def add(a, b):\n    if b is None:\n        raise ValueError("b is None")\n    # TODO 1: add\n'
              '    return a + b\n\n\ndef total(numbers):\n    # TODO 2: total\n    return add(0, None)\n')
    traceback = ('  File "toy_sum.py", line 10, in total\n    return add(0, None)\n'
                 '  File "toy_sum.py", line 3, in add\n    raise ValueError("b is None")\n'
                 'ValueError: b is None\n  File "toy_sum.py", line 5, in add\n')  # the message's lines: ignored
    with toy.active():
        result = _failed(1, StudentError("exception", "ValueError", "b is None", traceback, line=3))
        diagnosis = feedback.finish([result], "en", "exercises", {"toy_sum": source})
    assert result.blamed == 2 and diagnosis["toy_sum"]["todo"] == 2
    assert "Your call at exercises/toy_sum.py line 10, in total (TODO 2)" in result.output
    assert "line 10: return add(0, None)" in result.output and "line 3:" not in result.output
    # raised in a TODO's own code: the test's TODO as before
    own = traceback.replace("line 3, in add", "line 5, in add")
    with toy.active():
        result = _failed(1, StudentError("exception", "ValueError", "b is None", own, line=5))
        feedback.finish([result], "en", "exercises", {"toy_sum": source})
    assert result.blamed == 1


def test_a_loop_that_calls_the_given_code_is_placed_at_its_own_line():
    """Stopped while in given code that a TODO's loop calls: the loop's line and TODO are named."""
    source = ('def add(a, b):\n    if b is None:\n        raise ValueError("b is None")\n    # TODO 1: add\n'
              '    return a + b\n\n\ndef total(numbers):\n    # TODO 2: total\n    while True:\n'
              '        add(0, 1)\n')
    stack = '  File "toy_sum.py", line 11, in total\n  File "toy_sum.py", line 2, in add\n'
    with toy.active():
        result = _failed(2, StudentError("timeout", "", "20", stack, line=2))
        feedback.finish([result], "en", "exercises", {"toy_sum": source})
    assert "running exercises/toy_sum.py line 11, in total (TODO 2)" in result.output
    assert result.output.splitlines()[-1].strip() == "line 2, in add: if b is None:"
