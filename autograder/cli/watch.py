"""``python -m autograder watch``: grade again whenever a module is saved.

The options are ``grade``'s (without the Classroom outputs). One judge
process and its sandbox zygote are started once (:mod:`autograder.judge_process.watching`);
every save of a ``*.py`` in the submission folder (:mod:`autograder.judge_process.saved_files`)
is a full grade in fresh boxes, with the same confinement, isolation report and
``results.json`` as ``grade``. The table is redrawn with what changed since the
last grade. One seed serves the whole session (printed with each table), so a
change in the table comes from the code, not from newly drawn cases.

In a terminal the screen is redrawn in place and fits it: the table and the
diagnosis first, then as many failed tests as there is room for, then what
changed (two lines at most per kind) and the status; the last line shows the
running test once one has taken a second (:mod:`autograder.cli.running_test`).
A save while a grade runs cancels that grade and grades the new file.
Ctrl-C ends the judge, its zygote and every box.
"""
import pathlib
import secrets
import shutil
import sys
import time

from autograder.cli import grade as cli_grade
from autograder.i18n import resolve_language
from autograder.i18n import text as t

HOME, ERASE_LINE, ERASE_BELOW = "\x1b[H", "\x1b[K", "\x1b[J"
CHANGE_LINES = 2  # what the fixed (or newly failing) tests may take on watch's screen


def add_parser(subparsers):
    from autograder.cli.argparse_text import help_language

    lang = help_language(str(cli_grade.REPOSITORY_ROOT))
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


def change_lines(previous, report, lang, width=80):
    """What changed since ``previous``: per kind one list of names, wrapped to ``width``
    and cut to CHANGE_LINES lines."""
    from autograder.reports import safe_text, terminal, wrap

    if previous is None:
        return []
    fixed, broken = changes(previous, report)
    if not fixed and not broken:
        return [t("No test changed since the last grade.", lang)]
    def names_of(names):
        return "; ".join(safe_text.terminal_line(name, limit=300) for name in names)

    lines = []
    for text in (t("Fixed since the last grade ({count}): {names}", lang, count=len(fixed), names=names_of(fixed))
                 if fixed else None,
                 t("Newly failing since the last grade ({count}): {names}", lang, count=len(broken),
                   names=names_of(broken)) if broken else None):
        if text:
            wrapped = wrap.wrap(text, width, hang="  ")
            if len(wrapped) > CHANGE_LINES:
                wrapped = wrapped[:CHANGE_LINES - 1] + [terminal.cut(wrapped[CHANGE_LINES - 1], width - 2) + " …"]
            lines += wrapped
    return lines


def _grade(judge, submission, seed, args, display, on_wait):
    """``(report, failure)``; the report is None when a newer save cancelled the grade."""
    from autograder.judge_process.grading import GradingFailed

    try:
        return judge.grade(submission, seed=seed, include_hidden=not args.visible_only,
                           flags=cli_grade.tamper_flags(submission), lang=args.lang, modules=args.module,
                           display_dir=display, on_wait=on_wait), None
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


def _draw(report, status, args):
    """The report and ``status`` (lines): in a terminal, redrawn in place to fit its
    screen (its last line left for the running test); elsewhere printed whole."""
    from autograder.reports import safe_text, terminal, wrap

    mode = "quiet" if args.quiet else "verbose" if args.verbose else "compact"
    columns, rows = shutil.get_terminal_size((80, 24))
    status = [piece for line in status for piece in wrap.wrap(line, terminal.terminal_width(columns))]
    if not sys.stdout.isatty():
        cli_grade.print_report(terminal.render(report, mode=mode, lang=args.lang, audience=cli_grade.audience(args))
                               + "\n" + "\n".join(status))
        return
    text = terminal.render(report, mode=mode, lang=args.lang, width=columns, audience=cli_grade.audience(args),
                           height=max(rows - 1 - len(status), 8) if mode == "compact" else None)
    lines = safe_text.terminal_block("\n".join([text] + status)).split("\n")
    sys.stdout.write(HOME + "".join(line + ERASE_LINE + "\n" for line in lines) + ERASE_BELOW)
    sys.stdout.flush()


def _watch(watch, submission, seed, args, display):
    from autograder.cli.running_test import RunningTest
    from autograder.judge_process.watching import WatchJudge

    try:
        judge = WatchJudge()
    except KeyboardInterrupt:
        return
    width = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
    running = RunningTest(args.lang)
    previous, saved, started, pending = None, [], time.monotonic(), []

    def on_wait(progress):
        running(progress)
        names = watch.changed()
        pending.extend(name for name in names if name not in pending)
        return bool(pending)

    try:
        while True:
            report, failure = _grade(judge, submission, seed, args, display, on_wait)
            running.clear()
            if report is None:  # a newer save: grade that instead
                saved = sorted(set(saved) | set(pending))
                pending.clear()
                started = time.monotonic()
                running.say(t("Saved {files} again: grading the new version.", args.lang, files=", ".join(saved)))
                continue
            cli_grade.write_files(report, args)
            status = []
            if saved:
                seconds = "%.2f" % (time.monotonic() - started)
                status.append(t("Saved {files}: graded again in {seconds} s.", args.lang, files=", ".join(saved),
                                seconds=seconds))
            if failure is None:
                status += change_lines(previous, report, args.lang, width)
                previous = report
            elif judge.process.poll() is not None:  # the judge itself died: start another
                judge.close()
                judge = WatchJudge()
            status.append(t("Watching {folder} (seed {seed}, results in {results}): save a module to grade "
                            "again, Ctrl-C to stop.", args.lang, folder=display, seed=seed, results=args.results))
            _draw(report, status, args)
            saved = list(pending) or watch.wait()
            pending.clear()
            started = time.monotonic()
    except KeyboardInterrupt:
        pass
    finally:
        running.clear()
        judge.close()
