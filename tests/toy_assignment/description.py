"""Toy Sums: the tests' second assignment (see the package docstring)."""
from autograder.authoring import _

TITLE = _("Toy Sums")
MODULES = ("toy_sum",)
TODOS = {
    "toy_sum": {
        1: _("add: the sum of two numbers"),
        2: _("total: the sum of a list, built on add"),
    },
}
BUILDS_ON = {2: (1,)}
HIDDEN_POINTS = {"toy_sum": 2}
# The stubs (exercises/), the reference (solutions/) and the student README (README.md) are
# the ones beside this file; in an exported template, the template's own exercises/.
