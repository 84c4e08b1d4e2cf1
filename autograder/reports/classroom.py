"""Output for the GitHub Classroom grading reporter
(``classroom-resources/autograding-grading-reporter@v1``).

The reporter reads ``<RUNNER>_RESULTS`` as base64 of a JSON object with a
numeric ``max_score`` and a non-empty ``tests`` list of ``{name, status, score,
line_no}``; it sums ``score`` for the points it sends to Classroom and prints
``test_code`` for every test, so we never send any. It prints test names (and
the message of ``error`` tests) to its log, where the runner reads workflow
commands: both are neutralised.

The payload is always built from a results.json dict (:func:`payload_from_results`),
so it carries the same tests, scores and totals as the file: ``grade --classroom``
and ``classroom-report`` share this code.
"""
import base64
import json
import os

from autograder.reports import github_files, safe_text

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
        tests.append({"name": safe_text.terminal_line(test.get("name", "?"), limit=120),
                      "status": "pass" if test.get("status") == "passed" else "fail",
                      "score": _score(test["score"]), "max_score": _score(test["max_score"]),
                      "line_no": 0, "message": message})
    if not tests:  # the reporter crashes on an empty list
        tests = [{"name": "grading", "status": "error", "score": 0, "max_score": 0, "line_no": 0,
                  "message": "No test could be run; see the job log."}]
    max_score = _score(data.get("max_score", 0)) or 1
    return {"version": 1, "status": "pass" if all(test["status"] == "pass" for test in tests) else "fail",
            "max_score": max_score, "tests": tests}


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
