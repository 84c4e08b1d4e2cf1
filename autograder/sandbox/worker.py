"""The sandbox worker: the only process that ever imports student code.

It serves requests from the judge over one socket, one at a time:

* ``{"op": "import"}`` imports the student module;
* ``{"op": "call", "function", "args", "kwargs"}`` calls a module function and
  returns its value plus the arguments as they are after the call (to see
  in-place mutation);
* ``{"op": "scenario", "name", "spec"}`` runs a trusted scenario from
  the assignment's worker side (:mod:`autograder.sandbox.assignment_side`)
  with the student module plugged in.

Every answer is plain data (:mod:`autograder.sandbox.wire`) and echoes the
request's random ``id``. Whatever the student code does here -- lie, patch,
exit -- the judge only ever sees bytes it validates itself.
"""
import importlib
import io
import itertools
import linecache
import os
import sys
import traceback

from autograder.sandbox import assignment_side, wire
from autograder.sandbox.environment import scrubbed_environment

BLOCKED_PACKAGES = ("solutions", "autograder", "exercises")


class _BlockGraderImports:
    """Meta-path finder refusing the grader, the reference solutions and other
    copies of the exercises: student code must stand on its own. (The file
    system confinement already hides them; this gives the clearer message.)"""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in BLOCKED_PACKAGES:
            raise ImportError(f"importing {fullname!r} is not allowed while grading")
        return None


# Columns of a traceback's lines (code.co_positions, FrameSummary's colno...) are Python 3.11's:
# on 3.10 a student's traceback has lines only (asking for them there crashed the worker).
_COLUMNS = sys.version_info >= (3, 11)


def _position(code, offset):
    """``(lineno, end_lineno, colno, end_colno)`` of the instruction at byte ``offset`` of
    ``code``, as Python's own tracebacks read it (two bytes an instruction)."""
    if offset < 0 or not _COLUMNS:
        return None, None, None, None
    return next(itertools.islice(code.co_positions(), offset // 2, None), (None, None, None, None))


def _student_frames(exc, submission_dir):
    """The traceback's frames in the student's own files, with the columns Python's
    carets need. Frames are chosen first, and positions and source lines looked up
    for those alone: a fresh box would otherwise read (and cache) every file the
    traceback passes through, torch's included, and walk the code of each frame."""
    own = {}
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = code.co_filename
        if filename not in own:
            # Only absolute paths inside the submission: "<frozen importlib._bootstrap>"
            # would otherwise resolve against the working directory, which is that folder.
            own[filename] = os.path.isabs(filename) and \
                os.path.abspath(filename).startswith(submission_dir + os.sep)
        if own[filename]:
            lineno, end_lineno, colno, end_colno = _position(code, tb.tb_lasti)
            columns = {"end_lineno": end_lineno, "colno": colno, "end_colno": end_colno} if _COLUMNS else {}
            frames.append(traceback.FrameSummary(filename, tb.tb_lineno if lineno is None else lineno, code.co_name,
                                                 lookup_line=False, **columns))
        tb = tb.tb_next
    for filename in {frame.filename for frame in frames}:
        linecache.checkcache(filename)  # a file edited since an earlier error is read again
    return frames


def _student_traceback(exc, submission_dir, frames=None):
    """The exception and only the frames of the student's own files."""
    frames = _student_frames(exc, submission_dir) if frames is None else frames
    lines = [line.replace(submission_dir + os.sep, "") for line in traceback.format_list(frames[-8:])]
    lines += [line.replace(submission_dir + os.sep, "") for line in traceback.format_exception_only(type(exc), exc)]
    return "".join(lines)[-3000:]


def _location(exc, submission_dir, frames=None):
    """Line, source text and column of the error in the student's own file."""
    if isinstance(exc, SyntaxError) and exc.filename and os.path.isabs(exc.filename) \
            and os.path.abspath(exc.filename).startswith(submission_dir + os.sep):
        return {"line": exc.lineno or 0, "code": (exc.text or "").rstrip("\n")[:300], "offset": exc.offset or 0}
    frames = _student_frames(exc, submission_dir) if frames is None else frames
    if frames:
        return {"line": frames[-1].lineno or 0, "code": (frames[-1].line or "")[:300], "offset": 0}
    return {}


def _error(exc, submission_dir):
    message = str(exc)
    if isinstance(exc, SyntaxError):
        message = exc.msg or message
    frames = _student_frames(exc, submission_dir)
    return {"type": type(exc).__name__[:100], "message": message[:1500],
            "traceback": _student_traceback(exc, submission_dir, frames),
            **_location(exc, submission_dir, frames)}


class Worker:
    def __init__(self, submission_dir, module_name):
        self.submission_dir = os.path.abspath(submission_dir)
        self.module_name = module_name
        self.module = None
        self.guard = None

    def prepare(self):
        """Isolate the interpreter before any student code runs. Everything the
        worker needs was imported by the zygote: after confinement the grader's
        own files can no longer be read."""
        import torch

        torch.set_num_threads(1)
        sys.dont_write_bytecode = True
        # Walked only when one is there: a walk of sys.modules touches (and so copies)
        # the zygote's pages of every module name.
        if any(name in sys.modules for name in ("solutions", "exercises", self.module_name)):
            for name in list(sys.modules):
                if name.split(".")[0] in ("solutions", "exercises") or name in (self.module_name,):
                    del sys.modules[name]
        sys.path[:] = [self.submission_dir] + [entry for entry in sys.path
                                               if entry and os.path.isdir(entry)
                                               and not os.path.isdir(os.path.join(entry, "autograder"))]
        sys.meta_path.insert(0, _BlockGraderImports())
        self.guard = assignment_side.guard(self.module_name)
        if self.guard is not None:
            self.guard.install()
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
            if not request.get("inputs_after"):
                return {"value": wire.encode_value(value)}
            return {"value": wire.encode_value(value),
                    "args_after": wire.encode_value(args),
                    "kwargs_after": wire.encode_value(kwargs)}
        if op == "scenario":
            runner = assignment_side.scenario(request["name"])
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
                wire.send_frame(sock, self._recorded(reply))
            except (ValueError, TypeError) as exc:  # e.g. a value JSON cannot hold
                wire.send_frame(sock, self._recorded({"id": request.get("id"), "ok": False,
                                                      "error": {"type": "ProtocolError", "message": str(exc)[:500]}}))

    def _recorded(self, reply):
        """Every answer of a guarded module carries the guard's record, empty or not
        (:func:`autograder.sandbox.wire.decode_delegation`)."""
        if self.guard is not None:
            reply["delegation"] = [str(item)[:200] for item in self.guard.SEEN[:wire.MAX_REFUSALS]]
        return reply


def run(sock, submission_dir, module_name, log_fd, scratch=None):
    """Entry point inside a confined worker (after fork or spawn)."""
    safe = scrubbed_environment()
    os.environ.clear()
    os.environ.update(safe)
    if scratch:  # the only writable folder
        os.environ.update(TMPDIR=scratch, TEMP=scratch, TMP=scratch, HOME=scratch)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    if log_fd > 2:
        os.close(log_fd)
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
        run(sock, submission_dir, module_name, os.open(log_path, os.O_WRONLY | os.O_APPEND))
    finally:
        os._exit(0)
