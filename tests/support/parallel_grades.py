"""Many in-process grades spread over the machine's CPUs, for tests that grade hundreds
of submissions (the mutants).

An in-process grade keeps about one CPU busy (the judge and the box take turns), so on
two cores one stays idle. :func:`grade_all` splits the grades into one share per CPU;
each share is graded by a fresh child (``support.forked_runs.code_runs``: forked from
an interpreter that imported torch and ran nothing) with sandbox boxes of its own, as
``grade_dir`` grades, its suites collected once for all its grades; the reports come back
pickled, in the order of the jobs."""
import os
import pathlib
import pickle

from support.forked_runs import code_runs

TESTS = pathlib.Path(__file__).resolve().parents[1]

_SHARE = """
import sys
sys.path.insert(0, {tests!r})
from support.parallel_grades import grade_share
grade_share({jobs!r}, {reports!r})
"""


def grade_all(jobs, workdir):
    """``jobs``: [(overrides, seed, modules)] or [(overrides, seed, modules, limits)] as
    ``grade_dir`` takes them (modules: None for all; limits: the sandbox's, None for the
    grader's own) -> [GradeReport] in the same order. ``workdir``: an empty folder for
    the submissions and the shares' files."""
    workdir = pathlib.Path(workdir)
    count = max(1, min(len(jobs), len(os.sched_getaffinity(0))))
    cases = {}
    for share in range(count):
        folder = workdir / f"share{share}"
        folder.mkdir()
        with open(folder / "jobs.pickle", "wb") as out:
            pickle.dump(jobs[share::count], out)
        cases[f"share{share}"] = _SHARE.format(tests=str(TESTS), jobs=str(folder / "jobs.pickle"),
                                               reports=str(folder / "reports.pickle"))
    done = code_runs(cases, timeout=1800)
    reports = [None] * len(jobs)
    for share, name in enumerate(cases):
        code, output = done[name]
        assert code == 0, f"{name} of the grades failed:\n{output[-3000:]}"
        with open(workdir / name / "reports.pickle", "rb") as shared:
            reports[share::count] = pickle.load(shared)
    return reports


def grade_share(jobs_path, reports_path):
    """(A share's child) Grade its jobs on boxes of its own; pickle the reports."""
    from autograder.judging import suites
    from autograder.judging.engine import grade_submission
    from autograder.sandbox.boxes import start_boxes
    from support.helpers import make_submission

    folder = pathlib.Path(jobs_path).parent
    with open(jobs_path, "rb") as given:
        jobs = pickle.load(given)

    def grade_each():
        reports = []
        for index, (overrides, seed, modules, *limits) in enumerate(jobs):
            submission = folder / f"submission{index}"
            submission.mkdir()
            make_submission(submission, overrides, ())
            reports.append(grade_submission(submission, seed=seed, boxes=boxes, modules=modules,
                                            limits=limits[0] if limits else None))
        return reports

    boxes = start_boxes()
    try:
        # The suites collected once for the share, as a slot of grade-many and a watch session
        # grade one submission after another (tests/engine/judging/test_suites_collected.py).
        reports = suites.kept_collected(True, grade_each)
    finally:
        boxes.close()
    with open(reports_path, "wb") as out:
        pickle.dump(reports, out)
