"""Gradescope-style ``results.json`` (the contract's results file)."""
import json
import os
import pathlib
import tempfile

from autograder.i18n import text as t
from autograder.intake.submitted_text import clean_tree
from autograder.judging.results import GradeReport, TestResult


def _results_text(report):
    """The file's text. Student text was made writable where it entered the judge;
    a string that slipped past (a report built elsewhere, a hook's message) is
    made so here rather than lose the results."""
    data = report.to_gradescope()
    try:
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, TypeError, RecursionError):  # UnicodeEncodeError is a ValueError
        return json.dumps(clean_tree(data, limit=None), indent=2, ensure_ascii=False,
                          allow_nan=False).encode("utf-8")


def _zero_report(report, exc):
    """What is written when the report itself cannot be: no points, and why."""
    lang = getattr(report, "lang", "en") if getattr(report, "lang", "en") in ("en", "zh") else "en"
    seed = getattr(report, "seed", 0)
    test = TestResult(name=t("grader: the results could not be written", lang), module="grader", max_score=0.0,
                      score=0.0, passed=False, visibility="visible",
                      output=t("The grader could not write this grade ({problem}). Your work is not lost: "
                               "tell the course staff the seed of this run.", lang, problem=type(exc).__name__))
    return GradeReport(tests=[test], seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else 0,
                       lang=lang)


def write_results(report, path):
    """Write atomically: a half-written file is never left behind, and a report that
    cannot be written leaves a zero report with the reason instead."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = _results_text(report)
    except Exception as exc:  # noqa: BLE001 - the last resort: never no results at all
        data = _results_text(_zero_report(report, exc))
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data + b"\n")
        os.chmod(temporary, 0o644)  # mkstemp makes it private; results are for students and TAs to read
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    return path
