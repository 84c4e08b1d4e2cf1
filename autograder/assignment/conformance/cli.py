"""``python -m autograder conformance [--submission DIR] [--lang zh|en]``: the chapter's
framework conformance check on a student's ``amp_update.py``.

The check runs in a judge process started as ``grade`` starts one
(:func:`autograder.authoring.run_once`): the student's module runs in a sandbox
box, opened and called exactly as the grader does (:func:`autograder.authoring.open_session`);
GradScaler runs in the judge (:mod:`autograder.assignment.conformance.check`).
The judge answers with each verdict and its reason in the run's language; this
process prints them. Exit status: 0 when all four checks pass, 1 when one fails,
2 for bad usage.
"""
import os
import pathlib

from autograder.authoring import (LANGUAGES, REPO_ROOT, GradingFailed, help_language, print_report,
                                  resolve_language, set_language, warn, render as text_of, text as t)


def add_parser(subparsers):
    lang = help_language(str(REPO_ROOT))
    parser = subparsers.add_parser(
        "conformance", help=t("check amp_update.py against torch.amp.GradScaler (the chapter's optional check)", lang),
        description=t("Run the chapter's framework conformance check (check_amp_framework_conformance, end of "
                      "Step 4) on your amp_update.py: its four checks against torch.amp.GradScaler('cpu'), each "
                      "with pass or fail. It uses the chapter's inputs only, never the hidden tests. Exit status: "
                      "0 when all four pass, 1 when one fails, 2 for bad usage.", lang))
    parser.add_argument("--submission", default=None, metavar="DIR",
                        help=t("folder holding amp_update.py (default: exercises/ of this repository)", lang))
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help=t("language of the feedback (default: [tool.autograder] lang in pyproject.toml, "
                               "or $AUTOGRADER_LANG)", lang))
    parser.set_defaults(func=run)
    return parser


def check_submission(folder, boxes=None, limits=None, lang=None):
    """``(verdicts, problem)`` for ``folder``'s amp_update.py: the four verdicts, or None and
    why the module could not be checked (a Message). ``boxes``: a started box factory
    (default: one started here); ``lang``: the language set for the session."""
    from autograder.assignment.conformance import check as conformance_check
    from autograder.authoring import StudentError, call_errors, open_session

    with open_session(folder, boxes, limits=limits, lang=lang, prefix="amp-conformance-") as session:
        spec = session.specs["amp_update"]
        if spec.get("problem") or not spec.get("present"):
            return None, call_errors.describe(StudentError("missing", message=spec.get("problem") or ""),
                                              conformance_check.FILE)
        return conformance_check.run(session.sandboxes["amp_update"]), None


def render(verdicts, lang, width=None):
    """The verdicts, each failure with the TODO to look at, wrapped to ``width``
    (default: the terminal's). A reason is a message, or its text in ``lang``."""
    from autograder.assignment.conformance.check import CHECKS, FILE
    from autograder.authoring import terminal_width, todo_graph, wrap

    width = terminal_width(width)
    lines = wrap.wrap(t("Framework conformance of {file} with torch.amp.GradScaler('cpu') (the chapter's "
                        "check_amp_framework_conformance, end of Step 4):", lang, file=FILE), width)
    for verdict in verdicts:
        mark = t("PASS", lang) if verdict.passed else t("FAIL", lang)
        lines += wrap.wrap(f"  [{mark}] {verdict.name}: {CHECKS[verdict.name].render(lang)}", width, hang="     ")
        if verdict.reason is not None:
            reason = text_of(verdict.reason, lang)
            if verdict.todo and not verdict.unwritten:
                reason = t("TODO {todo} ({title}): {reason}", lang, todo=verdict.todo,
                           title=todo_graph.title(verdict.todo) or "", reason=reason)
            lines += wrap.wrap_hanging(reason, width, "         ")
    failed = [verdict.name for verdict in verdicts if not verdict.passed]
    lines += wrap.wrap(t("{failed} of {total} checks failed: {names}.", lang, failed=len(failed), total=len(verdicts),
                         names=", ".join(failed)) if failed else t("All {total} checks passed.", lang,
                                                                   total=len(verdicts)), width)
    return "\n".join(lines)


def serve(boxes):
    """(The judge process) Check the job's folder; answer with the verdicts, their
    reasons rendered in the job's language."""
    from autograder.authoring import read_job, write_answer

    job = read_job()
    verdicts, problem = check_submission(job["submission"], boxes, lang=job["lang"])
    answer = {"problem": None if problem is None else text_of(problem, job["lang"])}
    if verdicts is not None:
        answer["verdicts"] = [{"name": verdict.name, "passed": verdict.passed, "todo": verdict.todo,
                               "unwritten": verdict.unwritten,
                               "reason": None if verdict.reason is None else text_of(verdict.reason, job["lang"])}
                              for verdict in verdicts]
    write_answer(job["result"], answer)
    return 0


def run(args):
    from autograder.authoring import default_submission, run_once, usage_problem

    lang = resolve_language(args.lang, root=str(REPO_ROOT))
    set_language(lang)
    folder = pathlib.Path(args.submission or default_submission())
    problem = usage_problem(folder, lang)
    if problem:
        warn(problem)
        return 2
    try:
        answer = run_once(f"{__name__}:serve", {"submission": os.path.abspath(folder), "lang": lang},
                          "amp-conformance-")
    except GradingFailed as exc:
        warn(str(exc))
        return 1
    if answer.get("problem") is not None:
        warn(answer["problem"])
        return 2
    from autograder.assignment.conformance.check import Verdict

    verdicts = [Verdict(**verdict) for verdict in answer["verdicts"]]
    print_report(render(verdicts, lang))
    return 0 if all(verdict.passed for verdict in verdicts) else 1
