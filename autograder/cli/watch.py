"""``python -m autograder watch``: grade again whenever a module is saved.

The options are ``grade``'s (without the Classroom outputs). One judge
process and its sandbox zygote are started once (:mod:`autograder.judge_process.watching`);
every save of a ``*.py`` in the submission folder (:mod:`autograder.judge_process.saved_files`)
is a full grade in fresh boxes, with the same confinement, isolation report and
``results.json`` as ``grade``. The table is redrawn with what changed since the
last grade. One seed serves the whole session (printed with each table), so a
change in the table comes from the code, not from newly drawn cases.
Ctrl-C ends the judge, its zygote and every box.
"""
import pathlib
import secrets
import sys
import time

from autograder.cli import grade as cli_grade
from autograder.i18n import resolve_language
from autograder.i18n import text as t

CLEAR = "\x1b[H\x1b[2J"


def add_parser(subparsers):
    lang = resolve_language(root=str(cli_grade.REPOSITORY_ROOT))
    parser = subparsers.add_parser("watch", help=t("grade again each time you save a module", lang),
                                   description=t("Grade your exercises, then grade again each time a module of the "
                                                 "folder is saved, showing which tests were fixed and which now "
                                                 "fail. Ctrl-C stops.", lang))
    cli_grade.add_grade_options(parser, lang)
    parser.set_defaults(func=run, classroom=False, summary=None)
    return parser


def changes(previous, report):
    """(fixed, newly failing): names of the tests whose outcome turned, in report order."""
    before = {(test.module, test.name): test.passed for test in previous.tests}
    fixed, broken = [], []
    for test in report.tests:
        was = before.get((test.module, test.name))
        if was is False and test.passed:
            fixed.append(test.name)
        elif was is True and not test.passed:
            broken.append(test.name)
    return fixed, broken


def change_lines(previous, report, lang):
    from autograder.reports import safe_text

    if previous is None:
        return []
    fixed, broken = changes(previous, report)
    if not fixed and not broken:
        return [t("No test changed since the last grade.", lang)]
    lines = []
    if fixed:
        lines.append(t("Fixed since the last grade: {count}", lang, count=len(fixed)))
        lines += ["  + " + safe_text.terminal_line(name) for name in fixed]
    if broken:
        lines.append(t("Newly failing since the last grade: {count}", lang, count=len(broken)))
        lines += ["  - " + safe_text.terminal_line(name) for name in broken]
    return lines


def _grade(judge, submission, seed, args, display):
    from autograder.judge_process.grading import GradingFailed

    try:
        return judge.grade(submission, seed=seed, include_hidden=not args.visible_only,
                           flags=cli_grade.tamper_flags(submission), lang=args.lang, modules=args.module,
                           display_dir=display), None
    except GradingFailed as exc:
        return cli_grade._crash_report(display, seed, str(exc), args.lang), exc


def run(args):
    args.lang = resolve_language(args.lang, root=str(cli_grade.REPOSITORY_ROOT))
    display = args.submission or "exercises"
    submission = pathlib.Path(args.submission or cli_grade.default_submission())
    if args.results is None:
        args.results = cli_grade.default_results(submission)
    usage_error = cli_grade.usage_problem(submission, args.lang, args.allow_unconfined)
    if usage_error:
        cli_grade.warn(usage_error)
        return 2
    cli_grade.preload_outputs()
    from autograder.judge_process import interrupts
    from autograder.judge_process.saved_files import FolderWatch

    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    watch = FolderWatch(submission)
    with interrupts.as_interrupt():  # SIGTERM or SIGHUP end the session as Ctrl-C does
        _watch(watch, submission, seed, args, display)
    sys.stdout.write(t("Stopped watching.", args.lang) + "\n")
    sys.stdout.flush()
    return 0


def _watch(watch, submission, seed, args, display):
    from autograder.judge_process.watching import WatchJudge

    try:
        judge = WatchJudge()
    except KeyboardInterrupt:
        return
    previous, saved, started = None, [], time.monotonic()
    try:
        while True:
            report, failure = _grade(judge, submission, seed, args, display)
            if sys.stdout.isatty():
                sys.stdout.write(CLEAR)
            cli_grade.write_outputs(report, args)
            lines = []
            if saved:
                seconds = "%.2f" % (time.monotonic() - started)
                lines.append(t("Saved {files}: graded again in {seconds} s.", args.lang, files=", ".join(saved),
                               seconds=seconds))
            if failure is None:
                lines += change_lines(previous, report, args.lang)
                previous = report
            elif judge.process.poll() is not None:  # the judge itself died: start another
                judge.close()
                judge = WatchJudge()
            lines.append(t("Watching {folder} (seed {seed}): save a module to grade again, Ctrl-C to stop.",
                           args.lang, folder=display, seed=seed))
            cli_grade.print_report("\n".join(lines))
            saved = watch.wait()
            started = time.monotonic()
    except KeyboardInterrupt:
        pass
    finally:
        judge.close()
