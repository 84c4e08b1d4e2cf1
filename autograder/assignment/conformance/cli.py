"""``python -m autograder conformance [--submission DIR] [--lang zh|en]``: the chapter's
framework conformance check on a student's ``amp_update.py``.

The student's module runs in a sandbox box, started and called exactly as the
grader does (:func:`autograder.judging.engine.grade_submission`); GradScaler runs here,
in the judge process (:mod:`autograder.assignment.conformance.check`). Exit status: 0 when
all four checks pass, 1 when one fails, 2 for bad usage.
"""
import pathlib
import tempfile

from autograder import locations
from autograder.i18n import LANGUAGES, resolve_language, set_language
from autograder.i18n import text as t

REPOSITORY_ROOT = locations.REPO_ROOT


def add_parser(subparsers):
    from autograder.i18n import help_language

    lang = help_language(str(REPOSITORY_ROOT))
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


def check_submission(folder, boxes=None, limits=None):
    """``(verdicts, problem)`` for ``folder``'s amp_update.py: the four verdicts, or None and
    why the module could not be checked (a Message)."""
    from autograder.assignment.conformance import check as conformance_check
    from autograder.intake import submission
    from autograder.judging.engine import limits_from_env, preload_judge
    from autograder.sandbox.confine import limits as os_limits
    from autograder.sandbox import uids
    from autograder.sandbox.boxes import start_boxes
    from autograder.sandbox.client import Sandbox

    own_boxes = boxes is None
    if own_boxes:
        boxes = start_boxes()  # first: the zygote holds nothing of the judge
    try:
        preload_judge()
        os_limits.protect_judge()
        uid = uids.allocate(1)[0]
        with tempfile.TemporaryDirectory(prefix="amp-conformance-") as area:
            specs, _notes = submission.take(folder, area, uid, uid)
            spec = specs["amp_update"]
            if spec.get("problem") or not spec.get("present"):
                from autograder.judging import call_errors
                from autograder.sandbox.client import StudentError

                return None, call_errors.describe(StudentError("missing", message=spec.get("problem") or ""),
                                                  conformance_check.FILE)
            student = Sandbox("amp_update", spec, boxes, limits or limits_from_env())
            try:
                return conformance_check.run(student), None
            finally:
                student.close()
                uids.kill_leftovers(uid)
    finally:
        if own_boxes:
            boxes.close()


def render(verdicts, lang, width=None):
    """The verdicts, each failure with the TODO to look at, wrapped to ``width``
    (default: the terminal's)."""
    from autograder.assignment.conformance.check import CHECKS, FILE
    from autograder.judging import todo_graph
    from autograder.reports import terminal, wrap

    width = terminal.terminal_width(width)
    lines = wrap.wrap(t("Framework conformance of {file} with torch.amp.GradScaler('cpu') (the chapter's "
                        "check_amp_framework_conformance, end of Step 4):", lang, file=FILE), width)
    for verdict in verdicts:
        mark = t("PASS", lang) if verdict.passed else t("FAIL", lang)
        lines += wrap.wrap(f"  [{mark}] {verdict.name}: {CHECKS[verdict.name].render(lang)}", width, hang="     ")
        if verdict.reason is not None:
            reason = verdict.reason.render(lang)
            if verdict.todo and not verdict.unwritten:
                reason = t("TODO {todo} ({title}): {reason}", lang, todo=verdict.todo,
                           title=todo_graph.title(verdict.todo) or "", reason=reason)
            lines += wrap.wrap_hanging(reason, width, "         ")
    failed = [verdict.name for verdict in verdicts if not verdict.passed]
    lines += wrap.wrap(t("{failed} of {total} checks failed: {names}.", lang, failed=len(failed), total=len(verdicts),
                         names=", ".join(failed)) if failed else t("All {total} checks passed.", lang,
                                                                   total=len(verdicts)), width)
    return "\n".join(lines)


def run(args):
    from autograder.judge_process.preflight import default_submission, usage_problem
    from autograder.reports.safe_text import print_report, warn

    lang = resolve_language(args.lang, root=str(REPOSITORY_ROOT))
    set_language(lang)
    folder = pathlib.Path(args.submission or default_submission())
    problem = usage_problem(folder, lang)
    if problem:
        warn(problem)
        return 2
    verdicts, problem = check_submission(folder)
    if problem is not None:
        warn(problem.render(lang))
        return 2
    print_report(render(verdicts, lang))
    return 0 if all(verdict.passed for verdict in verdicts) else 1
