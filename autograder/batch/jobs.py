"""One student's grading in a batch: by one of the grading processes kept for
the class (POSIX, :mod:`autograder.batch.slots`) or by a ``grade`` subprocess
(elsewhere); started, polled, killed, and read back through its ``results.json``.

A grading process is a judge, not student code: student code runs only in the
boxes the sandbox zygote forks (through the channel the judge opened for it).
"""
import contextlib
import json
import os
import pathlib
import select
import subprocess
import sys
import time

from autograder import locations
from autograder.i18n import _, as_data
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


def grade_job(submission, seed, include_hidden, with_flags, boxes=None, uid=None, lang="en", modules=None):
    """What the child runs: the same call as ``python -m autograder grade``,
    with the batch's zygote (through a channel of this child's own), the
    uid the batch picked for this student and the language of their feedback
    (:func:`autograder.batch.plan.feedback_language`); ``modules``: grade only
    these (``--module``: a commit of a history whose other modules are graded already)."""
    from autograder.intake.integrity import submission_tamper_flags
    from autograder.judging.engine import grade_submission

    flags = submission_tamper_flags(submission) if with_flags else []
    report = grade_submission(submission, seed=seed, include_hidden=include_hidden, flags=flags,
                              boxes=boxes, uid=uid, lang=lang, modules=modules)
    mark_unwritten(report)
    return report


def mark_unwritten(report):
    """``unwritten: true`` on each diagnosis whose test stopped on the TODO's stub (it still raises
    NotImplementedError): the class report keeps "not written yet" apart from the mistakes."""
    from autograder.judging.feedback import not_written

    for module, entry in report.diagnosis.items():
        if not isinstance(entry, dict) or entry.get("problem"):
            continue
        shown = next((test for test in report.tests if test.module == module and test.name == entry.get("test")),
                     None)
        if shown is not None and shown.error is not None and not_written(shown):
            entry["unwritten"] = True


ZERO_TEST = "grader: "  # + the status: the one test of a zero report (read back by zero_report_status)


def zero_report(student, seed, status, reason, submission=""):
    """The results.json of a student whose grading did not complete."""
    from autograder.judging.results import GradeReport, TestResult

    test = TestResult(name=ZERO_TEST + status, module="grader", max_score=0.0, score=0.0,
                      passed=False, visibility="visible",
                      output=f"{reason}\nAsk the course staff to re-grade {student} "
                             f"(seed {seed}).")
    return GradeReport(tests=[test], seed=seed, submission=str(submission), notes=[reason])


def zero_report_status(results_path):
    """``(status, reason)`` when the results.json at ``results_path`` is a
    :func:`zero_report` (a student whose grading did not complete), else None:
    such a file has a score too (0), and must never read as a grade."""
    from autograder.intake import safe_files

    try:
        data = json.loads(safe_files.read_text(str(results_path), MAX_RESULTS_BYTES))
        tests = data["tests"]
        if data["max_score"] != 0 or len(tests) != 1 or tests[0].get("tags") != ["grader"]:
            return None
        name = str(tests[0]["name"])
        status = name.removeprefix(ZERO_TEST) if name.startswith(ZERO_TEST) else None
        notes = data.get("extra_data", {}).get("notes") or [""]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
        return None
    if status not in STATUSES or status == OK:
        return None
    return status, str(notes[0])


def _write_report(report, path, extra=None):
    """results.json of ``report``; ``extra`` (batch facts such as the graded
    commit) is merged into its ``extra_data``."""
    from autograder.reports.gradescope import write_results

    write_results(report, path)
    if extra:
        add_extra_data(path, extra)


def add_extra_data(path, extra):
    """Merge ``extra`` into ``extra_data`` of the results file at ``path``, atomically.
    The file is the grading process's (a judge's), read within a bound all the same."""
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
        self.modules = None  # grade only these modules (None: all)
        self.pidfd = None   # readable once the process has ended (Linux)

    def prepare(self):
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for stale in (self.results, self.log):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()

    def elapsed(self):
        return time.monotonic() - self.started if self.started is not None else 0.0

    def _watch(self):
        self.pidfd = os_limits.watch_fd(self.pid)

    def release(self):
        """Once the job is finished: close what watched its process."""
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = None

    def wake_fds(self):
        return [self.pidfd] if self.pidfd is not None else []

    def _verdict(self, exit_description, clean_exit):
        """(status, reason) once the process is gone."""
        if not clean_exit:
            return CRASHED, f"the grader stopped before finishing ({exit_description})"
        if _score_of(self.results) is None:
            return CRASHED, f"the grader left no readable results ({exit_description})"
        return OK, ""


class ForkJob(_Job):
    """POSIX: graded by one of the batch's grading processes (:mod:`autograder.batch.slots`),
    forked from this pre-imported process; it writes results.json."""

    pool = None  # the batch's slots, set before start()

    def start(self):
        self.prepare()
        self.started = time.monotonic()
        self.pool.start(self)
        self.pid = self.slot.pid

    def wake_fds(self):
        return self.pool.wake_fds(self)

    def poll(self):
        return self.pool.poll(self)

    def kill(self):
        if self.pool is not None:
            self.pool.kill(self)


class SubprocessJob(_Job):
    """No fork (Windows) or ``--isolation subprocess``: one ``grade`` process per student."""

    def start(self):
        self.prepare()
        command = [sys.executable, "-m", "autograder", "grade", "--submission",
                   str(pathlib.Path(self.submission).resolve()), "--results", str(self.results.resolve()),
                   "--seed", str(self.seed), "--quiet", "--lang", self.lang]
        if not self.include_hidden:
            command.append("--visible-only")
        for module in self.modules or ():
            command += ["--module", module]
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
    """Return once one of ``jobs`` may have ended, or after ``timeout`` seconds: at
    once where each can be watched (a pidfd, a slot's answer), else after ``poll_s``."""
    watched = [job.wake_fds() for job in jobs]
    fds = [fd for each in watched for fd in each]
    if not all(watched):
        time.sleep(poll_s)
        return
    with contextlib.suppress(OSError, ValueError):
        select.select(fds, [], [], timeout)


# -- process hygiene (of the grading processes; boxes die with their keepers) -----------------
def sweep_orphans(keep):
    """Kill and reap our direct children that are not jobs in ``keep``: processes a
    dead grading process left behind, re-parented to this subreaper."""
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


# -- the warnings a class run's grading writes (run.json's ``warnings``), kept as messages
# (i18n.as_data) so that each page and terminal shows them in its own language
def unconfined(summary, problems):
    """Graded with ``--allow-unconfined`` where a box lacks a layer (``problems``)."""
    if problems:
        return as_data(_("graded WITHOUT full confinement (--allow-unconfined): {summary}; missing: {missing}",
                         summary=summary, missing="; ".join(problems)))
    return as_data(_("graded WITHOUT full confinement (--allow-unconfined): {summary}", summary=summary))


def grader_files_changed(suspects, changed):
    """The grader's guard undid ``changed`` (names) after grading ``suspects`` (students)."""
    files = ", ".join(changed[:10])
    if suspects:
        return as_data(_("the grader's own files changed while grading {who} and were restored before the next "
                         "student: {files}", who=", ".join(sorted(suspects)), files=files))
    return as_data(_("the grader's own files changed while grading this batch and were restored: {files}",
                     files=files))


def grading_process_failed(code, last_lines):
    """The class's judge process ended without answering."""
    return as_data(_("the grading process failed (exit code {code}): {output}", code=code,
                     output=" / ".join(last_lines)))
