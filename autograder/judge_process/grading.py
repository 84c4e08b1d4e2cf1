"""``grade`` runs its judge in a clean process of its own.

The command-line process (A) holds what the caller gave it: arguments and an
environment that may name the runner's file-command files (``GITHUB_OUTPUT``,
``GITHUB_STEP_SUMMARY``) or carry tokens. It never imports torch and never
meets student code. It starts the grading process (B) as a fresh interpreter
with a scrubbed environment; B imports torch once, forks the sandbox's zygote
from itself -- before it has received anything of the job, so the zygote and
every box forked from it hold nothing of the judge -- and only then reads the
job, loads the suites and grades. B sends the report back as JSON; A writes
``results.json``, the Classroom output and the summary after B and every
process of the submission are gone.

One torch import serves both the judge and the boxes: that is what keeps a
grade close to the cost of ``import torch`` (benchmarks/bench_grade.py).

While it waits, A reads which test B is running (B appends a line to a file of
A's private folder as each test starts: :class:`Progress`) and hands it to the
caller's ``on_wait``, which shows it once a test has run for a second.

Ctrl-C, SIGTERM or SIGHUP stop B first, which closes its boxes, and then A
removes the folders the grade worked in (:mod:`autograder.judge_process.interrupts`).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

from autograder import locations
from autograder.judge_process import interrupts
from autograder.judging import grading_area
from autograder.judging.results import GradeReport

PACKAGE_ROOT = str(locations.REPO_ROOT)
MAX_REPORT_BYTES = 64 * 2**20
STOP_WAIT_S = 30.0  # after an interrupt: B closes its boxes, then A removes their folders
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from autograder.judge_process import grading; grading.main()")
WAIT_S = 0.05  # how often A looks at B's progress while it waits


class GradingFailed(RuntimeError):
    """The grading process died or answered nonsense (the grader's failure)."""


class Progress:
    """(A) The test B runs now, read from the file B appends ``[module, title]`` lines to:
    ``current`` (None before the first) and ``since``, when it started (monotonic)."""

    def __init__(self, path):
        self.path = path
        with open(path, "wb"):
            pass
        self._offset, self._partial = 0, b""
        self.current, self.since = None, time.monotonic()

    def poll(self):
        """Read what B appended since the last poll."""
        try:
            with open(self.path, "rb") as log:
                log.seek(self._offset)
                data = log.read(1 << 16)
        except OSError:
            return
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            try:
                module, title = json.loads(line.decode("utf-8"))
            except (ValueError, TypeError):
                continue
            self.current, self.since = (str(module), str(title)), time.monotonic()


def _environment():
    from autograder.sandbox.environment import forking_environment

    env = forking_environment()  # B forks the zygote, and the zygote every box
    env.update({key: value for key, value in os.environ.items() if key.startswith("AUTOGRADER_")})
    return env


def grade_in_clean_process(submission, seed, include_hidden, flags, lang="en", modules=None, display_dir=None,
                           on_wait=None):
    """(A) Grade ``submission`` in a fresh grading process; returns its :class:`GradeReport`.
    ``on_wait(progress)`` is called every few hundredths of a second while B grades."""
    # The report comes back in a file of a private folder (portable; student
    # code can neither reach it nor the pipe the job goes through).
    with interrupts.as_interrupt(), tempfile.TemporaryDirectory(prefix="autograder-grading-") as private, \
            tempfile.TemporaryFile() as log, grading_area.run_folder() as areas:
        result_path = os.path.join(private, "report.json")
        progress = Progress(os.path.join(private, "progress"))
        job = {"submission": os.path.abspath(submission), "seed": seed, "include_hidden": include_hidden,
               "flags": list(flags or []), "result": result_path, "lang": lang,
               "modules": list(modules) if modules else None, "display": display_dir,
               "progress": progress.path}
        # Its own output (tracebacks only, never expected) is kept apart and shown
        # escaped by the caller: it may quote student text.
        process = subprocess.Popen([sys.executable, "-I", "-B", "-c", _BOOT, PACKAGE_ROOT],
                                   stdin=subprocess.PIPE, stdout=log, stderr=log,
                                   env=grading_area.judge_environment(_environment(), areas), cwd=PACKAGE_ROOT)
        try:
            try:
                process.stdin.write(json.dumps(job).encode())
                process.stdin.close()
            except OSError:
                pass
            code = None
            while code is None:
                try:
                    code = process.wait(timeout=WAIT_S)
                except subprocess.TimeoutExpired:
                    if on_wait is not None:
                        progress.poll()
                        on_wait(progress)
        except KeyboardInterrupt:
            interrupts.stop(process, STOP_WAIT_S)  # its boxes are gone before their folders
            raise
        data = b""
        if os.path.exists(result_path):
            with open(result_path, "rb") as result:
                data = result.read(MAX_REPORT_BYTES + 1)
        log.seek(0)
        output = log.read()[-8000:].decode("utf-8", "replace")
    if code != 0 or not data or len(data) > MAX_REPORT_BYTES:
        raise GradingFailed(f"the grading process ended with exit code {code}"
                            + (f":\n{output}" if output.strip() else ""))
    try:
        return GradeReport.from_gradescope(json.loads(data.decode()))
    except (ValueError, TypeError, AttributeError) as exc:
        raise GradingFailed(f"the grading process sent an unreadable report ({exc})") from None


def main():
    """(B) Import torch, fork the zygote, then read the job and grade."""
    del sys.argv[1:]
    code = 1
    try:
        with interrupts.judge_boxes() as boxes:
            job = json.loads(sys.stdin.buffer.read(1 << 20).decode())
            from autograder.judging.engine import grade_submission
            from autograder.judging.plugin import report_progress_to

            report_progress_to(job.get("progress"))
            report = grade_submission(job["submission"], seed=job["seed"], include_hidden=job["include_hidden"],
                                      flags=job["flags"], boxes=boxes, lang=job.get("lang") or "en",
                                      modules=job.get("modules"), display_dir=job.get("display"))
            data = report.to_gradescope()
            with open(job["result"], "wb") as result:
                result.write(json.dumps(data, allow_nan=False).encode())
            code = 0
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)
