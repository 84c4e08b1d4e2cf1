"""``python -m autograder grade [--submission DIR] [--results FILE] [--classroom]``.

Exit status: 0 whenever grading completed (whatever the score), 2 for bad
usage, 1 when the grader itself failed -- and even then a results file is
written, with one failed test that says so.
"""
import importlib.util
import os
import pathlib
import shutil
import sys
import traceback

from autograder import locations
from autograder import active_assignment
from autograder.i18n import LANGUAGES, resolve_language
from autograder.i18n import text as t

REPOSITORY_ROOT = locations.REPO_ROOT


def add_parser(subparsers):
    from autograder.cli.argparse_text import help_language

    lang = help_language(str(REPOSITORY_ROOT))
    parser = subparsers.add_parser("grade", help=t("grade a submission (default: exercises/)", lang),
                                   description=t("Grade your exercises with the grader's visible tests, and its hidden "
                                                 "tests where they are installed (not in a student repository).", lang))
    add_grade_options(parser, lang)
    parser.add_argument("--classroom", action="store_true",
                        help=t("also append result=<base64> to $GITHUB_OUTPUT for the Classroom reporter", lang))
    parser.add_argument("--summary", metavar="FILE", default=None,
                        help=t("write a Markdown summary (default in Actions: $GITHUB_STEP_SUMMARY)", lang))
    parser.set_defaults(func=run)
    return parser


def add_grade_options(parser, lang):
    """The options ``grade`` and ``watch`` share."""
    assignment = active_assignment.current()
    parser.add_argument("--submission", default=None, metavar="DIR",
                        help=t("folder holding {files} (default: exercises/ of this repository)", lang,
                               files=", ".join(assignment.files())))
    parser.add_argument("--results", default=None, metavar="FILE",
                        help=t("where to write the Gradescope-style results (default: results.json)", lang))
    parser.add_argument("--seed", type=int, default=None,
                        help=t("reproduce a run: the seed is printed and stored in the results", lang))
    parser.add_argument("--visible-only", action="store_true",
                        help=t("run only the visible tests, even where hidden tests are installed", lang))
    choices = [*assignment.modules] + ([assignment.optional_module] if assignment.optional_module else [])
    parser.add_argument("--module", action="append", choices=choices, default=None, metavar="MODULE",
                        help=t("grade only this module (repeatable): {modules}", lang, modules=", ".join(choices)))
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help=t("language of the feedback (default: [tool.autograder] lang in pyproject.toml, "
                               "or $AUTOGRADER_LANG)", lang))
    parser.add_argument("--allow-unconfined", action="store_true",
                        help=t("grade even when AUTOGRADER_SANDBOX=spawn leaves student code unconfined on Linux "
                               "(the report says so)", lang))
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--quiet", action="store_true", help=t("print only the module totals and the total", lang))
    output.add_argument("--verbose", action="store_true", help=t("print every test with its feedback", lang))


def tamper_flags(submission):
    """Integrity warnings for the repository around ``submission`` (if that check exists)."""
    from autograder.intake import integrity

    return integrity.submission_tamper_flags(submission)


def in_actions(environ=None):
    return (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true"


def _crash_report(submission, seed, message, lang="en"):
    from autograder.judging.results import GradeReport, TestResult

    advice = (t("Your work is not lost: push again or ask the course staff.", lang) if in_actions()
              else t("Your work is not lost: fix what the message says and grade again, or ask the course "
                     "staff.", lang))
    test = TestResult(name=t("grader: could not grade", lang), module="grader", max_score=0.0, score=0.0,
                      passed=False, visibility="visible",
                      output=t("The grader stopped before grading ({problem}).", lang, problem=message) + " " + advice)
    return GradeReport(tests=[test], seed=seed or 0, submission=str(submission), lang=lang)


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
    """``message`` on standard error, escaped and wrapped at the terminal's width (as it is
    where rich, which measures Chinese text, is not installed yet)."""
    from autograder.reports import safe_text

    text = safe_text.terminal_block(message)
    try:
        from autograder.cli.argparse_text import wrapping
        from autograder.reports import wrap
    except ImportError:  # a laptop without the requirements: the message says what to install
        print(text, file=sys.stderr)
        return
    if not wrapping(sys.stderr):
        print(text, file=sys.stderr)
        return
    width = max(shutil.get_terminal_size((80, 24)).columns, 40)
    print("\n".join(piece for line in text.split("\n") for piece in (wrap.wrap(line, width) or [""])),
          file=sys.stderr)


def preload_outputs():
    """What writing the outputs needs, imported (and read) before any student code runs."""
    import autograder.cli.classroom_report  # noqa: F401
    from autograder import i18n
    from autograder.reports import gradescope, github_files, summary_md, terminal  # noqa: F401

    for lang in i18n.LANGUAGES:
        i18n.catalog(lang)
    terminal.preload()


def write_outputs(report, args):
    from autograder.reports import terminal

    write_files(report, args)
    mode = "quiet" if args.quiet else "verbose" if args.verbose else "compact"
    print_report(terminal.render(report, mode=mode, lang=args.lang, audience=audience(args))
                 + "\n" + t("results written to {path}", args.lang, path=args.results))


def audience(args):
    """Who reads this grade: a student grading their own exercises/ ("student"), or
    staff (``--submission``: someone's folder; ``--classroom``: the course's record)."""
    return "staff" if getattr(args, "submission", None) or getattr(args, "classroom", False) else "student"


def write_files(report, args):
    """results.json and, where asked for, the Classroom output and the job summary."""
    from autograder.reports import gradescope, github_files, summary_md

    gradescope.write_results(report, args.results)
    if args.classroom:
        # The payload is built from the results file just written, by the same
        # code as `classroom-report`: Classroom gets exactly what results.json says.
        from autograder.cli.classroom_report import publish

        written, error = publish(args.results)
        if not written:
            warn(f"--classroom: $GITHUB_OUTPUT is not set; wrote only {args.results}")
        if error:
            warn(f"--classroom: {error}")
    summary = args.summary or (os.environ.get("GITHUB_STEP_SUMMARY") if args.classroom else None)
    if summary:
        github_files.append_summary(summary, summary_md.render(report))


def default_submission(cwd=None):
    """``exercises`` of the working directory, the working directory itself when
    it is the exercises folder, else this repository's ``exercises``."""
    cwd = pathlib.Path(cwd or os.getcwd())
    if (cwd / "exercises").is_dir():
        return "exercises"
    if any((cwd / f"{module}.py").is_file() for module in active_assignment.current().modules) and cwd.name == "exercises":
        return str(cwd)
    return str(REPOSITORY_ROOT / "exercises")


def default_results(submission, cwd=None):
    """results.json in the working directory, unless that is inside the
    submission folder: nothing is ever written into exercises/."""
    cwd = pathlib.Path(cwd or os.getcwd()).resolve()
    folder = pathlib.Path(submission).resolve()
    if cwd == folder or folder in cwd.parents:
        return str(folder.parent / "results.json")
    return "results.json"


def missing_requirements():
    """What this Python lacks to grade (torch, pytest, the catalogs' babel, rich's
    tables): a laptop without the venv."""
    return [name for name in ("torch", "pytest", "babel", "rich") if importlib.util.find_spec(name) is None]


def usage_problem(submission, lang, allow_unconfined=False):
    from autograder.sandbox.boxes import spawn_forgoes_confinement

    if spawn_forgoes_confinement() and not allow_unconfined:  # as grade-many refuses an unconfined class
        return t("AUTOGRADER_SANDBOX=spawn runs student code without this machine's confinement (namespaces, "
                 "Landlock, the syscall filter): it is for debugging the macOS and Windows path. Unset it to grade, "
                 "or pass --allow-unconfined to grade anyway (the report will say so).", lang)
    if not submission.is_dir():
        return t("--submission {folder}: no such folder. Run the grader from the repository root (the folder "
                 "holding exercises/ and autograder/), or pass --submission with the folder holding {files}.",
                 lang, folder=str(submission), files=", ".join(f"{m}.py" for m in active_assignment.current().modules))
    missing = missing_requirements()
    if missing:
        return t("{packages} not installed for {python}. Activate the virtual environment first "
                 "(Linux/macOS: source .venv/bin/activate; Windows: .venv\\Scripts\\activate) or install "
                 "the requirements: pip install -r requirements.txt", lang, packages=", ".join(missing),
                 python=sys.executable)
    return None


def run(args):
    args.lang = resolve_language(args.lang, root=str(REPOSITORY_ROOT))
    display = args.submission or "exercises"
    submission = pathlib.Path(args.submission or default_submission())
    if args.results is None:
        args.results = default_results(submission)
    usage_error = usage_problem(submission, args.lang, args.allow_unconfined)
    if usage_error and missing_requirements():
        # A laptop without the venv: the tables (rich) may be missing too, so
        # only the results file and the message, which need nothing installed.
        from autograder.reports import gradescope

        gradescope.write_results(_crash_report(display, args.seed, usage_error, args.lang), args.results)
        warn(usage_error)
        return 2
    try:
        preload_outputs()
        from autograder.cli.running_test import RunningTest
        from autograder.judge_process.grading import grade_in_clean_process

        if usage_error:
            report = _crash_report(display, args.seed, usage_error, args.lang)
        else:
            running = RunningTest(args.lang)
            try:
                report = grade_in_clean_process(submission, seed=args.seed, include_hidden=not args.visible_only,
                                                flags=tamper_flags(submission), lang=args.lang,
                                                modules=args.module, display_dir=display, on_wait=running)
            finally:
                running.clear()
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP: the judge and its boxes are gone already
        warn(t("Interrupted: the grade was stopped before it finished and no results were written.", args.lang))
        return 130
    except Exception as exc:  # the grader's own failure: still leave a result behind
        warn(traceback.format_exc())  # may quote student text: shown escaped
        report = _crash_report(display, args.seed, f"{type(exc).__name__}: {exc}", args.lang)
        usage_error = usage_error or "internal error"
        write_outputs(report, args)
        return 1
    write_outputs(report, args)
    if usage_error:
        warn(usage_error)
        return 2
    return 0
