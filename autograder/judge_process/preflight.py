"""What a command that grades one folder settles before it starts a judge: which
folder (``exercises/`` found from where the student stands), where the results
go (never into that folder), and whether this Python and this machine can grade
it at all (the requirements installed; the sandbox not switched to its
unconfined debugging path). ``grade``, ``watch`` and an assignment's own
commands (``conformance``) ask the same questions here.
"""
import os
import pathlib

from autograder import active_assignment, locations, python_range
from autograder.i18n import text as t


def default_submission(cwd=None):
    """``exercises`` of the working directory, the working directory itself when
    it is the exercises folder, else this repository's ``exercises``."""
    cwd = pathlib.Path(cwd or os.getcwd())
    if (cwd / "exercises").is_dir():
        return "exercises"
    if any((cwd / f"{module}.py").is_file() for module in active_assignment.current().modules) and cwd.name == "exercises":
        return str(cwd)
    return str(locations.REPO_ROOT / "exercises")


def default_results(submission, cwd=None):
    """results.json in the working directory, unless that is inside the
    submission folder: nothing is ever written into exercises/."""
    cwd = pathlib.Path(cwd or os.getcwd()).resolve()
    folder = pathlib.Path(submission).resolve()
    if cwd == folder or folder in cwd.parents:
        return str(folder.parent / "results.json")
    return "results.json"


def missing_requirements():
    """What this Python lacks to grade (torch, pytest, the catalogs' babel, rich's
    tables; tomli on 3.10): a laptop without the venv."""
    return python_range.missing_modules()


def usage_problem(submission, lang, allow_unconfined=False):
    """Why ``submission`` cannot be graded here (a message in ``lang``), or None."""
    from autograder.sandbox.environment import spawn_forgoes_confinement

    if spawn_forgoes_confinement() and not allow_unconfined:  # as grade-many refuses an unconfined class
        return t("AUTOGRADER_SANDBOX=spawn runs student code without this machine's confinement (namespaces, "
                 "Landlock, the syscall filter): it is for debugging the macOS and Windows path. Unset it to grade, "
                 "or pass --allow-unconfined to grade anyway (the report will say so).", lang)
    if not submission.is_dir():
        return t("--submission {folder}: no such folder. Run the grader from the repository root (the folder "
                 "holding exercises/ and autograder/), or pass --submission with the folder holding {files}.",
                 lang, folder=str(submission), files=", ".join(f"{m}.py" for m in active_assignment.current().modules))
    missing = missing_requirements()
    if missing:  # in both languages, from the standard library: babel (the catalogs) may be missing too
        return python_range.missing_text(missing)
    return None
