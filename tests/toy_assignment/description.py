"""Toy Sums: the tests' second assignment (see the package docstring)."""
import pathlib

from autograder.authoring import REPO_ROOT, _

HERE = pathlib.Path(__file__).resolve().parent

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
# In this repository the stubs live next to the description; in an exported
# template they are the template's own exercises/.
EXERCISES_DIR = HERE / "exercises" if (HERE / "exercises").is_dir() else REPO_ROOT / "exercises"
SOLUTIONS_DIR = HERE / "solutions"
STUDENT_README = HERE / "README.md"
