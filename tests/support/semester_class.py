"""A semester of a class, fast: real git repositories of the toy assignment (one module,
toy_sum) whose commits say the score a stand-in grader gives them, graded by the real
``grade-many`` command line in this process.

A commit's ``toy_sum.py`` holds ``POINTS = n`` (and optionally ``UNWRITTEN = True``: the
stand-in's diagnosis then says the TODO is not written yet); the stand-in
(:func:`stand_in_grading`) replaces only the grading processes: everything around
them -- which commit counts for whom, the records, the outputs -- is the command's own.
The real grader grades the chapter's class in tests/end_to_end/test_semester_walk.py.
"""
import pathlib
import re

from support import toy
from support.git_class import commit, init

MODULE = toy.MODULE
FULL = 100


def source(points, unwritten=False):
    return f"POINTS = {points}\n" + ("UNWRITTEN = True\n" if unwritten else "")


def student(root, name, history, existing=False):
    """A repository ``root/name`` with one commit per ``(when, points)`` of ``history``
    (``points`` may be a ``(points, unwritten)`` pair; ``existing``: commits added to the
    repository there); returns the shas, oldest first."""
    repo = pathlib.Path(root) / name if existing else init(pathlib.Path(root) / name)
    shas = []
    for when, points in history:
        points, unwritten = points if isinstance(points, tuple) else (points, False)
        shas.append(commit(repo, {f"exercises/{MODULE}.py": source(points, unwritten)}, when, f"{points}"))
    return shas


def _points(submission):
    path = pathlib.Path(submission) / f"{MODULE}.py"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    found = re.search(r"POINTS = (\d+)", text)
    return (int(found.group(1)) if found else 0), "UNWRITTEN = True" in text


def stand_in_report(submission, seed, lang="en", rescore=None):
    """The GradeReport the stand-in gives ``submission``: one test worth FULL (``rescore``: a
    changed grader, the points it gives for the points a commit declares)."""
    from autograder.judging.results import GradeReport, TestResult

    points, unwritten = _points(submission)
    points = rescore(points) if rescore else points
    test = TestResult(name=f"{MODULE}: the sum", module=MODULE, max_score=float(FULL), score=float(points),
                      passed=points == FULL, output="" if points == FULL else "wrong sum", visibility="visible",
                      test_id="test_sum")
    diagnosis = {} if points == FULL else {MODULE: {"todo": 2 if unwritten else 1, "test": test.name,
                                                    "message": "not written yet" if unwritten else "wrong sum",
                                                    **({"unwritten": True} if unwritten else {})}}
    return GradeReport(tests=[test], seed=seed, submission=str(submission), lang=lang, diagnosis=diagnosis,
                       isolation={"confined": True})


def stand_in_grading(monkeypatch, seen=None, rescore=None):
    """Grade every planned job with :func:`stand_in_report` in this process; ``seen``
    (a list) receives each graded submission folder; ``rescore``: see :func:`stand_in_report`."""
    from autograder.batch import grade_class, jobs
    # autograder/similarity/pairs.py reads the active assignment once, when first imported:
    # imported here, before the toy is active, it keeps the chapter for the tests after these.
    import autograder.similarity.pairs  # noqa: F401

    def grade_planned(planned, output_dir, bar, warnings, info, settings, isolation="fork", boxes=None):
        info["isolation"] = {"confined": True}
        for job in planned:
            job.prepare()
            if seen is not None:
                seen.append(str(job.submission))
            jobs._write_report(stand_in_report(job.submission, job.seed, job.lang, rescore), job.results)
            grade_class._finish(job, (jobs.OK, ""))
            bar.update(job.label, jobs.OK)

    monkeypatch.setattr(grade_class, "grade_planned", grade_planned)
    # the PNG charts are not what these classes are about: none drawn (a fork and matplotlib each run)
    from autograder.class_reports import charts, write

    monkeypatch.setattr(write, "start_charts", lambda output_dir, *_: charts._Pending(output_dir, {}, None))
    monkeypatch.setenv("AUTOGRADER_GRADER_GUARD", "0")
    monkeypatch.setenv("AUTOGRADER_ASSIGNMENT", toy.PACKAGE)


def graded_once(tmp_path_factory, name, build):
    """For a module-scoped fixture: ``build(folder, monkeypatch)`` with the stand-in grading
    active, its result yielded and the stand-in kept until the fixture ends (one class graded
    for every test of a file that only reads it)."""
    import pytest

    with pytest.MonkeyPatch.context() as monkeypatch:
        stand_in_grading(monkeypatch)
        yield build(tmp_path_factory.mktemp(name), monkeypatch)
