"""The optional GPU-lab credit inside a grade: find the student's lab records,
check them with :mod:`autograder.assignment.lab.check`, and turn the verdict into one
optional ``gpu_lab`` test plus a plain description of the record for reports.

Lab records are self-reported: the checker proves that a record is complete,
consistent and physically plausible, not that it was measured. The test's
feedback and the description both say so.

Everything under the student's repository is read through
:mod:`autograder.assignment.lab.files`: no symbolic links, regular files only, bounded.

The test's name and output are rendered in the run's language; the description for
reports (:func:`lab_info`) is for staff and stays in English.
"""
import hashlib
import json
import pathlib

from autograder.assignment.lab import check as lab_check, files as lab_files
from autograder.authoring import safe_files, _, render, TestResult
from autograder.assignment.lab.layout import plain_text

LAB_POINTS = 5.0
TITLE = _("benchmark record earns optional credit")
SELF_REPORTED = _("Lab credit is self-reported: the grader checks that the record is complete, "
                  "consistent and physically plausible for the GPU it names, not that the run "
                  "took place. Staff may ask you to re-run the lab.")
MAX_REASONS_SHOWN = 12  # a hostile record can fail every rule; the first ones say enough
# The course's own reference runs, committed in this repository's results folder (gpu_lab/STAFF.md,
# "Results"): staff evidence, not a student's claim, so grading this repository does not turn them
# into a gpu_lab test. Matched by the sha256 of the file's bytes, so a record a student wrote, or
# edited, is never left out. tests/assignment/test_lab_credit.py fails when a committed record is missing here.
REFERENCE_RECORDS = frozenset({
    "6d0c73eb7bf003e86e45800fcfb1dd10bb3e8964a3362cebe7ac3edfbb3c6dac",  # h200-arch-20261204-1208-fp16
    "fbbf000a7fbd1b99542eec448347c459f254157bbaa47f90785a425c5e585f60",  # h200-arch-20261204-1208-bf16
})


def _left_out(path, root=None):
    """A record that is no claim for GPU credit stays out of the grade: a CPU smoke run (a
    student's rehearsal) or one of the course's reference records. A file that cannot be read
    safely (a link, a FIFO, too large) stays in the list, so that the grade says why it was
    refused."""
    try:
        raw = lab_files.read_record_bytes(path, root)
        if hashlib.sha256(raw).hexdigest() in REFERENCE_RECORDS:
            return True
        level = json.loads(raw.decode("utf-8")).get("evidence_level", "")
    except (safe_files.UnsafeFile, OSError, ValueError, AttributeError, RecursionError):
        return False
    return isinstance(level, str) and level.startswith("cpu_smoke")


def _records(submission):
    """(root, path) of every record-like entry in the submission and its repository."""
    found, seen = [], set()
    for root in (submission, submission.parent):
        for path in lab_check.find_records(root):
            if path not in seen:
                seen.add(path)
                found.append((root, path))
    return found


def _rank(verdict):
    # Earned first; then the record closest to credit, so its reasons are the useful ones.
    return (verdict.earns_credit, verdict.valid and verdict.plausible, verdict.valid,
            verdict.readable)


def lab_results(submission_dir, lang="en"):
    """``(tests, lab_info)``: the optional GPU-lab test (a list of one, or empty
    when the repository holds no record) and a JSON-able description of the
    record behind it (``{}`` without one). ``lang``: the language of the test's
    name and output; the description is always English (staff read it)."""
    submission = pathlib.Path(submission_dir).resolve()
    records = [(root, path) for root, path in _records(submission)
               if not _left_out(path, root)]
    if not records:
        return [], {}
    verdicts = [(path, lab_check.check_file(path, root=root, lang=None)) for root, path in records]
    path, verdict = max(verdicts, key=lambda item: _rank(item[1]))  # max keeps the first of ties
    name = plain_text(path.name, 120)
    earned = verdict.earns_credit
    test = TestResult(name=f"gpu_lab: {render(TITLE, lang)}", module="gpu_lab",
                      max_score=LAB_POINTS, score=LAB_POINTS if earned else 0.0, passed=earned,
                      output=_output(name, verdict, lang), visibility="visible", test_id="check_lab")
    return [test], lab_info(name, verdict.rendered("en"))


def _output(name, verdict, lang):
    """The gpu_lab test's feedback: the verdict, one line per reason, and the self-report note."""
    if verdict.earns_credit:
        lines = [render(_("{file}: earns the optional GPU credit.", file=name), lang)]
    else:
        shown = verdict.reasons[:MAX_REASONS_SHOWN]
        more = len(verdict.reasons) - len(shown)
        lines = [render(_("{file}: no GPU credit yet.", file=name), lang)]
        lines += ["- " + render(reason, lang) for reason in shown]
        if more > 0:
            lines.append("- " + render(_("... and {count} more (run python -m autograder check-lab "
                                         "on the record)", count=more), lang))
    lines.append(render(SELF_REPORTED, lang))
    return "\n".join(lines)


def lab_info(file_name, verdict):
    """What reports show about the record behind the gpu_lab test: strings and numbers only,
    every student-supplied string bounded and stripped of control characters."""
    return {
        "file": file_name,
        "self_reported": True,
        "earns_credit": bool(verdict.earns_credit),
        "valid": bool(verdict.valid),
        "plausible": bool(verdict.plausible),
        "hardware": dict(verdict.hardware) or {"name": None, "device": None,
                                               "total_memory_mb": None, "capability": None},
        "plausibility": [plain_text(note, 200) for note in verdict.plausibility],
        "summary": plain_text(verdict.summary, 300),
    }
