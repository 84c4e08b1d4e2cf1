"""The options several commands share, and what they mean: the one module of the
command line the others import (tests/repository/test_architecture.py allows it by name).
"""
from autograder import active_assignment, locations
from autograder.i18n import LANGUAGES, help_language
from autograder.i18n import text as t


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
    output.add_argument("--quiet", action="store_true",
                        help=t("print only the score table and each module's first thing to fix", lang))
    output.add_argument("--verbose", action="store_true", help=t("print every test with its feedback", lang))


def report_mode(args):
    """How much of a grade ``--quiet`` or ``--verbose`` ask to print."""
    return "quiet" if args.quiet else "verbose" if args.verbose else "compact"


def audience(args):
    """Who reads this grade: a student grading their own exercises/ ("student"), or
    staff (``--submission``: someone's folder; ``--classroom``: the course's record)."""
    return "staff" if getattr(args, "submission", None) or getattr(args, "classroom", False) else "student"


def help_lang():
    """The language of the help texts (:func:`autograder.i18n.help_language` for this repository)."""
    return help_language(str(locations.REPO_ROOT))


def add_export_lang(parser, course_language):
    """--lang of an export (export-gradescope, export-otter); ``course_language`` is the default
    (the caller's: this module is the student's side too, which has no exports)."""
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help=t("language of the students' feedback (default: [tool.autograder] lang in this "
                               "repository's pyproject.toml, else the students' language, {course} here)",
                               help_lang(), course=repr(course_language)))


def add_report_lang(parser):
    """--report-lang of the class commands."""
    parser.add_argument("--report-lang", choices=LANGUAGES, default=None,
                        help=t("language of the TA's class page report.html (default: English, or what run.json "
                               "recorded)", help_lang()))


def add_deadline_arguments(parser):
    """--deadline, --deadline-source, --pushes (grade-many and similarity)."""
    lang = help_lang()
    parser.add_argument("--deadline", default=None, metavar="ISO",
                        help=t("grade each repository's last commit at or before this time on its default "
                               "branch, e.g. 2026-12-15T23:59+08:00 (a time zone is required)", lang))
    parser.add_argument("--deadline-source", choices=("committed", "pushed"), default="committed",
                        help=t("committed: the commit's committer time (default); pushed: push times from "
                               "--pushes", lang))
    parser.add_argument("--pushes", default=None, metavar="FILE",
                        help=t("with --deadline-source pushed: JSON push record (docs/ta-guide.md)", lang))
