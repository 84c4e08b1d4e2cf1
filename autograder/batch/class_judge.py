"""The judge process (B) of a class: started by :mod:`autograder.batch.clean_process`
as every judge is (:mod:`autograder.judge_process.launcher`), it imports torch,
forks the sandbox's zygote, then reads the planned jobs on its
standard input and grades them with forked grading processes
(:func:`autograder.batch.grade_class.grade_planned`). Each finished job is a
JSON line on the progress pipe; every job's row, the warnings and what the probe
box got go to the result file A named. SIGTERM (A's Ctrl-C, or A's death)
stops every child; the rows still say what happened to each student.
"""
import contextlib
import json
import os

from autograder.batch.clean_process import MAX_RESULT_BYTES
from autograder.batch.jobs import ForkJob
from autograder.judge_process import launcher


class _ProgressPipe:
    """(B) What :func:`grade_planned` reports as jobs finish, as lines for A."""

    def __init__(self, fd):
        self.fd = fd
        self.started = None

    def update(self, label, status, score=None):
        line = json.dumps({"label": label, "status": status, "score": score}).encode() + b"\n"
        with contextlib.suppress(OSError):
            os.write(self.fd, line)


def serve(boxes, progress_fd):
    """(B) Read the planned jobs and grade them (the zygote is forked already, and SIGTERM
    -- A's Ctrl-C, or A's death -- interrupts as Ctrl-C does, :func:`launcher.judge_main`);
    while the class is graded, :func:`grade_class.grade_planned` answers an interrupt for every job."""
    return _grade(launcher.read_job(MAX_RESULT_BYTES), boxes, int(progress_fd))


def _grade(job, boxes, progress_fd):
    from autograder.batch import grade_class

    settings = job["settings"]
    planned = []
    for data in job["jobs"]:
        planned.append(ForkJob(data["student"], data["submission"], data["layout"], data["out_dir"],
                               data["seed"], data["include_hidden"], data["timeout"]))
        planned[-1].label, planned[-1].lang, planned[-1].extra = data["label"], data["lang"], data["extra"]
        planned[-1].modules = data.get("modules")
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
    launcher.write_answer(job["result"], answer)
    return 0
