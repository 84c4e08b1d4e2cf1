"""Reading a results.json strictly, for reports built after grading finished.

:func:`load` refuses anything that is not what ``grade`` writes: a link, a
non-regular or oversized file, invalid UTF-8 or JSON (NaN and duplicate keys
included), missing keys, wrong types, a test scoring outside ``0..max_score``,
totals that disagree with the tests. It raises :class:`ResultsError` with a
message that quotes no content of the file, so a caller can report the error
instead of crashing or inventing a score.
"""
import json
import math

from autograder.intake import safe_files
from autograder.i18n import LANGUAGES
from autograder.i18n import text as t
from autograder.judging.results import GradeReport
from autograder.reports.tidy import tidy

MAX_BYTES = 16 * 1024 * 1024
MAX_TESTS = 5000
_TOLERANCE = 0.01


class ResultsError(ValueError):
    """The results file cannot be used; the message says why (and quotes no content)."""


def _no_duplicates(pairs):
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ResultsError("a JSON object repeats a key")
    return dict(pairs)


def _reject_constant(name):
    raise ResultsError(f"JSON holds {name}, which is not a number")


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse(raw):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ResultsError("not UTF-8 text") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except ResultsError:
        raise
    except RecursionError:
        raise ResultsError("JSON nested too deeply") from None
    except ValueError as exc:
        raise ResultsError(f"not valid JSON ({getattr(exc, 'msg', 'parse error')})") from None


def validate(data):
    """``data`` if it has the shape ``grade`` writes; raises :class:`ResultsError`."""
    if not isinstance(data, dict):
        raise ResultsError("the top level is not a JSON object")
    for key in ("score", "max_score"):
        if not _is_number(data.get(key)):
            raise ResultsError(f"'{key}' is missing or not a number")
    tests = data.get("tests")
    if not isinstance(tests, list):
        raise ResultsError("'tests' is missing or not a list")
    if len(tests) > MAX_TESTS:
        raise ResultsError(f"more than {MAX_TESTS} tests")
    for index, test in enumerate(tests):
        where = f"tests[{index}]"
        if not isinstance(test, dict):
            raise ResultsError(f"{where} is not an object")
        if not isinstance(test.get("name"), str) or not test["name"]:
            raise ResultsError(f"{where}.name is missing or not a string")
        for key in ("score", "max_score"):
            if not _is_number(test.get(key)):
                raise ResultsError(f"{where}.{key} is missing or not a number")
        if not 0 <= test["score"] <= test["max_score"] + 1e-9:
            raise ResultsError(f"{where}.score is outside 0..max_score")
        if test.get("status") not in ("passed", "failed"):
            raise ResultsError(f"{where}.status is not 'passed' or 'failed'")
        for key in ("output", "visibility", "test_id"):
            if key in test and not isinstance(test[key], str):
                raise ResultsError(f"{where}.{key} is not a string")
        tags = test.get("tags", [])
        if not isinstance(tags, list) or not all(tag is None or isinstance(tag, str) for tag in tags):
            raise ResultsError(f"{where}.tags is not a list of strings")
    for key, field in (("score", "score"), ("max_score", "max_score")):
        total = sum(test[field] for test in tests)
        if abs(total - data[key]) > _TOLERANCE:
            raise ResultsError(f"'{key}' does not equal the sum over the tests")
    extra = data.get("extra_data", {})
    if not isinstance(extra, dict):
        raise ResultsError("'extra_data' is not an object")
    return data


def load(path):
    """The validated dict of the results file at ``path``."""
    try:
        raw = safe_files.read_regular(str(path), MAX_BYTES)
    except safe_files.UnsafeFile as exc:
        raise ResultsError(f"results file {safe_files.describe(exc.kind, exc.detail)}") from None
    return validate(parse(raw))


def _notes(data):
    """The notes ``grade`` wrote into the top-level ``output`` (after its first
    line, the flags being the ``Warning:`` lines, in either language)."""
    output = data.get("output")
    if not isinstance(output, str):
        return []
    warnings = tuple(t("Warning: {flag}", lang, flag="") for lang in LANGUAGES)
    return [line for line in output.split("\n")[1:] if line and not line.startswith(warnings)]


def _clean_extra(extra):
    """``extra_data`` with the types :meth:`GradeReport.from_gradescope` expects
    (an older grader, or a hand-edited file, may differ: shown, not fatal)."""
    extra = extra if isinstance(extra, dict) else {}
    flags = extra.get("flags")
    return {"seed": extra.get("seed", 0), "submission": extra.get("submission", ""),
            "flags": flags if isinstance(flags, list) else ([] if flags is None else [flags]),
            "isolation": extra.get("isolation") if isinstance(extra.get("isolation"), dict) else {},
            "lab": extra.get("lab") if isinstance(extra.get("lab"), dict) else {},
            "diagnosis": extra.get("diagnosis") if isinstance(extra.get("diagnosis"), dict) else {},
            "lang": extra.get("lang") if extra.get("lang") in LANGUAGES else "en",
            "hidden_not_run": extra.get("hidden_not_run") if isinstance(extra.get("hidden_not_run"), dict) else {}}


def report_from(data):
    """A tidy :class:`GradeReport` for a validated results dict."""
    report = GradeReport.from_gradescope(dict(data, extra_data=_clean_extra(data.get("extra_data"))))
    report.notes = _notes(data)
    return tidy(report)
