"""The grader's command line as the tests call it: ``python -m autograder ...`` in a child
process as a TA types it, or its ``main`` in the test's own process where a stand-in patched
there must reach the judge."""
import subprocess
import sys

from support.helpers import ROOT


def autograder_command(*args, cwd=ROOT, env=None, timeout=600, **options):
    """``python -m autograder ARGS`` (each turned into a string) with its output captured as text.
    ``env`` is the child's whole environment (None: this process's); ``options`` go to
    subprocess.run as they are (``input=...``)."""
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, **options)


def main_in_process(*args):
    """The command line in this process, judge included (stand-ins patched here reach it)."""
    from autograder.__main__ import main
    from autograder.cli import grade_many

    saved, grade_many.JUDGE_PROCESS = grade_many.JUDGE_PROCESS, False
    try:
        return main([str(a) for a in args])
    finally:
        grade_many.JUDGE_PROCESS = saved


def autograder_commands(*runs, jobs=2, **common):
    """Several ``python -m autograder`` command lines (argument tuples) at once, ``jobs`` at a
    time (each is one process on one core of two): their completed processes, in order.
    ``common`` goes to each :func:`autograder_command`."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda args: autograder_command(*args, **common), runs))
