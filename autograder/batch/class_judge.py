"""The judge process (B) of a class: started by :mod:`autograder.batch.clean_process`,
it imports torch, forks the sandbox's zygote, then reads the planned jobs on its
standard input and grades them with forked grading processes
(:func:`autograder.batch.grade_class.grade_planned`). Each finished job is a
JSON line on the progress pipe; every job's row, the warnings and what the probe
box got go to the result file A named. SIGTERM (A's Ctrl-C, or A's death)
stops every child; the rows still say what happened to each student.
"""
import contextlib
import json
import os
import sys

from autograder.batch.clean_process import MAX_RESULT_BYTES
from autograder.batch.jobs import ForkJob
from autograder.judge_process import interrupts


class _ProgressPipe:
    """(B) What :func:`grade_planned` reports as jobs finish, as lines for A."""

    def __init__(self, fd):
        self.fd = fd
        self.started = None

    def update(self, label, status, score=None):
        line = json.dumps({"label": label, "status": status, "score": score}).encode() + b"\n"
        with contextlib.suppress(OSError):
            os.write(self.fd, line)


def main():
    """(B) Import torch, fork the zygote, then read the planned jobs and grade them.
    The box factory and SIGTERM (A's Ctrl-C, or A's death) are set up as for
    ``grade``'s judge (:func:`interrupts.judge_boxes`); while the class is graded,
    :func:`grade_class.grade_planned` answers an interrupt for every job."""
    progress_fd = int(sys.argv[2])
    del sys.argv[1:]
    code = 1
    try:
        with interrupts.judge_boxes() as boxes:
            job = json.loads(sys.stdin.buffer.read(MAX_RESULT_BYTES).decode())
            code = _grade(job, boxes, progress_fd)
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)


def _grade(job, boxes, progress_fd):
    from autograder.batch import grade_class

    settings = job["settings"]
    planned = []
    for data in job["jobs"]:
        planned.append(ForkJob(data["student"], data["submission"], data["layout"], data["out_dir"],
                               data["seed"], data["include_hidden"], data["timeout"]))
        planned[-1].label, planned[-1].lang, planned[-1].extra = data["label"], data["lang"], data["extra"]
        planned[-1].entry = {}
    warnings, info = [], {}
    try:
        grade_class.grade_planned(planned, job["output_dir"], _ProgressPipe(progress_fd), warnings, info,
                                  settings, boxes=boxes)
        answer = {"rows": [item.entry for item in planned]}
    except grade_class.BatchInterrupted:
        answer = {"rows": [item.entry for item in planned], "interrupted": True}
    except grade_class.UsageError as exc:  # e.g. no confinement here, and not allowed
        answer = {"usage_error": str(exc)}
    answer.update(warnings=warnings, isolation=info.get("isolation"))
    temporary = job["result"] + ".part"
    with open(temporary, "w", encoding="utf-8") as result:
        json.dump(answer, result, allow_nan=False)
    os.replace(temporary, job["result"])
    return 0
