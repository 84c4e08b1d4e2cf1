"""``grade-many``'s judge in a clean process of its own, started as ``grade``'s is
(:mod:`autograder.judge_process.launcher`).

The command-line process (A) plans the class (where each submission is, which
commit counts, the zero rows of students with nothing to grade), then starts
the judge process (B) as a fresh interpreter with a scrubbed environment. B
imports torch once and forks the sandbox's zygote from itself before it has
read anything of the job -- the zygote and every box forked from it hold
nothing of the judge, the seed or the class -- then reads the planned jobs,
warms up, probes what a box gets here and grades every job with forked
grading processes (:mod:`autograder.batch.class_judge`), which write each
``results.json``. One import of torch serves the judge and the
boxes of the whole class.

Meanwhile A, which never imports torch, has the other CPU to itself: it runs
``meanwhile()`` (the similarity check and the class report's imports) while B
loads. Progress comes back on a pipe, one JSON line per finished job, and A
draws the bar; each job's row (status, reason, seconds) comes back in a file of
A's private folder. Ctrl-C, SIGTERM or SIGHUP reaches B, which stops every child and
still answers for every job; if B itself fails, every job it did not answer
for is a crashed row, and the report is written all the same.
"""
import json
import os
import sys

from autograder.batch.jobs import CRASHED, OK, BatchInterrupted, UsageError, grading_process_failed
from autograder.judge_process import interrupts, launcher

MAX_RESULT_BYTES = launcher.MAX_ANSWER_BYTES
STOP_WAIT_S = 120.0  # after Ctrl-C: B kills its children and writes every row
_JOB_FIELDS = ("student", "submission", "layout", "seed", "include_hidden", "timeout", "label", "lang", "extra",
               "modules")


def _job_data(job):
    data = {name: getattr(job, name) for name in _JOB_FIELDS}
    data.update(submission=str(job.submission), out_dir=str(job.out_dir))
    return data


def grade_planned(planned, output_dir, bar, warnings, info, settings, meanwhile=None):
    """(A) Grade the ``planned`` jobs in a judge process; fills in each job's entry,
    ``warnings`` and ``info['isolation']``. Raises ``BatchInterrupted`` after Ctrl-C
    or SIGTERM, once B has answered for every job."""
    # The students' working copies go in one folder, removed after B: a grading
    # process that B kills (past --timeout) leaves its own behind.
    for job in planned:  # a results.json from an earlier run must never read as this run's grade
        job.prepare()
    started = []  # the judge process once it runs: a stop signal goes on to it at once
    # From before B starts: a signal while it loads must reach it, not end A alone. After one,
    # the others stay ignored: the report the caller writes next ends the clean-up it started.
    with interrupts.as_interrupt(once=True, first=lambda: [interrupts.ask_to_stop(one.process) for one in started],
                                 ignore_after=True) as received:
        with received.held():  # an interrupt here would lose the judge's handle
            judge, progress_r = _start_judge()
            started.append(judge)
        with judge:
            result_path = judge.path("result.json")
            job = {"jobs": [_job_data(job) for job in planned], "output_dir": str(output_dir),
                   "settings": dict(settings, guard_dir=str(settings["guard_dir"]) if settings["guard_dir"] else None),
                   "result": result_path}
            if settings["progress"]:
                print("grade-many: loading torch and the grader once for all students...", file=sys.stderr)
            interrupted = _run(judge, job, progress_r, bar, meanwhile, received)
            answer = _read_answer(result_path)
            output = judge.output()
    process = judge.process
    if isinstance(answer.get("usage_error"), str):
        raise UsageError(answer["usage_error"])
    rows = answer.get("rows") if isinstance(answer.get("rows"), list) else []
    for index, job in enumerate(planned):
        row = rows[index] if index < len(rows) and isinstance(rows[index], dict) else None
        job.entry.update(row if row is not None else _unanswered(job, process.returncode, interrupted))
    warnings.extend(item if isinstance(item, (str, dict)) else str(item) for item in answer.get("warnings") or [])
    if isinstance(answer.get("isolation"), dict):
        info["isolation"] = answer["isolation"]
    if "rows" not in answer and not interrupted:
        from autograder.reports.safe_text import terminal_lines

        warnings.append(grading_process_failed(process.returncode, terminal_lines(output.strip())[-6:]))
    if interrupted or answer.get("interrupted"):
        raise BatchInterrupted()


def _unanswered(job, code, interrupted=False):
    """The row of a job the judge process never answered for: graded if its
    grading process finished (its results.json reads and is a grade), what B's
    zero report says if B wrote one, else crashed, with a zero (``interrupted``:
    B was stopped by this command's Ctrl-C or SIGTERM, e.g. before it could grade)."""
    from autograder.batch.jobs import _score_of, zero_report, zero_report_status
    from autograder.batch.plan import safe_write

    written = zero_report_status(job.results)
    if written is not None:
        return {"status": written[0], "reason": written[1]}
    if _score_of(job.results) is not None:
        return {"status": OK, "reason": ""}
    reason = ("not graded: the batch was interrupted" if interrupted
              else f"not graded: the grading process stopped (exit code {code})")
    row = {"status": CRASHED, "reason": reason}
    job.out_dir.mkdir(parents=True, exist_ok=True)
    safe_write(zero_report(job.student, job.seed, CRASHED, reason, job.submission), job.results, row, job.extra)
    return row


def _start_judge():
    """B, and the end of the pipe its progress comes back on."""
    progress_r, progress_w = os.pipe()
    try:
        judge = launcher.Judge("autograder.batch.class_judge:serve", "autograder-grade-many-", args=[progress_w],
                               pass_fds=[progress_w], keep=("AUTOGRADER_GRADER_GUARD",))
    except BaseException:
        os.close(progress_r)
        raise
    finally:
        os.close(progress_w)
    return judge, progress_r


def _run(judge, job, progress_r, bar, meanwhile, received):
    """Hand B its job, run ``meanwhile`` and draw progress until B ends; True when
    interrupted here (Ctrl-C, SIGTERM or SIGHUP, passed on to B at once: the
    interrupt raised here may be lost in meanwhile()'s imports; ``received``
    raises it again)."""
    interrupted = False
    try:
        received.check()  # a signal while B started
        judge.send(job)
        if meanwhile is not None:
            meanwhile()
        received.check()
        with os.fdopen(progress_r, "rb", buffering=0) as progress:
            progress_r = None
            for line in _lines(progress):
                received.check()
                _show(bar, line)
        received.check()
        judge.process.wait()
    except KeyboardInterrupt:
        interrupted = True
        judge.stop(STOP_WAIT_S)  # B stops its children and answers for every job
    finally:
        if progress_r is not None:
            os.close(progress_r)
    return interrupted


def _lines(stream):
    buffered = b""
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return
        buffered += chunk
        *complete, buffered = buffered.split(b"\n")
        yield from complete


def _show(bar, line):
    try:
        event = json.loads(line.decode())
        bar.update(str(event["label"]), str(event["status"]), event.get("score"))
    except (ValueError, KeyError, TypeError, AttributeError):
        pass


def _read_answer(path):
    try:
        data = launcher.read_answer(path, MAX_RESULT_BYTES)
        answer = json.loads(data.decode()) if len(data) <= MAX_RESULT_BYTES else {}
        return answer if isinstance(answer, dict) else {}
    except (OSError, ValueError):
        return {}
