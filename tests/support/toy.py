"""The tests' second assignment (tests/toy_assignment: one module, toy_sum, with
TODOs 1 and 2), for engine tests that need an assignment to grade but not this
chapter: a toy submission is one small file, and its grade runs two tests.

``$AUTOGRADER_ASSIGNMENT`` picks the assignment; :func:`active` switches it for
a block of this process, :func:`env` for a command's environment."""
import contextlib
import os
import pathlib

from autograder import active_assignment

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = "tests.toy_assignment"
FOLDER = ROOT / "tests" / "toy_assignment"
MODULE = "toy_sum"
SOLUTION = (FOLDER / "solutions" / f"{MODULE}.py").read_text(encoding="utf-8")
STUB = (FOLDER / "exercises" / f"{MODULE}.py").read_text(encoding="utf-8")
# TODO 1 solved, TODO 2 still the stub's: one test passes, one fails.
HALF_DONE = STUB.replace('raise NotImplementedError("TODO 1: add")', "return a + b")
assert HALF_DONE != STUB, "the stub of TODO 1 changed: HALF_DONE must follow it"
HANGS = "while True:\n    pass\n"  # never finishes importing
ENDLESS_ADD = "def add(a, b):\n    while True:\n        pass\n"  # imports; its calls never return


def submission(folder, source=SOLUTION):
    """A toy submission in ``folder``: toy_sum.py holding ``source``."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{MODULE}.py").write_text(source, encoding="utf-8")
    return folder


def box_spec(tmp_path, source=SOLUTION):
    """The box spec of toy_sum holding ``source``, taken into a grading area under
    ``tmp_path`` with a uid of its own: for a Sandbox on the toy's boxes."""
    from support.helpers import taken_in

    with active():
        return taken_in(tmp_path, submission(tmp_path / "sub", source))[MODULE]


def env(base=None):
    """``base`` (default: this process's environment) with the toy as the assignment."""
    return dict(os.environ if base is None else base, **{active_assignment.ENV_VAR: PACKAGE})


@contextlib.contextmanager
def active():
    """The toy is the assignment this process grades inside the block; whatever was
    set before (or nothing) is restored after it."""
    before = os.environ.get(active_assignment.ENV_VAR)
    os.environ[active_assignment.ENV_VAR] = PACKAGE
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(active_assignment.ENV_VAR, None)
        else:
            os.environ[active_assignment.ENV_VAR] = before
