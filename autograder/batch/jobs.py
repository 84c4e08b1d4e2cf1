"""One student's grading process in a batch: a child forked from the
pre-imported batch judge (POSIX) or a ``grade`` subprocess (elsewhere),
started, polled, killed, and read back through its ``results.json``.

The child is a judge, not student code: student code runs only in the boxes
its sandbox zygote forks (through the channel the parent opened for it).
"""
import contextlib
import json
import os
import pathlib
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback

from autograder import locations
from autograder.judging.results import CRASHED, NO_COMMIT, NO_SUBMISSION, OK, STATUSES, TIMED_OUT  # noqa: F401
from autograder.sandbox.confine import limits as os_limits
from autograder.sandbox.confine.limits import kill_tree  # noqa: F401  (batch.jobs.kill_tree, as before)

RESULTS = "results.json"
CHILD_LOG = "grader.log"
REPO_ROOT = locations.REPO_ROOT
MAX_RESULTS_BYTES = 16 * 2**20


class UsageError(Exception):
    """Bad arguments or input folders: exit code 2."""


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a batch; ``entries`` (filled in by ``grade_class.run_batch``) is
    complete: unfinished students crashed."""

    def __init__(self, entries=None):
        super().__init__("interrupted")
        self.entries = entries


def grade_job(submission, seed, include_hidden, with_flags, boxes=None, uid=None, lang="en"):
    """What the child runs: the same call as ``python -m autograder grade``,
    with the batch's zygote (through a channel of this child's own), the
    uid the batch picked for this student and the language of their feedback
    (:func:`autograder.batch.plan.feedback_language`)."""
    from autograder.intake.integrity import submission_tamper_flags
    from autograder.judging.engine import grade_submission

    flags = submission_tamper_flags(submission) if with_flags else []
    return grade_submission(submission, seed=seed, include_hidden=include_hidden, flags=flags,
                            boxes=boxes, uid=uid, lang=lang)


def zero_report(student, seed, status, reason, submission=""):
    """The results.json of a student whose grading did not complete."""
    from autograder.judging.results import GradeReport, TestResult

    test = TestResult(name=f"grader: {status}", module="grader", max_score=0.0, score=0.0,
                      passed=False, visibility="visible",
                      output=f"{reason}\nAsk the course staff to re-grade {student} "
                             f"(seed {seed}).")
    return GradeReport(tests=[test], seed=seed, submission=str(submission), notes=[reason])


def _write_report(report, path, extra=None):
    """results.json of ``report``; ``extra`` (batch facts such as the graded
    commit) is merged into its ``extra_data``."""
    from autograder.reports.gradescope import write_results

    write_results(report, path)
    if extra:
        add_extra_data(path, extra)


def add_extra_data(path, extra):
    """Merge ``extra`` into ``extra_data`` of the results file at ``path``, atomically.
    The file is the grading child's (a judge's), read within a bound all the same."""
    from autograder.intake import safe_files

    path = pathlib.Path(path)
    data = json.loads(safe_files.read_text(str(path), MAX_RESULTS_BYTES))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a results object")
    extra_data = data.get("extra_data") if isinstance(data.get("extra_data"), dict) else {}
    data["extra_data"] = dict(extra_data, **extra)
    temporary = path.with_name(f".{path.name}.extra")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


class _Job:
    """One student: started, polled, maybe killed. Subclasses: fork or subprocess."""

    def __init__(self, student, submission, layout, out_dir, seed, include_hidden, timeout,
                 channel=None, uid=None):
        self.channel = channel  # this student's channel to the batch's sandbox zygote
        self.uid = uid          # the student's own uid (as root)
        self.student = student
        self.submission = submission
        self.layout = layout
        self.out_dir = pathlib.Path(out_dir)
        self.results = self.out_dir / RESULTS
        self.log = self.out_dir / CHILD_LOG
        self.seed = seed
        self.include_hidden = include_hidden
        self.timeout = timeout
        self.started = None
        self.pid = None
        self.entry = None   # the run.json entry this job fills (default: the student's)
        self.extra = None   # merged into extra_data of its results.json once graded
        self.label = student
        self.lang = "en"    # the language of this student's feedback
        self.pidfd = None   # readable once the process has ended (Linux)
        self.references = None  # a forked child's reference runs come back in this file

    def prepare(self):
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for stale in (self.results, self.log):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()

    def elapsed(self):
        return time.monotonic() - self.started if self.started is not None else 0.0

    def _watch(self):
        try:
            self.pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux, or an old kernel: the batch polls
            self.pidfd = None

    def release(self, graded=False):
        """Once the job is finished: close what watched its process; a child that
        graded hands its reference runs to this process, for the next children."""
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = None
        if self.references is not None:
            if graded:
                from autograder.judging import reference_cache

                reference_cache.merge(self.references.fileno())
            self.references.close()
            self.references = None

    def _verdict(self, exit_description, clean_exit):
        """(status, reason) once the process is gone."""
        if not clean_exit:
            return CRASHED, f"the grader stopped before finishing ({exit_description})"
        if _score_of(self.results) is None:
            return CRASHED, f"the grader left no readable results ({exit_description})"
        return OK, ""


def _describe_status(status):
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.WEXITSTATUS(status)}"


class ForkJob(_Job):
    """POSIX: fork this pre-imported process; the child grades and writes results.json."""

    def start(self):
        self.prepare()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        self.started = time.monotonic()
        self.references = tempfile.TemporaryFile()  # unlinked: only this process and its child hold it
        pid = os.fork()
        if pid == 0:
            _child_main(self)  # never returns
        self.pid = pid
        self._watch()
        if self.channel is not None:  # the child holds it now
            self.channel.close()

    def poll(self):
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere: judge by the file
            return self._verdict("exit status unknown", True)
        if pid == 0:
            return None
        return self._verdict(_describe_status(status), os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0)

    def kill(self):
        if self.pid is None:  # interrupted before its fork returned: swept as an orphan
            return
        kill_tree(self.pid)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _child_main(job):
    """The forked child: grade, write results.json, ``os._exit``. Never returns."""
    code = 70
    try:
        os.setpgid(0, 0)  # Ctrl-C reaches the batch's judge only; it cleans up
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        log = os.open(job.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        from autograder.sandbox.boxes import boxes_from_channel

        boxes = boxes_from_channel(job.channel)
        report = grade_job(job.submission, job.seed, job.include_hidden, job.layout == "repo",
                           boxes=boxes, uid=job.uid, lang=job.lang)
        _write_report(report, job.results)
        code = 0
        from autograder.judging import reference_cache

        reference_cache.export(job.references.fileno())
    except BaseException:  # noqa: B036 - the child must always reach os._exit
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


class SubprocessJob(_Job):
    """No fork (Windows) or ``--isolation subprocess``: one ``grade`` process per student."""

    def start(self):
        self.prepare()
        command = [sys.executable, "-m", "autograder", "grade", "--submission",
                   str(pathlib.Path(self.submission).resolve()), "--results", str(self.results.resolve()),
                   "--seed", str(self.seed), "--quiet", "--lang", self.lang]
        if not self.include_hidden:
            command.append("--visible-only")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
        options = {"cwd": str(self.out_dir), "stdin": subprocess.DEVNULL, "env": env}
        if os.name == "nt":
            options["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            options["start_new_session"] = True
        self.started = time.monotonic()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **options)
        self.pid = self.proc.pid
        self._watch()

    def poll(self):
        code = self.proc.poll()
        if code is None:
            return None
        if code == 1:  # grade's own failure (it wrote a crash report): say so
            return CRASHED, "the grader failed on this submission (exit code 1, see grader.log)"
        return self._verdict(f"exit code {code}", code == 0)

    def kill(self):
        if self.pid is None:
            return
        if os.name != "nt":
            kill_tree(self.pid)
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=10)


def wait_for_any(jobs, timeout, poll_s):
    """Return once one of ``jobs`` has ended, or after ``timeout`` seconds: at
    once where each process can be watched (a pidfd), else after ``poll_s``."""
    fds = [job.pidfd for job in jobs if job.pidfd is not None]
    if not fds or len(fds) < len(jobs):
        time.sleep(poll_s)
        return
    with contextlib.suppress(OSError, ValueError):
        select.select(fds, [], [], timeout)


# -- process hygiene (of the grading children; boxes are killed by their keepers) ------------
def sweep_orphans(keep):
    """Kill and reap our direct children that are not jobs in ``keep``: processes a
    dead grading child left behind, re-parented to this subreaper."""
    if not os.path.isdir("/proc"):
        return 0
    me, swept = os.getpid(), 0
    for pid in os_limits.children(me):
        if pid in keep:
            continue
        kill_tree(pid)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)
        swept += 1
    return swept



def _score_of(results_path):
    try:
        data = json.loads(pathlib.Path(results_path).read_text(encoding="utf-8"))
        return f"{data['score']}/{data['max_score']}"
    except (OSError, ValueError, KeyError, TypeError):
        return None
