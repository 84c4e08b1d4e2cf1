"""One way to start a judge: every command that grades (``grade``, ``watch``,
``grade-many``, an assignment's own such as ``conformance``) runs its judge here.

The command-line process (A) holds what the caller gave it: arguments and an
environment that may name the runner's file-command files (``GITHUB_OUTPUT``,
``GITHUB_STEP_SUMMARY``) or carry tokens. It never meets student code. It
starts the judge process (B) as a fresh interpreter (``-I -B``) with a scrubbed
environment, in a run folder of its own for the grades' areas
(:func:`autograder.judging.grading_area.run_folder`), and hands it its jobs as
JSON on standard input. B names its *role* -- a function ``serve(boxes, *args)``
given as ``module:function`` on its command line -- and :func:`judge_main`
imports it, forks the sandbox's zygote from B *before* B has read anything of
a job (so the zygote and every box forked from it hold nothing of the judge,
the seed or the class), then calls it. A role answers in a file of A's
private folder (:func:`write_answer`); B's own output (tracebacks only) is kept
apart, to be shown escaped: it may quote student text.

Ctrl-C, SIGTERM or SIGHUP stop B first, which closes its boxes, and only then
are the folders its grades worked in removed (:mod:`autograder.judge_process.interrupts`).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

from autograder import active_assignment, locations
from autograder.judge_process import interrupts
from autograder.judging import grading_area

PACKAGE_ROOT = str(locations.REPO_ROOT)
MAX_ANSWER_BYTES = 64 * 2**20
MAX_JOB_BYTES = 1 << 20
STOP_WAIT_S = 30.0  # after an interrupt: B closes its boxes, then A removes their folders
WAIT_S = 0.05  # how often A looks at B's progress while it waits
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from autograder.judge_process import launcher; launcher.judge_main()")


class GradingFailed(RuntimeError):
    """The judge process died or answered nonsense (the grader's failure)."""


class Progress:
    """(A) The test B runs now, read from the file B appends ``[module, title, lane]`` lines to
    as each test starts: ``current`` (None before the first) and ``since``, when it started
    (monotonic). A lane is a process running tests one after another (B, or each process
    running one module's tests apart, which ends with ``[null, null, lane]``); where several
    run, the test that has kept the grade silent longest is the current one."""

    def __init__(self, path):
        self.path = path
        with open(path, "wb"):
            pass
        self._offset, self._partial = 0, b""
        self._lanes = {}  # lane -> ((module, title), since)
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
                module, title, lane = json.loads(line.decode("utf-8"))
                lane = str(lane)
            except (ValueError, TypeError):
                continue
            if title is None:
                self._lanes.pop(lane, None)
            else:
                self._lanes[lane] = ((str(module), str(title)), time.monotonic())
        if self._lanes:
            self.current, self.since = min(self._lanes.values(), key=lambda entry: entry[1])


def judge_environment(keep=()):
    """B's environment: the scrubbed one of a process that forks boxes, the grader's own
    ``AUTOGRADER_*`` settings, and the variables named in ``keep`` that are set here."""
    from autograder.sandbox.environment import forking_environment

    env = forking_environment()  # B forks the zygote, and the zygote every box
    env.update({key: value for key, value in os.environ.items() if key.startswith("AUTOGRADER_") or key in keep})
    if active_assignment.ENV_VAR in env:  # a chapter's folder, named from A's working directory: B's is the root
        env[active_assignment.ENV_VAR] = active_assignment.absolute(env[active_assignment.ENV_VAR])
    return env


class Judge:
    """(A) One judge process running ``role`` (``"module:function"``), with ``args``
    after it on its command line, the descriptors ``pass_fds`` and the variables
    ``keep`` of this environment. ``prefix`` names A's private folder, where B
    answers (:meth:`path`). :meth:`close` ends B and removes what it worked in."""

    def __init__(self, role, prefix, args=(), pass_fds=(), keep=()):
        self._private = tempfile.TemporaryDirectory(prefix=prefix)
        self._log = tempfile.TemporaryFile()
        self._areas = grading_area.run_folder()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-B", "-c", _BOOT, PACKAGE_ROOT, role, *map(str, args)],
                pass_fds=list(pass_fds), stdin=subprocess.PIPE, stdout=self._log, stderr=self._log,
                env=grading_area.judge_environment(judge_environment(keep), self._areas.name), cwd=PACKAGE_ROOT)
        except BaseException:
            self._remove()
            raise

    def path(self, name):
        """A file of A's private folder (B may write it; student code never reaches it)."""
        return os.path.join(self._private.name, name)

    def send(self, job, last=True):
        """Hand B ``job`` (one JSON line); ``last``: B's input ends after it.
        False when B is gone."""
        try:
            self.process.stdin.write(json.dumps(job).encode() + (b"" if last else b"\n"))
            if last:
                self.process.stdin.close()
            else:
                self.process.stdin.flush()
            return True
        except OSError:
            return False

    def wait(self, on_wait=None):
        """B's exit code once it has ended; ``on_wait()`` is called every WAIT_S meanwhile."""
        while True:
            try:
                return self.process.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                if on_wait is not None:
                    on_wait()

    def output(self):
        """The end of what B printed (tracebacks: show it escaped)."""
        self._log.seek(0)
        return self._log.read()[-8000:].decode("utf-8", "replace")

    def failure(self, what):
        output = self.output()
        return GradingFailed(what + (f":\n{output}" if output.strip() else ""))

    def stop(self, wait_s=STOP_WAIT_S):
        """Ask B to stop as on Ctrl-C and wait for it (killed past ``wait_s``)."""
        interrupts.stop(self.process, wait_s)

    def close(self, timeout=None, wait_s=STOP_WAIT_S):
        """End B -- its input closes; past ``timeout`` seconds it is stopped as on
        Ctrl-C -- then remove what its grades worked in; never leaves it running."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop(wait_s)
        self._remove()

    def _remove(self):
        self._log.close()
        self._private.cleanup()
        self._areas.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        self.close(timeout=None if kind is None else 0)  # after an error B is stopped, not awaited


def read_answer(path, limit=MAX_ANSWER_BYTES):
    """The bytes B answered in ``path`` (at most ``limit`` + 1: more is too much);
    empty when it wrote none."""
    try:
        with open(path, "rb") as answer:
            return answer.read(limit + 1)
    except FileNotFoundError:
        return b""


def run_once(role, job, prefix, on_wait=None, meanwhile=None):
    """(A) ``job`` (a dict) served by a fresh judge process running ``role``: its answer,
    a dict. The job gets ``result`` (where B answers) and ``progress`` (where B appends
    the test it starts, :class:`Progress`); ``on_wait(progress)`` is called every WAIT_S
    while B works. ``meanwhile()``, A's own preparation, runs once B has started and
    before B gets its job, so that it overlaps B's start (torch's import): B waits for its
    job before it reads anything of a submission, so no student code runs before A has
    done; what it returns (a dict, or None) is added to the job. Ctrl-C, SIGTERM or
    SIGHUP stop B, then raise KeyboardInterrupt. Raises :class:`GradingFailed` when B
    fails or answers nonsense."""
    with interrupts.as_interrupt() as received:
        with received.held():  # an interrupt here would lose B's handle
            judge = Judge(role, prefix)
        return _served(judge, job, received, on_wait, meanwhile)


def _served(judge, job, received, on_wait, meanwhile):
    with judge:
        received.check()  # a signal while B started: B is stopped on the way out
        result = judge.path("report.json")
        progress = Progress(judge.path("progress"))
        extra = meanwhile() if meanwhile is not None else None
        judge.send(dict(job, **(extra or {}), result=result, progress=progress.path))

        def waiting():
            received.check()
            if on_wait is not None:
                progress.poll()
                on_wait(progress)

        try:
            code = judge.wait(waiting)
        except KeyboardInterrupt:
            judge.stop()  # its boxes are gone before their folders
            raise
        data = read_answer(result)
        if code != 0 or not data or len(data) > MAX_ANSWER_BYTES:
            raise judge.failure(f"the grading process ended with exit code {code}")
    try:
        answer = json.loads(data.decode())
    except ValueError as exc:
        raise GradingFailed(f"the grading process sent an unreadable report ({exc})") from None
    return answer


# -- B's side -------------------------------------------------------------------------------------
def judge_main():
    """(B) Import the role, fork the zygote, then serve: ``serve(boxes, *args)``'s
    return value is B's exit code (1 when it raised)."""
    import importlib

    role, args = sys.argv[2], sys.argv[3:]
    del sys.argv[1:]
    module, _, name = role.partition(":")
    serve = getattr(importlib.import_module(module), name)
    code = 1
    try:
        with interrupts.judge_boxes() as boxes:
            code = serve(boxes, *args)
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)


def read_job(limit=MAX_JOB_BYTES):
    """(B) The one job on standard input."""
    return json.loads(sys.stdin.buffer.read(limit).decode())


def write_answer(path, data):
    """(B) ``data`` as JSON at ``path``, whole or not at all (A may be looking for it)."""
    temporary = path + ".part"
    with open(temporary, "wb") as answer:
        answer.write(json.dumps(data, allow_nan=False).encode())
    os.replace(temporary, path)
