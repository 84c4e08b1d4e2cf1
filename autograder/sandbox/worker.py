"""The sandbox worker: the only process that ever imports student code.

It serves requests from the judge over one socket, one at a time:

* ``{"op": "import"}`` imports the student module;
* ``{"op": "call", "function", "args", "kwargs"}`` calls a module function and
  returns its value plus the arguments as they are after the call (to see
  in-place mutation);
* ``{"op": "scenario", "name", "spec"}`` runs a trusted scenario from
  :mod:`autograder.scenarios` with the student module plugged in.

Every answer is plain data (:mod:`autograder.sandbox.wire`) and echoes the
request's random ``id``. Whatever the student code does here -- lie, patch,
exit -- the judge only ever sees bytes it validates itself.
"""
import importlib
import io
import os
import sys
import traceback

from autograder.sandbox import wire

BLOCKED_PACKAGES = ("solutions", "autograder")
# Module 2 must be built by hand: inside the loss_scaler worker these raise.
_FORBIDDEN_FOR_LOSS_SCALER = (
    ("torch.amp", "GradScaler"), ("torch.amp.grad_scaler", "GradScaler"), ("torch", "GradScaler"),
    ("torch.cuda.amp", "GradScaler"), ("torch.cpu.amp", "GradScaler"),
    ("torch", "_amp_update_scale_"), ("torch", "_amp_foreach_non_finite_check_and_unscale_"),
)


class _BlockGraderImports:
    """Meta-path finder refusing the grader, the reference solutions and other
    copies of the exercises: student code must stand on its own."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in BLOCKED_PACKAGES:
            raise ImportError(f"importing {fullname!r} is not allowed while grading")
        return None


def _forbid_gradscaler():
    import torch

    def refuse(*args, **kwargs):
        raise RuntimeError("loss_scaler.py must be built by hand: torch.amp.GradScaler and "
                           "torch._amp_* ops are not available to it while grading")

    for module_name, attribute in _FORBIDDEN_FOR_LOSS_SCALER:
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
        if hasattr(module, attribute):
            setattr(module, attribute, refuse)
    del torch


def _student_traceback(exc, submission_dir):
    """The exception and only the frames of the student's own files."""
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(frame.filename).startswith(submission_dir + os.sep)]
    lines = [line.replace(submission_dir + os.sep, "")
             for line in traceback.format_list(frames[-8:])]
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)[-3000:]


def _error(exc, submission_dir):
    message = str(exc)
    return {"type": type(exc).__name__[:100], "message": message[:1500],
            "traceback": _student_traceback(exc, submission_dir)}


class Worker:
    def __init__(self, submission_dir, module_name):
        self.submission_dir = os.path.abspath(submission_dir)
        self.module_name = module_name
        self.module = None

    def prepare(self):
        """Isolate the interpreter before any student code runs."""
        import torch
        import autograder.scenarios  # noqa: F401  (trusted, loaded before the blocker)

        torch.set_num_threads(1)
        for name in list(sys.modules):
            if name.split(".")[0] in ("solutions", "exercises") or name in (self.module_name,):
                del sys.modules[name]
        sys.path[:] = [self.submission_dir] + [entry for entry in sys.path
                                               if entry and os.path.isdir(entry)
                                               and not os.path.isdir(os.path.join(entry, "autograder"))]
        sys.meta_path.insert(0, _BlockGraderImports())
        if self.module_name == "loss_scaler":
            _forbid_gradscaler()
        os.chdir(self.submission_dir)

    def handle(self, request):
        op = request.get("op")
        if op == "import":
            self.module = importlib.import_module(self.module_name)
            return None
        if self.module is None:
            raise RuntimeError("module not imported")
        if op == "call":
            function = getattr(self.module, request["function"])
            args = [wire.decode_value(item) for item in request.get("args", [])]
            kwargs = {key: wire.decode_value(item) for key, item in request.get("kwargs", {}).items()}
            value = function(*args, **kwargs)
            return {"value": wire.encode_value(value),
                    "args_after": wire.encode_value(args),
                    "kwargs_after": wire.encode_value(kwargs)}
        if op == "scenario":
            from autograder import scenarios
            runner = scenarios.STUDENT_SCENARIOS[request["name"]]
            return {"value": wire.encode_value(runner(self.module, request.get("spec", {})))}
        raise ValueError(f"unknown op {op!r}")

    def serve(self, sock):
        while True:
            try:
                request = wire.recv_frame(sock)
            except (EOFError, OSError):
                return
            reply = {"id": request.get("id")}
            try:
                reply.update(ok=True, result=self.handle(request))
            except BaseException as exc:  # SystemExit, KeyboardInterrupt too: one call fails
                if isinstance(exc, wire.WireError):
                    reply.update(ok=False, error={"type": "ProtocolError", "message": str(exc)})
                else:
                    reply.update(ok=False, error=_error(exc, self.submission_dir))
            try:
                wire.send_frame(sock, reply)
            except (ValueError, TypeError) as exc:  # e.g. a value JSON cannot hold
                wire.send_frame(sock, {"id": request.get("id"), "ok": False,
                                       "error": {"type": "ProtocolError", "message": str(exc)[:500]}})


# Only these variables reach student code: no tokens, no $GITHUB_OUTPUT to forge.
SAFE_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP",
                    "SYSTEMROOT", "SYSTEMDRIVE", "USERPROFILE", "OMP_NUM_THREADS")


def scrubbed_environment(environ):
    return {key: value for key, value in environ.items() if key in SAFE_ENVIRONMENT}


def run(sock, submission_dir, module_name, log_path):
    """Entry point inside the worker process (after fork or spawn)."""
    safe = scrubbed_environment(os.environ)
    os.environ.clear()
    os.environ.update(safe)
    log = open(log_path, "ab", buffering=0)
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    sys.stdout = io.TextIOWrapper(open(1, "wb", buffering=0, closefd=False), write_through=True)
    sys.stderr = sys.stdout
    sys.stdin = io.StringIO("")
    worker = Worker(submission_dir, module_name)
    worker.prepare()
    worker.serve(sock)


def main():
    """Spawn-mode bootstrap: ``python -I -c ... HOST PORT TOKEN SUBMISSION MODULE LOG``."""
    import socket

    host, port, token, submission_dir, module_name, log_path = sys.argv[1:7]
    sock = socket.create_connection((host, int(port)))
    sock.sendall(token.encode("ascii") + b"\n")
    try:
        run(sock, submission_dir, module_name, log_path)
    finally:
        os._exit(0)
