"""Visible test of toy_sum."""
import pytest

from autograder.authoring import _, expect

from .. import checks

pytestmark = [pytest.mark.module("toy_sum"), pytest.mark.visibility("visible")]


@pytest.mark.points(3)
@pytest.mark.todo(1)
@pytest.mark.hint(_("add: return a + b."))
def test_add(student):
    """add(2, 3) is 5"""
    got = checks.answer(student, "add", 2, 3)
    expect(got == 5, _("add(2, 3) should be 5, got {got}.", got=repr(got)))
