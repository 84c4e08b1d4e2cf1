"""Output for the GitHub Classroom grading reporter
(``classroom-resources/autograding-grading-reporter@v1``).

The reporter reads ``<RUNNER>_RESULTS`` as base64 of a JSON object with a
numeric ``max_score`` and a non-empty ``tests`` list of ``{name, status, score,
line_no}``; it sums ``score`` for the points it sends to Classroom and prints
``test_code`` for every test, so we never send any. It prints test names (and
the message of ``error`` tests) to its log, where the runner reads workflow
commands: both are neutralised. A test the grader failed to check (tagged
``grader_fault``, worth 0 of 0) is an ``error`` test, so its message is printed.

The payload is always built from a results.json dict (:func:`payload_from_results`),
so it carries the same tests, scores and totals as the file: ``grade --classroom``
(:func:`write_grade_files`) and ``classroom-report`` publish it from the file
just written, with the job summary (:func:`publish`).

The results file is read strictly (:mod:`autograder.reports.results_file`): a
missing, linked, oversized or malformed file gives one ``error`` test with the
reason and 0 points out of ``$AUTOGRADE_MAX_SCORE`` (default 1), never a crash
and never a score the file does not prove.
"""
import base64
import json
import os

from autograder.judging.results import GRADER_FAULT
from autograder.reports import github_files, results_file, safe_text, summary_md

MAX_SCORE_ENV = "AUTOGRADE_MAX_SCORE"
MAX_BASE64_BYTES = 120 * 1024   # one env value must stay under Linux's 128 KiB
_MESSAGE_LIMITS = (600, 200, 60, 0)
OUTPUT_NAME = "result"


def _score(value):
    value = float(value)
    return int(value) if value.is_integer() else value


def payload_from_results(data, message_limit=600):
    """The reporter's JSON for a (validated) results.json dict."""
    tests = []
    for test in data.get("tests", []):
        message = safe_text.terminal_line(test.get("output", ""), limit=message_limit) if message_limit else ""
        status = "pass" if test.get("status") == "passed" else "fail"
        if GRADER_FAULT in (test.get("tags") or []):  # not graded: the reporter prints its message as an error
            status = "error"
        tests.append({"name": safe_text.terminal_line(test.get("name", "?"), limit=120), "status": status,
                      "score": _score(test["score"]), "max_score": _score(test["max_score"]),
                      "line_no": 0, "message": message})
    if not tests:  # the reporter crashes on an empty list
        tests = [{"name": "grading", "status": "error", "score": 0, "max_score": 0, "line_no": 0,
                  "message": "No test could be run; see the job log."}]
    max_score = _score(data.get("max_score", 0)) or 1
    statuses = {test["status"] for test in tests}
    status = "fail" if "fail" in statuses else "error" if "error" in statuses else "pass"
    return {"version": 1, "status": status, "max_score": max_score, "tests": tests}


def error_payload(message, max_score=1):
    """One ``error`` test: the reporter always has input, and no score is invented."""
    return {"version": 1, "status": "error", "max_score": max_score,
            "tests": [{"name": "grader results unusable", "status": "error", "score": 0, "line_no": 0,
                       "message": safe_text.terminal_line(message, limit=600)}]}


def encode(payload_or_builder):
    """Base64 of a payload; a builder ``f(message_limit)`` lets messages shrink until it fits."""
    builder = payload_or_builder if callable(payload_or_builder) else (lambda limit: payload_or_builder)
    for limit in _MESSAGE_LIMITS:
        text = json.dumps(builder(limit), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
        if len(encoded) <= MAX_BASE64_BYTES:
            return encoded
    return encoded


def encode_results(data):
    return encode(lambda limit: payload_from_results(data, limit))


def append_encoded(encoded, output_path=None):
    """Append ``result=<base64>`` to ``$GITHUB_OUTPUT`` (or ``output_path``).
    Returns the path written, or None when there is no such file."""
    output_path = output_path or os.environ.get("GITHUB_OUTPUT")
    if not output_path:
        return None
    github_files.append_output(output_path, OUTPUT_NAME, encoded)
    return output_path


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
        return encode(error_payload(message, maximum)), summary_md.render_error(message, maximum), message
    return encode_results(data), summary_md.render(results_file.report_from(data)), None


def publish(results_path, output_path=None, summary_path=None, environ=None):
    """Append the result line and the summary; returns ``(output written?, error or None)``."""
    encoded, summary, error = build(results_path, environ)
    written = append_encoded(encoded, output_path) is not None
    if summary_path:
        github_files.append_summary(summary_path, summary)
    return written, error


def write_grade_files(report, results, classroom=False, summary=None):
    """A grade's files: ``results`` (results.json); with ``classroom``, the Classroom
    output built from that file (as ``classroom-report`` builds it: Classroom gets
    exactly what results.json says); the job summary in ``summary`` (default with
    ``classroom``: ``$GITHUB_STEP_SUMMARY``). Returns what went wrong, for a warning."""
    from autograder.reports import gradescope

    gradescope.write_results(report, results)
    problems = []
    if classroom:
        written, error = publish(results)
        if not written:
            problems.append(f"--classroom: $GITHUB_OUTPUT is not set; wrote only {results}")
        if error:
            problems.append(f"--classroom: {error}")
    summary = summary or (os.environ.get("GITHUB_STEP_SUMMARY") if classroom else None)
    if summary:
        github_files.append_summary(summary, summary_md.render(report))
    return problems


def preload():
    """What writing a grade's outputs needs, imported (and read) before any student code runs."""
    from autograder import i18n
    from autograder.reports import gradescope, terminal  # noqa: F401

    for lang in i18n.LANGUAGES:
        i18n.catalog(lang)
    terminal.preload()
