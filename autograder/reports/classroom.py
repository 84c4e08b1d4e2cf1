"""Output for the GitHub Classroom grading reporter
(``classroom-resources/autograding-grading-reporter@v1``).

The reporter reads ``<RUNNER>_RESULTS`` as base64 of a JSON object with a
numeric ``max_score`` and a non-empty ``tests`` list of ``{name, status, score,
line_no}``; it sums ``score`` for the points it sends to Classroom and prints
``test_code`` for every test, so we never send any. ``--classroom`` appends
``result=<base64>`` to ``$GITHUB_OUTPUT`` for the workflow to pass on.
"""
import base64
import json
import os

MAX_BASE64_BYTES = 120 * 1024   # one env value must stay under Linux's 128 KiB
_MESSAGE_LIMITS = (600, 200, 60, 0)


def _score(value):
    return int(value) if float(value).is_integer() else round(float(value), 2)


def classroom_payload(report, message_limit=600):
    tests = [{"name": test.name[:120], "status": "pass" if test.passed else "fail",
              "score": _score(test.score), "max_score": _score(test.max_score), "line_no": 0,
              "message": test.output[:message_limit] if message_limit else ""}
             for test in report.tests]
    if not tests:  # the reporter crashes on an empty list
        tests = [{"name": "grading", "status": "error", "score": 0, "max_score": 0, "line_no": 0,
                  "message": "No test could be run; see the job log."}]
    max_score = _score(report.max_score) or 1
    return {"version": 1, "status": "pass" if all(t["status"] == "pass" for t in tests) else "fail",
            "max_score": max_score, "tests": tests}


def encode_payload(report):
    """Base64 of the payload, trimming messages until it fits the size limit."""
    for limit in _MESSAGE_LIMITS:
        text = json.dumps(classroom_payload(report, limit), separators=(",", ":"), ensure_ascii=False)
        encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
        if len(encoded) <= MAX_BASE64_BYTES:
            return encoded
    return encoded


def append_github_output(report, output_path=None):
    """Append ``result=<base64>`` to ``$GITHUB_OUTPUT``. Returns the path written,
    or None when there is no such file (run outside GitHub Actions)."""
    output_path = output_path or os.environ.get("GITHUB_OUTPUT")
    if not output_path:
        return None
    with open(output_path, "a", encoding="utf-8") as out:
        out.write(f"result={encode_payload(report)}\n")
    return output_path
