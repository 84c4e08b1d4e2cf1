"""``python -m autograder classroom-report RESULTS.json [--summary FILE]``.

Turns a finished grade's results.json into the Classroom reporter's input and
the job summary, in a process that student code never shared an environment
with (the workflow's ``report`` step, after ``grade`` ran without the runner's
file-command variables). It appends exactly one ``result=<base64>`` line to
``$GITHUB_OUTPUT`` and the Markdown summary to ``$GITHUB_STEP_SUMMARY`` (or
``--summary``), built by :func:`autograder.reports.classroom.publish`.

Exit status: 0 when a result line was written (an error result included), 2
when ``$GITHUB_OUTPUT`` is not set.
"""
import os
import sys

from autograder.cli import common
from autograder.i18n import text as t
from autograder.reports import classroom, safe_text


def add_parser(subparsers):
    lang = common.help_lang()
    parser = subparsers.add_parser(
        "classroom-report", help=t("results.json -> Classroom result (GITHUB_OUTPUT) and job summary", lang),
        description=t("Turn the results.json of a finished grade into GitHub Classroom's result (one line "
                      "appended to $GITHUB_OUTPUT) and the job summary (appended to $GITHUB_STEP_SUMMARY or "
                      "--summary). The workflow's report step runs it.", lang))
    parser.add_argument("results", metavar="RESULTS.json", help=t("the results file a grade wrote", lang))
    parser.add_argument("--summary", metavar="FILE", default=None,
                        help=t("append the Markdown summary here (default: $GITHUB_STEP_SUMMARY)", lang))
    parser.set_defaults(func=run)
    return parser


def run(args):
    summary = args.summary or os.environ.get("GITHUB_STEP_SUMMARY")
    written, error = classroom.publish(args.results, summary_path=summary)
    if error:
        # Our own fixed text (the reason quotes no file content), as an annotation.
        print(f"::error title=Autograding::{safe_text.terminal_line(error)}")
    if not written:
        print("classroom-report: " + t("$GITHUB_OUTPUT is not set; no result was written", common.help_lang()),
              file=sys.stderr)
        return 2
    lang = common.help_lang()
    print("classroom-report: " + (t("result appended to $GITHUB_OUTPUT, summary to {path}", lang, path=summary)
                                  if summary else t("result appended to $GITHUB_OUTPUT", lang)))
    return 0
