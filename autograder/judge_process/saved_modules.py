"""After a save, ``watch`` grades again only the modules that were saved.

Each module of the contract is graded on its own: its tests call only its own
module, in boxes of its own, with cases drawn from the session's one seed (what
``grade --module`` relies on too; a chapter whose tests reached another module's
code would break both). So when the saved files are all contract
modules, the others' results from the last grade still hold -- the same code,
the same seed -- and only the saved ones are graded again; the report shown and
written is the last one with their results replaced.

Everything is graded again when that could be wrong: the first grade, after a
grade that failed, that holds a test the grader could not check or that raised
a flag (a TA flag from one module's source, processes left running: a flag
names no module, so which still hold cannot be told), when any other file was
saved (a helper several modules may import), and when another Python file of
the folder names a saved module (it may import or read it).
"""
import itertools
import pathlib
import re
from dataclasses import replace

from autograder.sandbox import isolation

# A folder this large is not a student's three modules: grade everything.
_MAX_FILES = 200
_MAX_BYTES = 2_000_000


def regrade_only(saved, previous, modules, folder, contract):
    """The modules to grade after the files ``saved`` changed (their names), when the
    last report shown is ``previous``; None: grade ``modules`` (the session's: all of
    the ``contract`` modules when None) again."""
    if previous is None or not saved or any(test.fault or test.module == "grader" for test in previous.tests):
        return None  # no whole grade to keep results from
    if previous.flags:
        return None  # a flag names no module: it cannot be told which of them still hold
    by_file = {f"{module}.py": module for module in contract}
    if not all(name in by_file for name in saved):
        return None
    session = [module for module in contract if not modules or module in modules]
    chosen = [module for module in session if f"{module}.py" in saved]
    if not chosen or chosen == session or _named_elsewhere(folder, chosen):
        return None  # nothing of the session's, or all of it
    return chosen


def _named_elsewhere(folder, chosen):
    """Whether a Python file of ``folder`` other than a chosen module's own names one
    of them (or the folder cannot be read, or is too large to read)."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(module) for module in chosen) + r")\b")
    folder = pathlib.Path(folder)
    try:
        paths = list(itertools.islice(folder.rglob("*.py"), _MAX_FILES + 1))
        if len(paths) > _MAX_FILES:
            return True
        for path in paths:
            if path.relative_to(folder).parts[0] == "tests" or (path.parent == folder and path.stem in chosen):
                continue  # the public tests are the course's; a module may name itself
            if not path.is_file():  # a pipe or a device would block the read
                return True
            with open(path, "rb") as handle:
                data = handle.read(_MAX_BYTES + 1)
            if len(data) > _MAX_BYTES or pattern.search(data.decode("utf-8", "replace")):
                return True
    except OSError:
        return True
    return False


def merged(previous, report, regraded):
    """``report`` (a grade of the ``regraded`` modules only) with ``previous``'s results
    for every other module, in ``previous``'s order."""
    fresh = {}
    for test in report.tests:
        fresh.setdefault(test.module, []).append(test)
    tests = []
    for test in previous.tests:
        if test.module in regraded:
            tests += fresh.pop(test.module, [])
        elif test.module != "grader":
            tests.append(test)
    tests += [test for group in fresh.values() for test in group]  # a module new to the report

    def kept(field):
        return {**{module: value for module, value in getattr(previous, field).items() if module not in regraded},
                **getattr(report, field)}

    return replace(report, tests=tests, diagnosis=kept("diagnosis"), hidden_not_run=kept("hidden_not_run"),
                   printed=kept("printed"), lab=report.lab or previous.lab,
                   isolation=isolation.combine([previous.isolation, report.isolation]))
