"""``watch`` keeps one judge process (B) alive between grades.

Started as every judge is (:mod:`autograder.judge_process.launcher`): the
command-line process (A) never meets student code; B is a fresh interpreter
with a scrubbed environment that imports torch and forks the sandbox's zygote
before it has read anything of a job. What ``watch`` saves is that start (and pytest's collection): B then
grades one job per line of its standard input with
:func:`autograder.judging.engine.grade_submission`, each in fresh boxes forked for that
grade, with its own uid, confinement and isolation report, exactly like
``grade``; the suites are collected once for the session
(:func:`autograder.judging.suites.kept_collected`). Each report comes back in a file of A's private folder.

A grade can be cancelled (a newer save): A creates the job's ``cancel`` file,
B's grade unwinds at its next test or within a quarter of a second of the call
it waits for (:func:`autograder.sandbox.call_clock.cancel_when`), closes its
boxes and answers ``{"cancelled": true}``; B then serves the next job.

:func:`watch` is A's session: grade, show, wait for a save, grade again; a
save while a grade runs cancels it and grades the new file.

B ends when its standard input closes, on Ctrl-C, on SIGTERM (A's SIGTERM or
SIGHUP, passed on) or when A dies; its zygote runs in a session of its own and
ends when B's channel to it closes.
"""
import itertools
import json
import os
import sys
import time
import traceback

from autograder import active_assignment
from autograder.i18n import text as t
from autograder.judge_process import grading, launcher, saved_modules
from autograder.judge_process.launcher import GradingFailed, Progress

_POLL_S = 0.005


class WatchJudge:
    """(A) The judge process of a ``watch`` session; ``grade(job)`` returns a :class:`GradeReport`."""

    def __init__(self):
        self._judge = launcher.Judge(f"{__name__}:serve", "autograder-watch-")
        self.process = self._judge.process
        self._count = 0

    def grade(self, submission, seed, include_hidden, flags, lang="en", modules=None, display_dir=None,
              on_wait=None):
        """The job's :class:`GradeReport`, or None when ``on_wait(progress)`` (called while
        B grades) returned True: the grade was cancelled."""
        self._count += 1
        result_path = self._judge.path(f"report-{self._count}.json")
        progress = Progress(self._judge.path(f"progress-{self._count}"))
        cancel_path = self._judge.path(f"cancel-{self._count}")
        job = dict(grading.grade_job(submission, seed, include_hidden, flags, lang, modules, display_dir),
                   result=result_path, progress=progress.path, cancel=cancel_path)
        if not self._judge.send(job, last=False):
            raise self._judge.failure("the grading process is gone")
        waited = time.monotonic()
        while not os.path.exists(result_path):  # B renames the finished file into place
            code = self.process.poll()
            if code is not None:
                raise self._judge.failure(f"the grading process ended with exit code {code}")
            time.sleep(_POLL_S)
            if on_wait is not None and time.monotonic() - waited >= launcher.WAIT_S:
                waited = time.monotonic()
                progress.poll()
                if on_wait(progress) and not os.path.exists(cancel_path):
                    with open(cancel_path, "wb"):
                        pass
        data = launcher.read_answer(result_path)
        for path in (result_path, progress.path, cancel_path):
            if os.path.exists(path):
                os.unlink(path)
        if len(data) > launcher.MAX_ANSWER_BYTES:
            raise GradingFailed("the grading process sent a report too large to read")
        try:
            answer = json.loads(data.decode())
            if "watch_error" in answer:
                raise GradingFailed(f"the grader failed: {answer['watch_error']}")
            if answer.get("cancelled") is True:
                return None
        except (ValueError, TypeError, AttributeError) as exc:
            raise GradingFailed(f"the grading process sent an unreadable report ({exc})") from None
        return grading.report_from(answer)

    def close(self, timeout=1.0):
        """End B (and with it its zygote and boxes), then remove what its grades
        worked in; never leaves it running. B between grades ends when its input
        closes; in the middle of one it is stopped as on Ctrl-C."""
        self._judge.close(timeout)


def watch(saves, submission, seed, show, include_hidden=True, modules=None, lang="en", display=None,
          results="results.json", width=80, check=None):
    """(A) Grade ``submission`` with ``seed``, then again each time ``saves`` (a
    :class:`~autograder.judge_process.saved_files.FolderWatch`) sees a module saved,
    until Ctrl-C, SIGTERM or SIGHUP. ``show(report, status)`` writes and shows each
    finished grade with its status lines (what was saved, what changed, in ``width``
    cells). A save while a grade runs cancels it; a judge that died is replaced.
    ``check()``, called on each turn of every wait, raises an interrupt the caller's
    handler lost (:class:`autograder.judge_process.interrupts.Received`)."""
    from autograder.intake.integrity import submission_tamper_flags
    from autograder.judge_process.running_test import RunningTest
    from autograder.reports.terminal import change_lines

    try:
        judge = WatchJudge()
    except KeyboardInterrupt:
        return
    running = RunningTest(lang)
    previous, base, saved, started, pending = None, None, [], time.monotonic(), []

    check = check or (lambda: None)

    def on_wait(progress):
        check()
        running(progress)
        names = saves.changed()
        pending.extend(name for name in names if name not in pending)
        return bool(pending)

    contract = active_assignment.current().modules
    try:
        while True:
            failure = None
            only = saved_modules.regrade_only(saved, base, modules, submission, contract)
            try:
                report = judge.grade(submission, seed=seed, include_hidden=include_hidden,
                                     flags=submission_tamper_flags(submission), lang=lang, modules=only or modules,
                                     display_dir=display, on_wait=on_wait)
                if report is not None and only:
                    report = saved_modules.merged(base, report, only)
            except GradingFailed as exc:
                report, failure = grading.crash_report(display, seed, str(exc), lang), exc
            running.clear()
            if report is None:  # a newer save: grade that instead
                saved = sorted(set(saved) | set(pending))
                pending.clear()
                started = time.monotonic()
                running.say(t("Saved {files} again: grading the new version.", lang, files=", ".join(saved)))
                continue
            status = []
            if saved:
                seconds = "%.2f" % (time.monotonic() - started)
                if only and failure is None:
                    status.append(t("Saved {files}: graded {modules} again in {seconds} s; the other modules "
                                    "are unchanged and keep their results.", lang, files=", ".join(saved),
                                    modules=", ".join(only), seconds=seconds))
                else:
                    status.append(t("Saved {files}: graded again in {seconds} s.", lang, files=", ".join(saved),
                                    seconds=seconds))
            base = report if failure is None else None  # after a failure everything is graded again
            if failure is None:
                status += change_lines(previous, report, lang, width)
                previous = report
            elif judge.process.poll() is not None:  # the judge itself died: start another
                judge.close()
                judge = WatchJudge()
            status.append(t("Watching {folder} (seed {seed}, results in {results}): save a module to grade "
                            "again, Ctrl-C to stop.", lang, folder=display, seed=seed, results=results))
            show(report, status)
            saved = list(pending) or saves.wait(between=check)
            pending.clear()
            started = time.monotonic()
    except KeyboardInterrupt:
        pass
    finally:
        running.clear()
        judge.close()


def _serve(jobs, boxes):
    from autograder.judging.plugin import report_progress_to
    from autograder.sandbox import call_clock

    for job in jobs:
        report_progress_to(job.get("progress"))
        call_clock.cancel_when(job.get("cancel"))
        try:
            data = grading.grade(job, boxes).to_gradescope()
        except call_clock.Cancelled:  # a newer save: its boxes are closed, the next job comes
            data = {"cancelled": True}
        except Exception as exc:  # the grader's own failure: A says so and keeps watching
            traceback.print_exc()
            data = {"watch_error": f"{type(exc).__name__}: {exc}"}
        finally:
            report_progress_to(None)
            call_clock.cancel_when(None)
        launcher.write_answer(job["result"], data)


def serve(boxes):
    """(B) Grade one job per line until standard input closes (or Ctrl-C)."""
    try:
        from autograder.judging import suites

        jobs = (json.loads(line.decode()) for line in sys.stdin.buffer)
        first = next(jobs, None)
        if first is not None:  # the suites are collected once for the whole session
            suites.kept_collected(bool(first["include_hidden"]),
                                  lambda: _serve(itertools.chain([first], jobs), boxes))
    except KeyboardInterrupt:
        pass
    return 0
