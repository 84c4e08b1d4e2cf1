"""A small Python model of how ``classroom-resources/autograding-grading-reporter@v1``
reads our ``--classroom`` output (see docs/classroom.md).

It follows the reporter's reading rules, not just our own idea of the format:
the runner ids come from ``INPUT_RUNNERS`` split on ``,``; each id's results are
``process.env[id.trim().toUpperCase() + "_RESULTS"]``, base64 of UTF-8 JSON; the
points sent to Classroom are the sum of ``tests[].score`` over the sum of
``max_score`` (runners with a truthy ``max_score`` only), printed as two
``::notice`` workflow commands. :func:`contract_problems` adds the rules that
make the reporter print sensible numbers (what it would otherwise print as
``NaN`` or ``undefined``), from section 5 of the notes.
"""
import base64
import binascii
import json
import math
import re

# One environment value above Linux's MAX_ARG_STRLEN (131072 bytes, counted
# over "NAME=value" plus its NUL) cannot be passed to the reporter at all.
MAX_ARG_STRLEN = 131072
RUNNERS_PATTERN = re.compile(r"^([a-zA-Z0-9]+,)*[a-zA-Z0-9]+$")
RUNNERS_MESSAGE = "The runners input must be a comma-separated list of strings."


class ReporterError(Exception):
    """What the reporter would fail with (it exits 1 with this message)."""


def env_name(runner):
    return f"{runner.strip().upper()}_RESULTS"


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_results(runners, env):
    """``[(runner, results), ...]`` as the reporter builds them from its input
    and environment; raises :class:`ReporterError` where it would fail."""
    try:
        read = []
        for runner in runners.split(","):
            encoded = env.get(env_name(runner))
            if encoded is None:  # Buffer.from(undefined) throws
                raise ReporterError(f"{env_name(runner)} is not set")
            try:
                text = base64.b64decode(encoded, validate=True).decode("utf-8")
                read.append((runner, json.loads(text)))
            except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
                raise ReporterError(f"{env_name(runner)} is not base64 of JSON: {exc}") from exc
        for _, results in read:
            if not isinstance(results.get("tests"), list):  # `.reduce` of undefined
                raise ReporterError("Cannot read properties of undefined (reading 'reduce')")
        return read
    except ReporterError as exc:
        # The reporter hides the real error behind this message for bad ids.
        if not RUNNERS_PATTERN.match(runners):
            raise ReporterError(RUNNERS_MESSAGE) from exc
        raise


def js_number(value):
    """``String(number)`` in JavaScript, for the values our payloads use."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if float(value).is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(float(value))


def points(runner_results):
    """(totalPoints, maxPoints) exactly as ``NotifyClassroom`` adds them up."""
    total, maximum = 0, 0
    for _, results in runner_results:
        if not results.get("max_score"):
            continue
        maximum += results["max_score"]
        for test in results["tests"]:
            total += test.get("score")  # a missing score makes the JS sum NaN
    return total, maximum


def notices(runner_results):
    """The two ``::notice`` lines the reporter prints ([] when maxPoints is 0)."""
    total, maximum = points(runner_results)
    if not maximum:
        return []
    report = '{"totalPoints":%s,"maxPoints":%s}' % (js_number(total), js_number(maximum))
    return [f"::notice title=Autograding complete::Points {js_number(total)}/{js_number(maximum)}",
            f"::notice title=Autograding report::{report}"]


def exit_code(runner_results):
    """1 when any runner's top-level status is ``fail`` or ``error``."""
    return 1 if any(r.get("status") in ("fail", "error") for _, r in runner_results) else 0


def contract_problems(payload, encoded=None, variable="GRADE_RESULTS"):
    """Everything in one runner's payload that the reporter would mishandle."""
    problems = []
    if payload.get("status") not in ("pass", "fail", "error"):
        problems.append(f"top-level status {payload.get('status')!r}")
    if not _is_number(payload.get("max_score")) or payload["max_score"] <= 0:
        problems.append(f"max_score {payload.get('max_score')!r} is not a positive number")
    tests = payload.get("tests")
    if not isinstance(tests, list) or not tests:
        return problems + ["tests is missing or empty"]
    for index, test in enumerate(tests):
        where = f"tests[{index}]"
        if not isinstance(test.get("name"), str) or not test["name"]:
            problems.append(f"{where}.name missing")
        if test.get("status") not in ("pass", "fail", "error"):
            problems.append(f"{where}.status {test.get('status')!r}")
        if not _is_number(test.get("score")):
            problems.append(f"{where}.score {test.get('score')!r} is not a number")
        if test.get("line_no") != 0:
            problems.append(f"{where}.line_no {test.get('line_no')!r} (the reporter prints it unless 0)")
        if "test_code" in test:
            problems.append(f"{where} has test_code (the reporter prints it to the student)")
        if "message" in test and not isinstance(test["message"], str):
            problems.append(f"{where}.message is not a string")
    total = sum(t["score"] for t in tests if _is_number(t.get("score")))
    if _is_number(payload.get("max_score")) and total > payload["max_score"] + 1e-9:
        problems.append(f"sum of scores {total} exceeds max_score {payload['max_score']}")
    if encoded is not None and len(f"{variable}={encoded}".encode()) + 1 > MAX_ARG_STRLEN:
        problems.append(f"{variable} is {len(encoded)} bytes: too long for one environment value")
    return problems


def read_github_output(path):
    """The ``result`` value(s) a step appended to ``$GITHUB_OUTPUT`` (``name=value``
    lines or ``name<<DELIMITER`` blocks, as Actions parses that file)."""
    values = []
    lines = open(path, encoding="utf-8").read().split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index + 1)
            if name == "result":
                values.append("\n".join(lines[index + 1:end]))
            index = end + 1
            continue
        if line.startswith("result="):
            values.append(line[len("result="):])
        index += 1
    return values
