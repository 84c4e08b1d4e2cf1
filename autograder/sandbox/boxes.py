"""Judge side of the boxes: where a worker process comes from and how it ends.

* :class:`ZygoteBoxes` (Linux): a clean zygote process forks every box (see
  :mod:`autograder.sandbox.zygote` and :mod:`autograder.sandbox.box`). A box
  costs milliseconds, starts with nothing of the judge in memory, confines
  itself, and is killed as a unit through its keeper.
* :class:`SpawnBoxes` (macOS, Windows, or ``AUTOGRADER_SANDBOX=spawn``): a fresh
  ``python -I`` per box, confined with what the platform has
  (:mod:`autograder.sandbox.confine.platforms`).

Both hand out :class:`Box` objects with the same surface: ``sock`` (the
worker's socket), ``isolation`` (what held), ``kill()``, ``exit_status()``.
"""
import dataclasses
import json
import os
import secrets
import select
import socket
import subprocess
import sys
import time

from autograder import locations
from autograder.intake import stack_dump
from autograder.sandbox.confine import platforms
from autograder.sandbox.environment import (SAFE_ENVIRONMENT, forking_environment, scrubbed_environment,  # noqa: F401
                                            spawn_forgoes_confinement, use_zygote)

PACKAGE_ROOT = str(locations.REPO_ROOT)
READY_TIMEOUT_S = 180.0
# Only these variables reach a zygote or worker: no tokens, no runner file-command paths.
class BoxError(RuntimeError):
    """The box could not be created (the grader's problem, not the student's)."""


def _recv_json(sock, timeout):
    """One JSON message from a SEQPACKET socket, or None on timeout / EOF / garbage."""
    ready, _, _ = select.select([sock], [], [], max(0.0, timeout))
    if not ready:
        return None
    try:
        data = sock.recv(65536)
    except OSError:
        return None
    if not data:
        return None
    try:
        message = json.loads(data.decode())
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


class Box:
    """A worker and its keeper, from the judge's side."""

    def __init__(self, sock, keeper, isolation=None, pid=None):
        self.sock = sock
        self.keeper = keeper
        self.pid = pid
        self.isolation = isolation or {}
        self._status = None

    def wait_ready(self, timeout):
        message = _recv_json(self.keeper, timeout)
        if message is not None and isinstance(message.get("error"), str):  # the zygote could not make it
            raise BoxError(f"the grader could not start a box here: {message['error'][:200]}")
        if message is None or "pid" not in message:
            raise BoxError("the box keeper did not answer")
        self.pid = message["pid"]
        self.isolation = dict(message.get("isolation") or {})
        self.isolation.pop("scratch_writable", None)  # the worker's own business
        return self

    def kill(self):
        try:
            self.keeper.send(b"kill")
        except OSError:
            pass

    def stack(self):
        """The stack the worker dumps when its keeper signals it (b"" if none came):
        where a call that ran out of time was (:mod:`autograder.intake.stack_dump`)."""
        try:
            self.keeper.send(b"where")
        except OSError:
            return b""
        return stack_dump.read(self.sock)

    def usage(self, timeout=2.0):
        """``(cpu_seconds, running, whole, others)`` as the box's keeper counts them
        (trusted: outside the box; :func:`autograder.sandbox.confine.limits.box_count`):
        CPU time the box spent so far (``whole``: every process it ever ran; else
        its live ones), whether one of them is runnable now, how many live processes
        it holds besides the worker; None when unknown."""
        if self._status is not None:
            return None
        try:
            self.keeper.send(b"cpu")
        except OSError:
            return None
        deadline = time.monotonic() + timeout
        while True:
            message = _recv_json(self.keeper, deadline - time.monotonic())
            if message is None:
                return None
            if "exit" in message:
                self._status = str(message["exit"])[:100]
                return None
            if "cpu" in message:
                value, others = message["cpu"], message.get("others", 0)
                if not all(isinstance(number, (int, float)) and not isinstance(number, bool)
                           for number in (value, others)):
                    return None
                return float(value), bool(message.get("running")), message.get("whole") is True, int(others)

    def exit_status(self, timeout=3.0):
        """How the worker ended ('exit code N', 'killed by signal N'); waits up to ``timeout``."""
        deadline = time.monotonic() + timeout
        while self._status is None:
            message = _recv_json(self.keeper, deadline - time.monotonic())
            if message is None:
                return "connection lost"
            if "exit" in message:
                self._status = str(message["exit"])[:100]
        return self._status

    def close(self):
        self.kill()
        self.exit_status(timeout=5.0)
        for sock in (self.sock, self.keeper):
            try:
                sock.close()
            except OSError:
                pass


class _ForkedProcess:
    """What :class:`ZygoteBoxes` needs of a forked zygote (Popen's surface)."""

    def __init__(self, pid):
        self.pid = pid

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return 0
            if pid:
                return 0
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("zygote", timeout)
            time.sleep(0.01)

    def kill(self):
        try:
            os.kill(self.pid, 9)
        except OSError:
            pass


class ZygoteBoxes:
    """One zygote per grade (or per batch); boxes are forked from it on request."""

    def __init__(self, channel=None, process=None, ready=None):
        self.channel = channel
        self.process = process
        self._ready = (channel is not None and process is None) if ready is None else ready
        self.error = None
        self.cpus = None  # the CPUs the boxes asked for here run on (the "cpu affinity" layer); None: any

    @classmethod
    def start(cls):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        boot = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "from autograder.sandbox import zygote; zygote.main()")
        debug = bool(os.environ.get("AUTOGRADER_DEBUG"))
        process = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", boot, PACKAGE_ROOT, str(theirs.fileno())],
            pass_fds=[theirs.fileno()], env=forking_environment(), cwd="/",
            stdin=subprocess.DEVNULL, stdout=None if debug else subprocess.DEVNULL,
            stderr=None if debug else subprocess.DEVNULL, start_new_session=True)
        theirs.close()
        return cls(ours, process)

    def _wait_ready(self):
        if self._ready:
            return
        message = _recv_json(self.channel, READY_TIMEOUT_S)
        if not message or not message.get("ready"):
            self.error = (message or {}).get("error", "the zygote did not start")
            raise BoxError(f"sandbox zygote: {self.error}")
        self._ready = True

    def new_channel(self):
        """A channel of its own for one batch child (see :meth:`from_channel`)."""
        self._wait_ready()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        socket.send_fds(self.channel, [json.dumps({"op": "channel"}).encode()], [theirs.fileno()])
        theirs.close()
        reply = _recv_json(self.channel, 30.0)
        if not reply or not reply.get("ok"):
            raise BoxError("sandbox zygote refused a channel")
        return ours

    @classmethod
    def from_channel(cls, channel):
        return cls(channel=channel)

    def new_box(self, config, timeout):
        """Fork a box for ``config`` and wait until it is confined; returns a :class:`Box`."""
        return self.finish_box(self.request_box(config), timeout)

    def request_box(self, config):
        """Fork a box for ``config``; it confines itself while the caller goes on
        (:meth:`finish_box` waits for that). Several boxes confine in parallel."""
        self._wait_ready()
        if self.cpus:
            config = dataclasses.replace(config, cpus=tuple(self.cpus))
        worker_ours, worker_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        keeper_ours, keeper_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log_fd = os.open(config.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                         0o600)
        try:
            socket.send_fds(self.channel, [json.dumps({"op": "box", "config": config.to_wire()}).encode()],
                            [worker_theirs.fileno(), keeper_theirs.fileno(), log_fd])
        finally:
            for item in (worker_theirs, keeper_theirs):
                item.close()
            os.close(log_fd)
        reply = _recv_json(self.channel, 30.0)
        if not reply or not reply.get("ok"):
            worker_ours.close()
            keeper_ours.close()
            raise BoxError(f"sandbox zygote could not fork a box: {(reply or {}).get('error', 'no answer')}")
        return Box(worker_ours, keeper_ours)

    @staticmethod
    def finish_box(box, timeout):
        """Wait until a box from :meth:`request_box` is confined; returns it."""
        try:
            return box.wait_ready(timeout)
        except BoxError:
            box.close()
            raise

    def close(self):
        if self.channel is not None:
            try:
                self.channel.close()
            except OSError:
                pass
            self.channel = None
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None


class _SpawnedBox(Box):
    def __init__(self, sock, process, isolation, job):
        super().__init__(sock, None, isolation, process.pid)
        self.process = process
        self.job = job

    def kill(self):
        platforms.kill(self.process, self.job)

    def usage(self, timeout=2.0):
        return None  # no keeper: calls are charged in wall-clock time

    def stack(self):
        if stack_dump.SIGNAL is None or self.process.poll() is not None:
            return b""
        os.kill(self.process.pid, stack_dump.SIGNAL)
        return stack_dump.read(self.sock)

    def exit_status(self, timeout=3.0):
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return "connection lost"
        if code < 0:
            return f"killed by signal {-code}"
        return f"exit code {code}"

    def close(self):
        self.kill()
        self.exit_status(timeout=5.0)
        try:
            self.sock.close()
        except OSError:
            pass
        platforms.release(self.job)


class SpawnBoxes:
    """A fresh interpreter per box, connecting back over loopback with a token.

    If the platform's sandbox wrapper keeps the worker from starting at all (a
    profile this macOS refuses), the box is started again without it, and the
    isolation report says so: grading goes on, honestly unconfined."""

    def __init__(self):
        self.wrapper_failed = None

    def new_box(self, config, timeout):
        if self.wrapper_failed is None:
            try:
                return self._new_box(config, timeout, wrap=True)
            except BoxError as exc:
                if sys.platform != "darwin":
                    raise
                self.wrapper_failed = str(exc)
        box = self._new_box(config, timeout, wrap=self.wrapper_failed is None)
        if self.wrapper_failed:
            box.isolation = dict(box.isolation, confined=False, fs="none", network="open",
                                 problems=list(box.isolation.get("problems", []))
                                 + [f"the sandbox-exec profile failed ({self.wrapper_failed}): ran without it"])
        return box

    def new_channel(self):
        return None

    @classmethod
    def from_channel(cls, channel):
        return cls()

    def _new_box(self, config, timeout, wrap):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        token = secrets.token_hex(16)
        bootstrap = ("import sys; sys.path.insert(0, sys.argv[1]); del sys.argv[1]; "
                     "from autograder.sandbox import worker; worker.main()")
        argv = [sys.executable, "-I", "-B", "-c", bootstrap, PACKAGE_ROOT, "127.0.0.1",
                str(listener.getsockname()[1]), token, config.submission, config.module, config.log]
        with open(config.log, "ab"):
            pass
        argv, isolation = platforms.wrap_command(argv, config) if wrap else (argv, platforms.unconfined(
            "the platform's sandbox could not be used"))
        options = {"cwd": config.submission, "env": scrubbed_environment(),
                   "stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
                   "stderr": subprocess.DEVNULL}
        options.update(platforms.popen_options(config))
        process = subprocess.Popen(argv, **options)
        job = platforms.contain(process, config, isolation)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if process.poll() is not None:  # died before connecting (e.g. a refused profile)
                    raise OSError(f"the worker exited with code {process.returncode} before connecting")
                listener.settimeout(max(0.01, min(0.5, deadline - time.monotonic())))
                try:
                    sock, _ = listener.accept()
                except socket.timeout:
                    if time.monotonic() > deadline:
                        raise
                    continue
                sock.settimeout(5)
                try:
                    if sock.recv(len(token) + 1) == token.encode("ascii") + b"\n":
                        return _SpawnedBox(sock, process, isolation, job)
                except OSError:
                    pass
                sock.close()
        except OSError as exc:
            platforms.kill(process, job)
            raise BoxError(f"the worker did not connect back ({exc})") from None
        finally:
            listener.close()

    def close(self):
        pass


def fork_zygote_here():
    """Fork the zygote from this very process, which must hold nothing of the
    judge yet (a fresh judge process, :mod:`autograder.judge_process.launcher`):
    torch is imported once and serves both. What only boxes need the zygote
    loads once forked, while this process goes on (the first box asked for
    waits until it is ready)."""
    from autograder.sandbox import zygote

    zygote.preload_shared()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        ours.close()
        zygote.forked_main(theirs)  # never returns
    theirs.close()
    return ZygoteBoxes(ours, _ForkedProcess(pid), ready=False)


def start_boxes():
    """The box factory for this platform, started (a zygote begins importing torch now)."""
    return ZygoteBoxes.start() if use_zygote() else SpawnBoxes()


def boxes_from_channel(channel):
    return ZygoteBoxes.from_channel(channel) if channel is not None else SpawnBoxes()
