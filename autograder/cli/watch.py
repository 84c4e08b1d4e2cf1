"""``python -m autograder watch``: grade again whenever a module is saved.

The options are ``grade``'s (without the Classroom outputs). One judge
process and its sandbox zygote are started once (:mod:`autograder.judge_process.watching`);
every save of a ``*.py`` in the submission folder (:mod:`autograder.judge_process.saved_files`)
is a grade in fresh boxes, with the same confinement, isolation report and
``results.json`` as ``grade``: of the saved modules alone when the others'
results still hold (:mod:`autograder.judge_process.saved_modules`), else of
everything. The table is redrawn with what changed since the last grade. One
seed serves the whole session (printed with each table), so a change in the
table comes from the code, not from newly drawn cases.

In a terminal the screen is redrawn in place and fits it: the table and the
diagnosis first, then as many failed tests as there is room for, then what
changed (two lines at most per kind) and the status; the last line shows the
running test once one has taken a second (:mod:`autograder.judge_process.running_test`).
A save while a grade runs cancels that grade and grades the new file.
Ctrl-C ends the judge, its zygote and every box.
"""
import pathlib
import secrets
import shutil
import sys

from autograder import locations
from autograder.cli import common
from autograder.i18n import help_language, resolve_language
from autograder.i18n import text as t
from autograder.judge_process import preflight
from autograder.reports.safe_text import warn


def add_parser(subparsers):
    lang = help_language(str(locations.REPO_ROOT))
    parser = subparsers.add_parser("watch", help=t("grade again each time you save a module", lang),
                                   description=t("Grade your exercises, then grade again each time a module of the "
                                                 "folder is saved, showing which tests were fixed and which now "
                                                 "fail. Ctrl-C stops.", lang))
    common.add_grade_options(parser, lang)
    parser.set_defaults(func=run, classroom=False, summary=None)
    return parser


def run(args):
    args.lang = resolve_language(args.lang, root=str(locations.REPO_ROOT))
    display = args.submission or "exercises"
    submission = pathlib.Path(args.submission or preflight.default_submission())
    if args.results is None:
        args.results = preflight.default_results(submission)
    usage_error = preflight.usage_problem(submission, args.lang, args.allow_unconfined)
    if usage_error:
        warn(usage_error)
        return 2
    from autograder.judge_process import interrupts, watching
    from autograder.judge_process.saved_files import FolderWatch
    from autograder.reports import classroom, terminal

    classroom.preload()

    def show(report, status):
        classroom.write_grade_files(report, args.results)
        terminal.draw_watch(report, status, common.report_mode(args), args.lang, common.audience(args))

    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    saves = FolderWatch(submission)
    width = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
    with interrupts.as_interrupt() as received:  # SIGTERM or SIGHUP end the session as Ctrl-C does
        watching.watch(saves, submission, seed, show, include_hidden=not args.visible_only,
                       modules=args.module, lang=args.lang, display=display, results=args.results, width=width,
                       check=received.check)
    sys.stdout.write(t("Stopped watching.", args.lang) + "\n")
    sys.stdout.flush()
    return 0
