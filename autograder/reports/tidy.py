"""A GradeReport with every field in the shape the renderers expect.

A report can carry odd values: a test that the grader could not attribute to a
module (``module=None``, e.g. a visible test file replaced by a trivial test),
a missing points value, or a results.json written by an older grader. The
renderers work on :func:`tidy` of a report, so none of them crashes on such
a value; a test without a module is shown under ``?``.
"""
import dataclasses
import math

from autograder.judging.results import GradeReport, TestResult

UNKNOWN_MODULE = "?"


def number(value, default=0.0):
    """A finite float, or ``default``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            return default
    value = float(value)
    return value if math.isfinite(value) else default


def text(value, default=""):
    if value is None:
        return default
    return value if isinstance(value, str) else str(value)


def text_list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [text(item) for item in value]
    return [text(value)]


def tidy_test(test):
    module = getattr(test, "module", None)
    return TestResult(
        name=text(getattr(test, "name", None), "?") or "?",
        module=module if isinstance(module, str) and module else UNKNOWN_MODULE,
        max_score=number(getattr(test, "max_score", None)),
        score=number(getattr(test, "score", None)),
        passed=bool(getattr(test, "passed", False)),
        output=text(getattr(test, "output", None)),
        visibility=getattr(test, "visibility", None) if getattr(test, "visibility", None) in ("visible", "hidden")
        else "hidden",
        test_id=text(getattr(test, "test_id", None)),
        duration=number(getattr(test, "duration", None)),
        fault=getattr(test, "fault", None) if isinstance(getattr(test, "fault", None), dict) else None,
    )


def tidy(report):
    """A copy of ``report`` that the renderers can trust field by field."""
    isolation = getattr(report, "isolation", None)
    lab = getattr(report, "lab", None)
    seed = getattr(report, "seed", 0)
    diagnosis, lang = getattr(report, "diagnosis", None), getattr(report, "lang", None)
    not_run = getattr(report, "hidden_not_run", None)
    not_run = not_run if isinstance(not_run, dict) else {}
    printed = getattr(report, "printed", None)
    printed = printed if isinstance(printed, dict) else {}
    return dataclasses.replace(
        report if isinstance(report, GradeReport) else GradeReport(tests=[], seed=0),
        tests=[tidy_test(test) for test in (getattr(report, "tests", None) or [])],
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else text(seed, "?"),
        submission=text(getattr(report, "submission", None)),
        duration=number(getattr(report, "duration", None)),
        flags=text_list(getattr(report, "flags", None)),
        notes=text_list(getattr(report, "notes", None)),
        isolation=isolation if isinstance(isolation, dict) else {},
        lab=lab if isinstance(lab, dict) else {},
        diagnosis=diagnosis if isinstance(diagnosis, dict) else {},
        lang=lang if lang in ("zh", "en") else "en",
        hidden_not_run={text(module): number(points) for module, points in not_run.items() if number(points) > 0},
        printed={text(module): {"bytes": int(number(entry.get("bytes"))), "head": text(entry.get("head")),
                                "more": entry.get("more") is True}
                 for module, entry in printed.items() if isinstance(entry, dict)},
    )
