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

Our own code runs here too, beside the student's: decoding a call's inputs,
encoding its answer, a scenario's trusted code. An exception raised while it
ran, with no frame of the student's file on its way, is sent with a *claim*
(``error["grader"]``: the phase, the exception's type, where in our code) that
the failure is the grader's. Student code can forge any claim, so the judge
believes one only when it reproduces the failure without the student's code
(:meth:`autograder.sandbox.client.Sandbox._settle`).
"""
import faulthandler
import importlib
import io
import itertools
import linecache
import os
import sys
import traceback

from autograder import locations
from autograder.intake import stack_dump
from autograder.intake.submitted_text import clean
from autograder.sandbox import assignment_side, wire
from autograder.sandbox.environment import scrubbed_environment

BLOCKED_PACKAGES = ("solutions", "autograder", "exercises")
# What the worker was doing when an exception came: in these our code ran, not the student's.
OUR_PHASES = ("inputs", "answer", "scenario")


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


def _passes_through(exc, submission_dir):
    """Is a frame of the student's own files on ``exc``'s way?"""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(submission_dir + os.sep):
            return True
        tb = tb.tb_next
    return False


def claim(phase, exc, submission_dir, roots):
    """The claim that ``exc`` is the grader's own failure (raised in ``phase``, one of
    OUR_PHASES, with no frame of the student's on its way), or None."""
    if phase not in OUR_PHASES or not isinstance(exc, Exception) or _passes_through(exc, submission_dir):
        return None
    return {"phase": phase, "type": type(exc).__name__[:100], "where": locations.grader_frame(exc, roots)[:300]}


def read_claim(report):
    """A worker's claim (:func:`claim`) as the judge reads it from an error report: a phase
    it knows, the type and the place as short text; None where there is none."""
    found = report.get("grader") if isinstance(report, dict) else None
    if not isinstance(found, dict) or found.get("phase") not in OUR_PHASES:
        return None
    return {"phase": found["phase"], **{key: clean(found[key], 300) if isinstance(found.get(key), str) else ""
                                        for key in ("type", "where")}}


def _said(exc):
    try:
        return str(exc)[:1500]
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises
        return ""


class Worker:
    def __init__(self, submission_dir, module_name):
        self.submission_dir = os.path.abspath(submission_dir)
        self.module_name = module_name
        self.module = None
        self.guard = None
        self.phase = "call"    # what runs now: the student's code, or ours (OUR_PHASES)
        self.roots = ()        # the grader's folders (prepare)

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
        self.roots = assignment_side.grader_roots()
        self.guard = assignment_side.guard(self.module_name)
        if self.guard is not None:
            self.guard.install()
        os.chdir(self.submission_dir)

    def handle(self, request):
        self.phase = "call"
        op = request.get("op")
        if op == "import":
            self.module = importlib.import_module(self.module_name)
            return None
        if self.module is None:
            raise RuntimeError("module not imported")
        if op == "call":
            function = getattr(self.module, request["function"])
            self.phase = "inputs"
            args = [wire.decode_value(item) for item in request.get("args", [])]
            kwargs = {key: wire.decode_value(item) for key, item in request.get("kwargs", {}).items()}
            self.phase = "call"
            value = function(*args, **kwargs)
            self.phase = "answer"
            if not request.get("inputs_after"):
                return {"value": wire.encode_value(value)}
            return {"value": wire.encode_value(value),
                    "args_after": wire.encode_value(args),
                    "kwargs_after": wire.encode_value(kwargs)}
        if op == "scenario":
            self.phase = "scenario"
            runner = assignment_side.scenario(request["name"])
            value = runner(self.module, request.get("spec", {}))
            self.phase = "answer"
            return {"value": wire.encode_value(value)}
        raise ValueError(f"unknown op {op!r}")

    def _report(self, exc):
        """The error answer for ``exc``, with the claim that it is ours where it may be."""
        phase, self.phase = self.phase, "call"
        claimed = claim(phase, exc, self.submission_dir, self.roots)
        if isinstance(exc, wire.WireError) and claimed is None:
            return {"type": "ProtocolError", "message": str(exc)}
        try:
            error = _error(exc, self.submission_dir)
        except Exception:  # noqa: BLE001 - where it was is lost, not what was raised
            error = {"type": type(exc).__name__[:100], "message": _said(exc)}
        return dict(error, grader=claimed) if claimed else error

    def answer(self, request):
        try:
            return {"id": request.get("id"), "ok": True, "result": self.handle(request)}
        except BaseException as exc:  # SystemExit, KeyboardInterrupt too: one call fails
            return {"id": request.get("id"), "ok": False, "error": self._report(exc)}

    def serve(self, sock):
        while True:
            try:
                request = wire.recv_frame(sock)
            except (EOFError, OSError):
                return
            reply = self.answer(request)
            try:
                wire.send_frame(sock, self._recorded(reply))
            except (ValueError, TypeError) as exc:  # e.g. a value JSON cannot hold
                error = {"type": "ProtocolError", "message": _said(exc)[:500]}
                claimed = claim("answer", exc, self.submission_dir, self.roots)
                wire.send_frame(sock, self._recorded({"id": request.get("id"), "ok": False,
                                                      "error": dict(error, grader=claimed) if claimed else error}))

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
    _dump_stack_on_request(sock)
    worker.serve(sock)


def _dump_stack_on_request(sock):
    """Before any student code: the stack goes to the judge on its signal, when a
    call ran out of time (:mod:`autograder.intake.stack_dump`)."""
    if stack_dump.SIGNAL is not None:
        try:
            faulthandler.register(stack_dump.SIGNAL, file=sock.fileno(), all_threads=True)
        except (OSError, RuntimeError, ValueError):  # no place, then: the feedback says what it said before
            pass


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
