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

from autograder.reports import classroom, safe_text


def add_parser(subparsers):
    parser = subparsers.add_parser("classroom-report",
                                   help="results.json -> Classroom result (GITHUB_OUTPUT) and job summary",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("results", metavar="RESULTS.json", help="the results file a grade wrote")
    parser.add_argument("--summary", metavar="FILE", default=None,
                        help="append the Markdown summary here (default: $GITHUB_STEP_SUMMARY)")
    parser.set_defaults(func=run)
    return parser


def run(args):
    summary = args.summary or os.environ.get("GITHUB_STEP_SUMMARY")
    written, error = classroom.publish(args.results, summary_path=summary)
    if error:
        # Our own fixed text (the reason quotes no file content), as an annotation.
        print(f"::error title=Autograding::{safe_text.terminal_line(error)}")
    if not written:
        print("classroom-report: $GITHUB_OUTPUT is not set; no result was written", file=sys.stderr)
        return 2
    print("classroom-report: result appended to $GITHUB_OUTPUT" + (f", summary to {summary}" if summary else ""))
    return 0
