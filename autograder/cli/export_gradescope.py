"""``python -m autograder export-gradescope DEST.zip``: the command line of
:mod:`autograder.exports.gradescope` (what the zip holds is documented there)."""
import pathlib
import sys

from autograder.cli import common
from autograder.exports import runtime
from autograder.exports.gradescope import build_zip
from autograder.i18n import text as t


def add_parser(subparsers):
    lang = common.help_lang()
    parser = subparsers.add_parser(
        "export-gradescope", help=t("build a Gradescope autograder zip (hidden tests included)", lang),
        description=t("Build a Gradescope autograder zip: setup.sh, run_autograder, requirements.txt and this "
                      "grader with its hidden tests. Upload it as the assignment's autograder (base image: "
                      "Ubuntu 22.04; docs/ta-guide.md).", lang))
    parser.add_argument("destination", metavar="DEST.zip")
    parser.add_argument("--seed", type=int, default=None,
                        help=t("grade every submission with this seed (default: a new seed per run, "
                               "recorded in results.json)", lang))
    common.add_export_lang(parser, runtime.course_language())
    parser.set_defaults(func=run_export)
    return parser


def run_export(args):
    destination = pathlib.Path(args.destination)
    if destination.suffix != ".zip":
        print("export-gradescope: DEST must end in .zip", file=sys.stderr)
        return 2
    lang = args.lang or runtime.course_language()
    names = build_zip(destination, seed=args.seed, lang=lang)
    hidden = [n for n in names if n.startswith("autograder/assignment/hidden/test_")]
    print(f"wrote {destination} ({len(names)} files, {len(hidden)} hidden test file(s); feedback in {lang})")
    if not hidden:
        print("export-gradescope: warning: no hidden tests in autograder/assignment/hidden: students would be "
              "graded on the visible tests only", file=sys.stderr)
    return 0
