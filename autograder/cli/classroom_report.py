"""``python -m autograder classroom-report RESULTS.json [--summary FILE]``.

Turns a finished grade's results.json into the Classroom reporter's input and
the job summary, in a process that student code never shared an environment
with (the workflow's ``report`` step, after ``grade`` ran without the runner's
file-command variables). It appends exactly one ``result=<base64>`` line to
``$GITHUB_OUTPUT`` and the Markdown summary to ``$GITHUB_STEP_SUMMARY`` (or
``--summary``).

The results file is read strictly (:mod:`autograder.reports.results_file`): a
missing, linked, oversized or malformed file gives one ``error`` test with the
reason and 0 points out of ``$AUTOGRADE_MAX_SCORE`` (default 1), never a crash
and never a score the file does not prove.

Exit status: 0 when a result line was written (an error result included), 2
when ``$GITHUB_OUTPUT`` is not set.
"""
import os
import sys

from autograder.reports import classroom, github_files, results_file, safe_text, summary_md

MAX_SCORE_ENV = "AUTOGRADE_MAX_SCORE"


def add_parser(subparsers):
    parser = subparsers.add_parser("classroom-report",
                                   help="results.json -> Classroom result (GITHUB_OUTPUT) and job summary",
                                   description=__doc__.splitlines()[0])
    parser.add_argument("results", metavar="RESULTS.json", help="the results file a grade wrote")
    parser.add_argument("--summary", metavar="FILE", default=None,
                        help="append the Markdown summary here (default: $GITHUB_STEP_SUMMARY)")
    parser.set_defaults(func=run)
    return parser


def error_max_score(environ=None):
    """The assignment's total for an error result: a positive integer, else 1."""
    value = (environ if environ is not None else os.environ).get(MAX_SCORE_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else 1


def build(results_path, environ=None):
    """``(encoded payload, summary Markdown, error message or None)`` for a results file."""
    try:
        data = results_file.load(results_path)
    except results_file.ResultsError as exc:
        message = (f"The grade left no usable results ({exc}). See the Grade step's log, push again "
                   "or ask the course staff.")
        maximum = error_max_score(environ)
        return (classroom.encode(classroom.error_payload(message, maximum)),
                summary_md.render_error(message, maximum), message)
    return classroom.encode_results(data), summary_md.render(results_file.report_from(data)), None


def publish(results_path, output_path=None, summary_path=None, environ=None):
    """Append the result line and the summary; returns ``(output written?, error or None)``."""
    encoded, summary, error = build(results_path, environ)
    written = classroom.append_encoded(encoded, output_path) is not None
    if summary_path:
        github_files.append_summary(summary_path, summary)
    return written, error


def run(args):
    summary = args.summary or os.environ.get("GITHUB_STEP_SUMMARY")
    written, error = publish(args.results, summary_path=summary)
    if error:
        # Our own fixed text (the reason quotes no file content), as an annotation.
        print(f"::error title=Autograding::{safe_text.terminal_line(error)}")
    if not written:
        print("classroom-report: $GITHUB_OUTPUT is not set; no result was written", file=sys.stderr)
        return 2
    print("classroom-report: result appended to $GITHUB_OUTPUT" + (f", summary to {summary}" if summary else ""))
    return 0
