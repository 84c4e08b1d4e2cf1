"""``python -m autograder export-otter DEST``: the command line of
:mod:`autograder.exports.otter` (the folder it writes is documented there)."""
import subprocess
import sys

from autograder.cli import common
from autograder.exports import runtime
from autograder.exports.otter import DEFAULT_TIMEOUT_S, export, generate_zip
from autograder.i18n import text as t


def add_parser(subparsers):
    lang = common.help_lang()
    parser = subparsers.add_parser(
        "export-otter", help=t("export this assignment to otter-grader's format", lang),
        description=t("Write an otter-grader (7.x) assignment whose test files run this grader's "
                      "visible and hidden tests (one source of tests).", lang))
    parser.add_argument("destination", metavar="DEST", help=t("folder to write", lang))
    parser.add_argument("--seed", type=int, default=None,
                        help=t("grade every submission with this seed (default: a new one each time)", lang))
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S,
                        help=t("wall-clock seconds for grading one submission (default {seconds})", lang,
                               seconds=DEFAULT_TIMEOUT_S))
    parser.add_argument("--otter-bin", default=None, metavar="PATH",
                        help=t("also run `PATH generate` to build DEST/autograder.zip", lang))
    common.add_export_lang(parser, runtime.course_language())
    parser.set_defaults(func=run_export)
    return parser


def run_export(args):
    lang = args.lang or runtime.course_language()
    support, tests = export(args.destination, seed=args.seed, timeout=args.timeout, lang=lang)
    hidden = sum(1 for test in tests if test["visibility"] == "hidden")
    print(f"wrote {args.destination}: {len(tests)} case(s) ({hidden} hidden) in "
          f"{len({t['module'] for t in tests})} otter test file(s); support folder {support}; feedback in {lang}")
    if args.otter_bin:
        try:
            path = generate_zip(args.destination, support, args.otter_bin)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"export-otter: otter generate failed: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {path}")
    return 0
