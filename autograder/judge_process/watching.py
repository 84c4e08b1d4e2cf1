"""``watch`` keeps one judge process (B) alive between grades.

Same split as :mod:`autograder.judge_process.grading`: the command-line process (A)
never imports torch nor meets student code; B is a fresh interpreter with a
scrubbed environment that imports torch and forks the sandbox's zygote before
it has read anything of a job. What ``watch`` saves is that start (and pytest's collection): B then
grades one job per line of its standard input with
:func:`autograder.judging.engine.grade_submission`, each in fresh boxes forked for that
grade, with its own uid, confinement and isolation report, exactly like
``grade``; the suites are collected once for the session
(:func:`autograder.judging.suites.kept_collected`). Each report comes back in a file of A's private folder.

A grade can be cancelled (a newer save): A creates the job's ``cancel`` file,
B's grade unwinds at its next test or within a quarter of a second of the call
it waits for (:func:`autograder.sandbox.call_clock.cancel_when`), closes its
boxes and answers ``{"cancelled": true}``; B then serves the next job.

B ends when its standard input closes, on Ctrl-C, on SIGTERM (A's SIGTERM or
SIGHUP, passed on) or when A dies; its zygote runs in a session of its own and
ends when B's channel to it closes.
"""
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

from autograder.judge_process import interrupts
from autograder.judge_process.grading import (MAX_REPORT_BYTES, PACKAGE_ROOT, STOP_WAIT_S, GradingFailed,
                                              Progress, _environment)
from autograder.judging import grading_area
from autograder.judging.results import GradeReport

_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from autograder.judge_process import watching; watching.main()")
_POLL_S = 0.005
WAIT_S = 0.05  # how often A looks at B's progress and the folder while it waits


class WatchJudge:
    """(A) The judge process of a ``watch`` session; ``grade(job)`` returns a :class:`GradeReport`."""

    def __init__(self):
        self._private = tempfile.TemporaryDirectory(prefix="autograder-watch-")
        self._areas = grading_area.run_folder()
        self._log = tempfile.TemporaryFile()
        self._count = 0
        # B's own output (tracebacks only) is kept apart: it may quote student text.
        self.process = subprocess.Popen([sys.executable, "-I", "-B", "-c", _BOOT, PACKAGE_ROOT],
                                        stdin=subprocess.PIPE, stdout=self._log, stderr=self._log,
                                        env=grading_area.judge_environment(_environment(), self._areas.name),
                                        cwd=PACKAGE_ROOT)

    def _failure(self, what):
        self._log.seek(0)
        output = self._log.read()[-8000:].decode("utf-8", "replace")
        return GradingFailed(what + (f":\n{output}" if output.strip() else ""))

    def grade(self, submission, seed, include_hidden, flags, lang="en", modules=None, display_dir=None,
              on_wait=None):
        """The job's :class:`GradeReport`, or None when ``on_wait(progress)`` (called while
        B grades) returned True: the grade was cancelled."""
        self._count += 1
        result_path = os.path.join(self._private.name, f"report-{self._count}.json")
        progress = Progress(os.path.join(self._private.name, f"progress-{self._count}"))
        cancel_path = os.path.join(self._private.name, f"cancel-{self._count}")
        job = {"submission": os.path.abspath(submission), "seed": seed, "include_hidden": include_hidden,
               "flags": list(flags or []), "result": result_path, "lang": lang,
               "modules": list(modules) if modules else None, "display": display_dir,
               "progress": progress.path, "cancel": cancel_path}
        try:
            self.process.stdin.write(json.dumps(job).encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            raise self._failure("the grading process is gone") from None
        waited = time.monotonic()
        while not os.path.exists(result_path):  # B renames the finished file into place
            code = self.process.poll()
            if code is not None:
                raise self._failure(f"the grading process ended with exit code {code}")
            time.sleep(_POLL_S)
            if on_wait is not None and time.monotonic() - waited >= WAIT_S:
                waited = time.monotonic()
                progress.poll()
                if on_wait(progress) and not os.path.exists(cancel_path):
                    with open(cancel_path, "wb"):
                        pass
        with open(result_path, "rb") as result:
            data = result.read(MAX_REPORT_BYTES + 1)
        for path in (result_path, progress.path, cancel_path):
            if os.path.exists(path):
                os.unlink(path)
        if len(data) > MAX_REPORT_BYTES:
            raise GradingFailed("the grading process sent a report too large to read")
        try:
            answer = json.loads(data.decode())
            if "watch_error" in answer:
                raise GradingFailed(f"the grader failed: {answer['watch_error']}")
            if answer.get("cancelled") is True:
                return None
            return GradeReport.from_gradescope(answer)
        except (ValueError, TypeError, AttributeError) as exc:
            raise GradingFailed(f"the grading process sent an unreadable report ({exc})") from None

    def close(self, timeout=1.0):
        """End B (and with it its zygote and boxes), then remove what its grades
        worked in; never leaves it running. B between grades ends when its input
        closes; in the middle of one it is stopped as on Ctrl-C."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            interrupts.stop(self.process, STOP_WAIT_S)
        self._log.close()
        self._private.cleanup()
        self._areas.cleanup()


def _write_answer(path, data):
    temporary = path + ".part"
    with open(temporary, "wb") as answer:
        answer.write(json.dumps(data, allow_nan=False).encode())
    os.replace(temporary, path)


def _serve(jobs, boxes):
    from autograder.judging.engine import grade_submission
    from autograder.judging.plugin import report_progress_to
    from autograder.sandbox import call_clock

    for job in jobs:
        report_progress_to(job.get("progress"))
        call_clock.cancel_when(job.get("cancel"))
        try:
            report = grade_submission(job["submission"], seed=job["seed"], include_hidden=job["include_hidden"],
                                      flags=job["flags"], boxes=boxes, lang=job.get("lang") or "en",
                                      modules=job.get("modules"), display_dir=job.get("display"))
            data = report.to_gradescope()
        except call_clock.Cancelled:  # a newer save: its boxes are closed, the next job comes
            data = {"cancelled": True}
        except Exception as exc:  # the grader's own failure: A says so and keeps watching
            traceback.print_exc()
            data = {"watch_error": f"{type(exc).__name__}: {exc}"}
        finally:
            report_progress_to(None)
            call_clock.cancel_when(None)
        _write_answer(job["result"], data)


def main():
    """(B) Import torch, fork the zygote, then grade one job per line until stdin closes."""
    del sys.argv[1:]
    try:
        with interrupts.judge_boxes() as boxes:
            from autograder.judging import suites

            jobs = (json.loads(line.decode()) for line in sys.stdin.buffer)
            first = next(jobs, None)
            if first is not None:  # the suites are collected once for the whole session
                suites.kept_collected(bool(first["include_hidden"]),
                                      lambda: _serve(itertools.chain([first], jobs), boxes))
    except KeyboardInterrupt:
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(0)
