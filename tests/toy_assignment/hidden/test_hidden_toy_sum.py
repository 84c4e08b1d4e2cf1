"""Hidden test of toy_sum: inputs drawn from the test's seed."""
import random

import pytest

from autograder.authoring import _, expect

from .. import checks

pytestmark = [pytest.mark.module("toy_sum"), pytest.mark.visibility("hidden")]


@pytest.mark.points(2)
@pytest.mark.todo(2)
@pytest.mark.hint(_("total: start from 0 and add every item with add."))
def test_total(student, seed):
    """total of a random list"""
    numbers = [random.Random(seed).randint(-50, 50) for _ in range(5)]
    got = checks.answer(student, "total", numbers)
    expect(got == sum(numbers), _("total({numbers}) should be {want}, got {got}.",
                                  numbers=repr(numbers), want=sum(numbers), got=repr(got)))
