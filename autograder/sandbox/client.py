"""Judge side of the sandbox: start a worker for one student module, send it
requests, enforce time limits, and turn every answer into an :class:`Outcome`.

On Linux the worker is forked from the judge (torch is already imported, so a
worker costs milliseconds); elsewhere, or with ``AUTOGRADER_SANDBOX=spawn``, it
is a fresh interpreter that connects back over loopback. A worker that hangs,
crashes or breaks the protocol is killed and the next request starts a new one,
until the module's time budget is spent.
"""
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

from autograder.sandbox import limits, wire

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Limits:
    call_timeout: float = 20.0      # wall seconds for one call
    import_timeout: float = 30.0    # wall seconds to import the module
    module_budget: float = 150.0    # wall seconds for all calls of one module
    memory_bytes: int = 3 * 2**30   # extra address space on top of torch's
    cpu_seconds: int = 300
    max_processes: int = 64
    max_file_bytes: int = 16 * 2**20


@dataclass
class StudentError:
    """Why a call produced no usable value. ``kind`` is one of: missing, import,
    exception, timeout, crash, protocol, budget."""
    kind: str
    type: str = ""
    message: str = ""
    traceback: str = ""

    def describe(self, module_file):
        if self.kind == "missing":
            return f"{module_file} is missing from the submission."
        if self.kind == "import":
            return f"Importing {module_file} failed: {self.type}: {self.message}".rstrip(": ")
        if self.kind == "exception":
            return f"Your code raised {self.type}: {self.message}"
        if self.kind == "timeout":
            return (f"Your code did not finish within {self.message} s: look for an endless "
                    f"loop or work that grows with the input.")
        if self.kind == "crash":
            return (f"The process running your code stopped ({self.message}). Did it call "
                    f"exit()/os._exit(), run out of memory or crash the interpreter?")
        if self.kind == "budget":
            return f"{module_file} used up its total time budget; later calls were not run."
        return f"Your code's answer could not be read ({self.message})."


@dataclass
class Outcome:
    ok: bool
    value: object = None
    args_after: list = field(default_factory=list)
    kwargs_after: dict = field(default_factory=dict)
    error: StudentError = None


def _fork_available():
    # Linux only: on macOS, forking a process that has used Accelerate/GCD threads
    # can crash the child, which is why Python itself defaults to spawn there.
    return sys.platform.startswith("linux") and os.environ.get("AUTOGRADER_SANDBOX", "fork") != "spawn"


class Sandbox:
    """One student module, served by a worker process that is restarted on failure."""

    def __init__(self, submission_dir, module_name, scratch_dir, limits_=None):
        self.submission_dir = os.path.abspath(submission_dir)
        self.module_name = module_name
        self.module_file = f"{module_name}.py"
        self.scratch_dir = scratch_dir
        self.limits = limits_ or Limits()
        self.spent = 0.0
        self.log_path = os.path.join(scratch_dir, f"{module_name}.log")
        with open(self.log_path, "ab"):
            pass
        os.chmod(self.log_path, 0o666)  # the worker may run as an unprivileged user
        self._sock = None
        self._pid = None
        self._proc = None
        self._import_error = None
        self.restarts = 0

    # -- process management -------------------------------------------------
    def _start(self):
        if _fork_available():
            self._sock, self._pid = self._fork()
        else:
            self._sock, self._proc = self._spawn()
            self._pid = self._proc.pid
        reply = self._request({"op": "import"}, self.limits.import_timeout)
        if not reply.ok:
            error = reply.error
            if error.kind == "timeout":
                error = StudentError("import", "Timeout",
                                     f"importing took longer than {error.message} s")
            elif error.kind != "exception":
                error = StudentError("import", "ProcessExit", error.message)
            self._import_error = StudentError("import", error.type, error.message, error.traceback)
            self.close()

    def _fork(self):
        parent, child = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # worker
            code = 0
            try:
                parent.close()
                os.setsid()
                # Only the socket to the judge survives: no pytest capture files, no
                # inherited pipes the student could write into.
                os.closerange(3, child.fileno())
                os.closerange(child.fileno() + 1, 65536)
                limits.apply_limits(self.limits.memory_bytes, self.limits.cpu_seconds,
                                    self.limits.max_processes, self.limits.max_file_bytes)
                limits.drop_privileges([self.submission_dir, sys.prefix, os.__file__])
                from autograder.sandbox import worker
                worker.run(child, self.submission_dir, self.module_name, self.log_path)
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        child.close()
        return parent, pid

    def _spawn(self):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        token = secrets.token_hex(16)
        bootstrap = ("import sys; sys.path.insert(0, sys.argv[1]); del sys.argv[1]; "
                     "from autograder.sandbox import worker; worker.main()")
        argv = [sys.executable, "-I", "-c", bootstrap, PACKAGE_ROOT, "127.0.0.1",
                str(listener.getsockname()[1]), token, self.submission_dir, self.module_name,
                self.log_path]
        from autograder.sandbox.worker import scrubbed_environment

        options = {"cwd": self.submission_dir, "env": scrubbed_environment(os.environ),
                   "stdin": subprocess.DEVNULL,
                   "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        if os.name == "nt":
            options["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            options["start_new_session"] = True
            lim = self.limits
            options["preexec_fn"] = lambda: limits.apply_limits(
                lim.memory_bytes, lim.cpu_seconds, lim.max_processes, lim.max_file_bytes)
        proc = subprocess.Popen(argv, **options)
        listener.settimeout(self.limits.import_timeout)
        try:
            while True:
                sock, _ = listener.accept()
                sock.settimeout(5)
                try:
                    if sock.recv(len(token) + 1) == token.encode("ascii") + b"\n":
                        return sock, proc
                except OSError:
                    pass
                sock.close()
        except OSError:
            proc.kill()
            raise
        finally:
            listener.close()

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None
        if self._proc is not None:
            try:
                self._proc.kill()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        elif self._pid is not None:
            for kill in (lambda: os.killpg(self._pid, signal.SIGKILL),
                         lambda: os.kill(self._pid, signal.SIGKILL)):
                try:
                    kill()
                except OSError:
                    pass
            try:
                os.waitpid(self._pid, 0)
            except ChildProcessError:
                pass
        self._proc = self._pid = None

    # -- requests -----------------------------------------------------------
    def _request(self, message, timeout):
        request_id = secrets.token_hex(8)
        started = time.monotonic()
        try:
            self._sock.settimeout(timeout)
            wire.send_frame(self._sock, dict(message, id=request_id))
            while True:
                reply = wire.recv_frame(self._sock)
                if reply.get("id") == request_id:
                    break  # anything else is stale or forged: ignore it
                self._sock.settimeout(max(0.01, timeout - (time.monotonic() - started)))
        except socket.timeout:
            self.close()
            return Outcome(False, error=StudentError("timeout", message=f"{timeout:g}"))
        except (EOFError, OSError):
            status = self._exit_status()
            self.close()
            return Outcome(False, error=StudentError("crash", message=status))
        except wire.WireError as exc:
            self.close()
            return Outcome(False, error=StudentError("protocol", message=str(exc)))
        finally:
            self.spent += time.monotonic() - started
        if not reply.get("ok"):
            error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
            kind = "protocol" if error.get("type") == "ProtocolError" else "exception"
            return Outcome(False, error=StudentError(
                kind, str(error.get("type", ""))[:100], str(error.get("message", ""))[:1500],
                str(error.get("traceback", ""))[:3000]))
        result = reply.get("result")
        if result is None:
            return Outcome(True)
        try:
            return Outcome(True, wire.decode_value(result.get("value")),
                           wire.decode_value(result.get("args_after", [])),
                           wire.decode_value(result.get("kwargs_after", {"$dict": {}})))
        except (wire.WireError, ValueError, TypeError, AttributeError) as exc:
            return Outcome(False, error=StudentError("protocol", message=str(exc)[:200]))

    def _exit_status(self):
        if self._proc is not None:
            try:
                code = self._proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                return "connection lost"
            return f"exit code {code}"
        if self._pid is None:
            return "not running"
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self._pid, os.WNOHANG)
            if pid:
                self._pid = None
                if os.WIFSIGNALED(status):
                    return f"killed by signal {os.WTERMSIG(status)}"
                return f"exit code {os.WEXITSTATUS(status)}"
            time.sleep(0.01)
        return "connection lost"

    def _ensure_started(self):
        if not os.path.exists(os.path.join(self.submission_dir, self.module_file)):
            return StudentError("missing")
        if self._import_error is not None:
            return self._import_error
        if self.spent >= self.limits.module_budget:
            return StudentError("budget")
        if self._sock is None:
            self.restarts += 1
            self._start()
            if self._import_error is not None:
                return self._import_error
        return None

    def _send(self, message, timeout):
        error = self._ensure_started()
        if error is not None:
            return Outcome(False, error=error)
        remaining = self.limits.module_budget - self.spent
        return self._request(message, max(0.5, min(timeout or self.limits.call_timeout, remaining)))

    def call(self, function, *args, timeout=None, **kwargs):
        """Call ``<module>.<function>(*args, **kwargs)`` in the worker."""
        return self._send({"op": "call", "function": function,
                           "args": [wire.encode_value(arg) for arg in args],
                           "kwargs": {key: wire.encode_value(value) for key, value in kwargs.items()}},
                          timeout)

    def scenario(self, name, spec, timeout=None):
        """Run the trusted scenario ``name`` with the student module plugged in."""
        return self._send({"op": "scenario", "name": name, "spec": spec}, timeout)
