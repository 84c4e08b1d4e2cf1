"""The optional GPU-lab credit inside a grade: find the student's lab records,
check them with :mod:`autograder.lab_check`, and turn the verdict into one
optional ``gpu_lab`` test.

Lab records are self-reported: the checker proves that a record is complete,
consistent and physically plausible, not that it was measured.
"""
import json
import pathlib

from autograder import lab_check
from autograder.results import TestResult

LAB_POINTS = 5.0


def _is_smoke_record(path):
    """A CPU smoke run is a student's rehearsal, never a claim for GPU credit:
    it must not add an unreachable optional test to their grade."""
    try:
        with open(path, encoding="utf-8") as handle:
            level = json.load(handle).get("evidence_level", "")
    except (OSError, ValueError, AttributeError):
        return False
    return isinstance(level, str) and level.startswith("cpu_smoke")


def lab_results(submission_dir):
    """The optional GPU-lab test, when the student's repository holds a record."""
    submission = pathlib.Path(submission_dir).resolve()
    records = []
    for root in (submission, submission.parent):
        records += [path for path in lab_check.find_records(root) if path not in records]
    records = [path for path in records if not _is_smoke_record(path)]
    if not records:
        return []
    verdicts = [(path, lab_check.check_file(path)) for path in records]
    earned = [(path, verdict) for path, verdict in verdicts if verdict.earns_credit]
    path, verdict = earned[0] if earned else verdicts[0]
    reasons = "" if earned else "\n".join(f"- {reason}" for reason in verdict.reasons)
    output = (f"{path.name}: earns the optional GPU credit." if earned
              else f"{path.name}: no GPU credit yet.\n{reasons}")
    return [TestResult(name="gpu_lab: benchmark record earns optional credit", module="gpu_lab",
                       max_score=LAB_POINTS, score=LAB_POINTS if earned else 0.0, passed=bool(earned),
                       output=output, visibility="visible", test_id="check_lab")]
