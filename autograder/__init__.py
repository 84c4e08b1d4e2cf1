"""A grading engine for exercise repositories (the assignment is :mod:`autograder.assignment`).

The package is imported first by ``python -m autograder``. Before anything else
it moves the current directory to the end of ``sys.path``: a student repository
is the working directory during grading, and a ``torch.py`` or ``pytest.py``
placed next to ``exercises/`` must never shadow the real packages in the judge.
"""
import os
import sys

# The grader writes no compiled caches into its own tree: any cache that appears
# there while a submission runs was planted, and the grader-file guard says so.
sys.dont_write_bytecode = True


def _demote_working_directory():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cwd = os.getcwd()
    demoted = []
    for entry in list(sys.path):
        resolved = os.path.abspath(entry or cwd)
        if resolved in (cwd, here):
            sys.path.remove(entry)
            demoted.append(entry)
    if demoted:
        sys.path.append(here)


_demote_working_directory()
