"""What the toy's visible and hidden suites share: a module of the chapter's own, which each
imports relatively (``from .. import checks``), so that it is found wherever the package is
(here ``tests.toy_assignment``, ``autograder.assignment`` in the toy's student template)."""
from autograder.authoring import value_of

FILE = "toy_sum.py"


def answer(student, function, *args):
    """What the student's ``function`` returned for ``args`` (a failed call fails the test)."""
    return value_of(student.call(function, *args), FILE)
