"""``grade`` runs its judge in a clean process of its own (:mod:`autograder.judge_process.launcher`).

The command-line process (A) never meets student code; the judge process (B)
imports torch once, forks the sandbox's zygote before it has received anything
of the job, and only then reads the job, loads the suites and grades. B sends
the report back as JSON; A writes ``results.json``, the Classroom output and
the summary after B and every process of the submission are gone.

One torch import serves both the judge and the boxes: that is what keeps a
grade close to the cost of ``import torch`` (benchmarks/bench_grade.py).

While it waits, A reads which test B is running (B appends a line to a file of
A's private folder as each test starts: :class:`~autograder.judge_process.launcher.Progress`)
and hands it to the caller's ``on_wait``, which shows it once a test has run for a second.
"""
import os

from autograder.i18n import text as t
from autograder.judge_process import launcher
from autograder.judge_process.launcher import GradingFailed, Progress  # noqa: F401  (their home before)
from autograder.judging.results import GradeReport, TestResult


def grade_job(submission, seed, include_hidden, flags, lang="en", modules=None, display_dir=None):
    """What B is asked to grade (JSON)."""
    return {"submission": os.path.abspath(submission), "seed": seed, "include_hidden": include_hidden,
            "flags": list(flags or []), "lang": lang, "modules": list(modules) if modules else None,
            "display": display_dir}


def report_from(answer):
    """(A) B's answer as a :class:`GradeReport`."""
    try:
        return GradeReport.from_gradescope(answer)
    except (ValueError, TypeError, AttributeError) as exc:
        raise GradingFailed(f"the grading process sent an unreadable report ({exc})") from None


def grade_in_clean_process(submission, seed, include_hidden, flags, lang="en", modules=None, display_dir=None,
                           on_wait=None):
    """(A) Grade ``submission`` in a fresh grading process; returns its :class:`GradeReport`.
    ``flags``: the tamper flags, or a function that returns them, called once B has started
    (A's own preparation then overlaps B's import of torch; see :func:`launcher.run_once`).
    ``on_wait(progress)`` is called every few hundredths of a second while B grades."""
    job = grade_job(submission, seed, include_hidden, [], lang, modules, display_dir)
    meanwhile = (lambda: {"flags": list(flags() or [])}) if callable(flags) else None
    if meanwhile is None:
        job["flags"] = list(flags or [])
    return report_from(launcher.run_once(f"{__name__}:serve", job, "autograder-grading-", on_wait=on_wait,
                                         meanwhile=meanwhile))


def crash_report(submission, seed, message, lang="en"):
    """The report of a grade the grader could not finish (``message`` says why): one
    failed test, no points, and what to do next (inside GitHub Actions: push again)."""
    advice = (t("Your work is not lost: push again or ask the course staff.", lang)
              if os.environ.get("GITHUB_ACTIONS") == "true"
              else t("Your work is not lost: fix what the message says and grade again, or ask the course "
                     "staff.", lang))
    test = TestResult(name=t("grader: could not grade", lang), module="grader", max_score=0.0, score=0.0,
                      passed=False, visibility="visible",
                      output=t("The grader stopped before grading ({problem}).", lang, problem=message) + " " + advice)
    return GradeReport(tests=[test], seed=seed or 0, submission=str(submission), lang=lang)


def grade(job, boxes):
    """(B) ``job``'s report (see :func:`grade_job`), graded with ``boxes``."""
    from autograder.judging.engine import grade_submission

    return grade_submission(job["submission"], seed=job["seed"], include_hidden=job["include_hidden"],
                            flags=job["flags"], boxes=boxes, lang=job.get("lang") or "en",
                            modules=job.get("modules"), display_dir=job.get("display"), apart=True)


def serve(boxes):
    """(B) Read the job, grade it, answer with its report."""
    from autograder.judging.plugin import report_progress_to

    job = launcher.read_job()
    report_progress_to(job.get("progress"))
    launcher.write_answer(job["result"], grade(job, boxes).to_gradescope())
    return 0
