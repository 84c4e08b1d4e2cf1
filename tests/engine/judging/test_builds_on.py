"""What a chapter's suites use to say where a failure comes from: ``builds_on`` (this test builds
on an earlier TODO: blame it when its code is wrong on the same inputs) and ``raised_type`` (a
stub's NotImplementedError is a TODO not written yet, never a wrong exception)."""
import pytest

from autograder.authoring import Mistake, StudentCodeFailed, builds_on, expect, raised_type
from autograder.sandbox.client import Outcome, StudentError
from support import toy

STUB_OF_TODO_1 = StudentError("exception", "NotImplementedError", "TODO 1: add")


def failing_check():
    expect(False, "the norm is 25, not 5")


def passing_check():
    pass


def raising(error):
    def check():
        raise StudentCodeFailed(error, "toy_sum.py")
    return check


def test_a_failure_is_blamed_on_the_todo_it_builds_on_when_that_todo_is_wrong():
    with pytest.raises(Mistake) as raised, builds_on(1, failing_check):
        expect(False, "the clipped list is off")
    assert raised.value.todo == 1
    text = str(raised.value)
    assert "the clipped list is off" in text and "the norm is 25, not 5" in text


def test_the_same_check_failing_on_the_earlier_todo_is_said_once():
    with pytest.raises(Mistake) as raised, builds_on(1, failing_check):
        failing_check()
    assert raised.value.todo == 1 and str(raised.value) == "the norm is 25, not 5"


def test_a_failure_stays_the_tests_own_when_the_earlier_todo_is_right():
    with pytest.raises(Mistake) as raised, builds_on(1, passing_check):
        expect(False, "the clipped list is off")
    assert raised.value.todo is None and str(raised.value) == "the clipped list is off"


def test_a_failure_that_names_its_todo_is_left_as_it_is():
    with pytest.raises(Mistake) as raised, builds_on(1, failing_check):
        expect(False, "seen by TODO 2's own check", todo=2)
    assert raised.value.todo == 2


def test_nested_blocks_ask_the_innermost_todo_first():
    asked = []

    def check(todo):
        def run():
            asked.append(todo)
            expect(False, f"TODO {todo} is wrong")
        return run

    with pytest.raises(Mistake) as raised, builds_on(2, check(2)), builds_on(1, check(1)):
        expect(False, "the plan is off")
    assert asked == [1] and raised.value.todo == 1


def test_an_earlier_todo_that_raises_is_blamed_and_a_stub_says_it_is_not_written():
    with toy.active():
        with pytest.raises(Mistake) as raised, builds_on(1, raising(StudentError("exception", "ZeroDivisionError"))):
            expect(False, "the total is off")
        assert raised.value.todo == 1 and "ZeroDivisionError" in str(raised.value)
        with pytest.raises(StudentCodeFailed) as stub, builds_on(1, raising(STUB_OF_TODO_1)):
            expect(False, "the total is off")
        assert stub.value.error is STUB_OF_TODO_1
        with pytest.raises(Mistake) as hung, builds_on(1, raising(StudentError("timeout", message="20"))):
            expect(False, "the total is off")
        assert hung.value.todo is None, "a hang says nothing about the earlier TODO's result"


def test_raised_type_tells_a_stub_from_a_wrong_exception():
    with toy.active():
        assert raised_type(Outcome(ok=True, value=3), "toy_sum.py") is None
        assert raised_type(Outcome(ok=False, error=StudentError("exception", "TypeError", "bad")), "toy_sum.py") \
            == "TypeError"
        with pytest.raises(StudentCodeFailed) as stub:
            raised_type(Outcome(ok=False, error=STUB_OF_TODO_1), "toy_sum.py")
        assert stub.value.error is STUB_OF_TODO_1
        # A NotImplementedError that names no TODO of the chapter is an answer like any other.
        assert raised_type(Outcome(ok=False, error=StudentError("exception", "NotImplementedError", "TODO 99")),
                           "toy_sum.py") == "NotImplementedError"
