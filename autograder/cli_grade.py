"""``python -m autograder grade [--submission DIR] [--results FILE] [--classroom]``.

Exit status: 0 whenever grading completed (whatever the score), 2 for bad
usage, 1 when the grader itself failed -- and even then a results file is
written, with one failed test that says so.
"""
import os
import pathlib
import sys
import traceback

from autograder import MODULES


def add_parser(subparsers):
    parser = subparsers.add_parser("grade", help="grade a submission (default: exercises/)",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("--submission", default="exercises", metavar="DIR",
                        help="folder holding amp_update.py, loss_scaler.py, amp_training_step.py")
    parser.add_argument("--results", default="results.json", metavar="FILE",
                        help="where to write the Gradescope-style results (default: results.json)")
    parser.add_argument("--classroom", action="store_true",
                        help="also append result=<base64> to $GITHUB_OUTPUT for the Classroom reporter")
    parser.add_argument("--seed", type=int, default=None,
                        help="reproduce a run: the seed is printed and stored in the results")
    parser.add_argument("--visible-only", action="store_true",
                        help="run only the visible tests, even where hidden tests are installed")
    parser.add_argument("--summary", metavar="FILE", default=None,
                        help="write a Markdown summary (default in Actions: $GITHUB_STEP_SUMMARY)")
    parser.add_argument("--quiet", action="store_true", help="print only the totals")
    parser.set_defaults(func=run)
    return parser


def tamper_flags(submission):
    """Integrity warnings for the repository around ``submission`` (if that check exists)."""
    try:
        from autograder import integrity
    except ImportError:
        return []
    return integrity.tamper_flags(pathlib.Path(submission).resolve().parent)


def _crash_report(submission, seed, message):
    from autograder.results import GradeReport, TestResult

    test = TestResult(name="grader: internal error", module="grader", max_score=0.0, score=0.0,
                      passed=False, visibility="visible",
                      output=f"The grader failed before finishing ({message}). Your work is not "
                             f"lost: push again or ask the course staff.")
    return GradeReport(tests=[test], seed=seed or 0, submission=str(submission))


def print_report(text, stream=None, environ=None):
    """Print a rendered report; inside GitHub Actions, fenced by a fresh
    ``::stop-commands::`` token so that no line of it can act as a workflow command."""
    from autograder.reports import safe_text

    stream = stream or sys.stdout
    text = safe_text.terminal_block(text)
    if (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true":
        text = safe_text.fence_for_actions(text)
    stream.write(text + "\n")  # one write: the fence is never left open between two
    stream.flush()


def warn(message):
    from autograder.reports import safe_text

    print(safe_text.terminal_block(message), file=sys.stderr)


def preload_outputs():
    """What writing the outputs needs, imported before any student code runs."""
    import autograder.cli_classroom_report  # noqa: F401
    from autograder.reports import gradescope, github_files, summary_md, terminal  # noqa: F401


def write_outputs(report, args):
    from autograder.reports import gradescope, github_files, summary_md, terminal

    gradescope.write_results(report, args.results)
    if args.classroom:
        # The payload is built from the results file just written, by the same
        # code as `classroom-report`: Classroom gets exactly what results.json says.
        from autograder.cli_classroom_report import publish

        written, error = publish(args.results)
        if not written:
            warn(f"--classroom: $GITHUB_OUTPUT is not set; wrote only {args.results}")
        if error:
            warn(f"--classroom: {error}")
    summary = args.summary or (os.environ.get("GITHUB_STEP_SUMMARY") if args.classroom else None)
    if summary:
        github_files.append_summary(summary, summary_md.render(report))
    print_report(terminal.render(report, show_output=not args.quiet) + f"\nresults written to {args.results}")


def run(args):
    submission = pathlib.Path(args.submission)
    usage_error = None
    if not submission.is_dir():
        usage_error = (f"--submission {args.submission}: no such folder (expected a folder with "
                       + ", ".join(f"{m}.py" for m in MODULES) + ")")
    try:
        preload_outputs()
        from autograder.grading_process import grade_in_clean_process

        if usage_error:
            report = _crash_report(submission, args.seed, usage_error)
        else:
            report = grade_in_clean_process(submission, seed=args.seed, include_hidden=not args.visible_only,
                                            flags=tamper_flags(submission))
    except Exception as exc:  # the grader's own failure: still leave a result behind
        warn(traceback.format_exc())  # may quote student text: shown escaped
        report = _crash_report(submission, args.seed, f"{type(exc).__name__}: {exc}")
        usage_error = usage_error or "internal error"
        write_outputs(report, args)
        return 1
    write_outputs(report, args)
    if usage_error:
        warn(usage_error)
        return 2
    return 0
