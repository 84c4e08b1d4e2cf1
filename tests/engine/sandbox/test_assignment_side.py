"""The worker side the sandbox reads (autograder/sandbox/assignment_side.py) is the
assignment being graded now, as current() is: a process that grades two
assignments (the tests grade the toy and the chapter in one session) must not
keep the first one's guards and answer shapes for the second."""
from autograder.sandbox import assignment_side
from support import toy


def test_the_worker_side_follows_the_assignment_being_graded():
    graded_now = assignment_side.declared()
    with toy.active():
        assert assignment_side.declared() is None  # the toy declares none
    assert assignment_side.declared() is graded_now
    with toy.active():
        assert assignment_side.guard(toy.MODULE) is None and assignment_side.answer_shape("any", {}) is None
