"""``python -m autograder grade [--submission DIR] [--results FILE] [--classroom]``.

Exit status: 0 whenever grading completed (whatever the score), 2 for bad
usage, 1 when the grader itself failed -- and even then a results file is
written, with one failed test that says so.
"""
import pathlib
import traceback

from autograder import locations
from autograder.cli import common
from autograder.i18n import help_language, resolve_language
from autograder.i18n import text as t
from autograder.judge_process import preflight


def warn(text):
    """A warning on stderr (:func:`autograder.reports.safe_text.warn`), its module imported
    only once the judge process has started (:func:`_prepare`), as the reports are."""
    from autograder.reports.safe_text import warn as shown

    shown(text)


def add_parser(subparsers):
    lang = help_language(str(locations.REPO_ROOT))
    parser = subparsers.add_parser("grade", help=t("grade a submission (default: exercises/)", lang),
                                   description=t("Grade your exercises with the grader's visible tests, and its hidden "
                                                 "tests where they are installed (not in a student repository).", lang))
    common.add_grade_options(parser, lang)
    parser.add_argument("--classroom", action="store_true",
                        help=t("also append result=<base64> to $GITHUB_OUTPUT for the Classroom reporter", lang))
    parser.add_argument("--summary", metavar="FILE", default=None,
                        help=t("write a Markdown summary (default in Actions: $GITHUB_STEP_SUMMARY)", lang))
    parser.set_defaults(func=run)
    return parser


def write_outputs(report, args):
    """results.json (and the Classroom output and summary asked for), then the report
    on the terminal."""
    from autograder.reports import classroom, terminal

    for problem in classroom.write_grade_files(report, args.results, args.classroom, args.summary):
        warn(problem)
    terminal.show(report, mode=common.report_mode(args), lang=args.lang, audience=common.audience(args),
                  after=[t("results written to {path}", args.lang, path=args.results)])


def _prepare(submission, lang, running):
    """(A, while the judge process starts: it reads its job, and runs no student code,
    only once this returned) what writing the outputs needs, imported and read now,
    before any student code runs, and the running test's line (appended to ``running``);
    returns the submission's tamper flags."""
    from autograder.intake.integrity import submission_tamper_flags
    from autograder.judge_process.running_test import RunningTest
    from autograder.reports import classroom

    classroom.preload()
    running.append(RunningTest(lang))
    return submission_tamper_flags(submission)


def run(args):
    args.lang = resolve_language(args.lang, root=str(locations.REPO_ROOT))
    display = args.submission or "exercises"
    submission = pathlib.Path(args.submission or preflight.default_submission())
    if args.results is None:
        args.results = preflight.default_results(submission)
    usage_error = preflight.usage_problem(submission, args.lang, args.allow_unconfined)
    from autograder.judge_process.grading import crash_report

    if usage_error and preflight.missing_requirements():
        # A laptop without the venv: the tables (rich) may be missing too, so
        # only the results file and the message, which need nothing installed.
        from autograder.reports import gradescope

        gradescope.write_results(crash_report(display, args.seed, usage_error, args.lang), args.results)
        warn(usage_error)
        return 2
    try:
        if usage_error:
            report = crash_report(display, args.seed, usage_error, args.lang)
        else:
            from autograder.judge_process.grading import grade_in_clean_process

            running = []  # the running test's line, made while B starts
            try:
                report = grade_in_clean_process(submission, seed=args.seed, include_hidden=not args.visible_only,
                                                flags=lambda: _prepare(submission, args.lang, running),
                                                lang=args.lang, modules=args.module, display_dir=display,
                                                on_wait=lambda progress: [line(progress) for line in running])
            finally:
                for line in running:
                    line.clear()
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP: the judge and its boxes are gone already
        warn(t("Interrupted: the grade was stopped before it finished and no results were written.", args.lang))
        return 130
    except Exception as exc:  # the grader's own failure: still leave a result behind
        warn(traceback.format_exc())  # may quote student text: shown escaped
        report = crash_report(display, args.seed, f"{type(exc).__name__}: {exc}", args.lang)
        write_outputs(report, args)
        return 1
    write_outputs(report, args)
    if usage_error:
        warn(usage_error)
        return 2
    return 0
