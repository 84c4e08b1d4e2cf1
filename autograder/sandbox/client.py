"""Judge side of the sandbox: one :class:`Sandbox` per student module sends
requests to a worker in a box (:mod:`autograder.sandbox.boxes`), enforces
time limits, and turns every answer into an :class:`Outcome`.

A worker that hangs, crashes or breaks the protocol is killed with its whole
box, and the next request starts a new box, until the module's time budget is
spent. A call that prints past ``Limits.call_output_bytes`` is stopped and
reported as such; once a call of a module has run out of time or printed too
much, its later calls get a short limit (:class:`~autograder.sandbox.call_clock.Allowance`):
an endless loop costs seconds, and the module's other functions are still
graded. Answers are untrusted input: they are read against a deadline, with a
size bound, and decoded with bounds on depth and size
(:mod:`autograder.sandbox.wire`); anything malformed is the student's call's
protocol error, never the grader's.
"""
import os
import re
import secrets
import select
import socket
import time
from dataclasses import asdict, dataclass, field

from autograder import active_assignment
from autograder.i18n import _
from autograder.sandbox import call_clock, wire
from autograder.sandbox.boxes import BoxError

def disabled_layers():
    """Sandbox layers switched off to test the degraded paths
    (``AUTOGRADER_SANDBOX_DISABLE=namespaces,landlock,cgroups,minimal_root,seccomp``); never for real grading."""
    return [name.strip() for name in os.environ.get("AUTOGRADER_SANDBOX_DISABLE", "").split(",")
            if name.strip() in ("namespaces", "landlock", "cgroups", "minimal_root", "seccomp")]


def box_config(spec, module, limits, **extra):
    """What the zygote needs to make a box for ``module`` (plain data)."""
    config = {key: spec.get(key) for key in ("submission", "scratch", "log", "uid", "gid", "hide", "forbidden")}
    config.update(module=module, limits=limits.for_box(), disable=disabled_layers(), **extra)
    return config


@dataclass
class Limits:
    call_timeout: float = 20.0      # seconds charged to one call (the box's own time: call_clock.py)
    # Seconds charged to each call of a module once one of its calls timed out (at least ten times
    # its slowest answered call): a correct call takes milliseconds, however it is written.
    after_timeout: float = 0.5
    call_output_bytes: int = 256 * 2**10  # what one call may print before it is stopped
    import_timeout: float = 30.0    # seconds charged to importing the module
    module_budget: float = 150.0    # seconds charged to all calls of one module
    memory_bytes: int = 3 * 2**30   # extra address space on top of torch's
    cpu_seconds: int = 300
    max_processes: int = 64
    max_file_bytes: int = 16 * 2**20
    scratch_bytes: int = 64 * 2**20  # the box's only writable folder, a tmpfs
    max_open_files: int = 64         # bounds pipes and socket buffers held as memory

    def for_box(self):
        return {key: value for key, value in asdict(self).items()
                if key in ("memory_bytes", "cpu_seconds", "max_processes", "max_file_bytes",
                           "scratch_bytes", "max_open_files")}


@dataclass
class StudentError:
    """Why a call produced no usable value. ``kind`` is one of: missing, import,
    exception, timeout, crash, protocol, budget, sandbox (the grader's failure).
    ``line``/``code``/``offset``: where in the student's file it happened (0/'' if unknown)."""
    kind: str
    type: str = ""
    message: str = ""
    traceback: str = ""
    line: int = 0
    code: str = ""
    offset: int = 0

    def headline(self):
        """'SyntaxError: expected ':'' -- Python's own words, quoted as they are."""
        return (self.type + ": " + self.message).rstrip(": ") if self.message else self.type

    def describe(self, module_file):
        """What went wrong, for the student (an :class:`autograder.i18n.Message`)."""
        other = self.imported_exercise()
        if other:
            return _("{file} imports {other}: every module is graded on its own, so one exercise file cannot "
                     "import another. Copy what {file} needs from {other} into {file}.", file=module_file,
                     other=other)
        if self.kind == "missing":
            if self.message:
                return _("{file} {problem}: it was not graded.", file=module_file, problem=self.message)
            return _("{file} is missing from the submission.", file=module_file)
        if self.kind == "import":
            if self.type == "Timeout":
                return _("Importing {file} took longer than {seconds} s: does it run work at import time?",
                         file=module_file, seconds=self.message)
            if self.type == "PrintedTooMuch":
                return _("Importing {file} printed more than {size} and was stopped: does it print in a loop at "
                         "import time?", file=module_file, size=self.message)
            return _("{file} could not be imported: {error}", file=module_file, error=self.headline())
        if self.kind == "exception":
            return _("Your code raised {error}", error=self.headline())
        if self.kind == "timeout" and self.type == "after_timeout":
            return _("Your code did not finish within {seconds} s (once one call of a module has run out of "
                     "time, each later call gets {seconds} s): look for an endless loop.", seconds=self.message)
        if self.kind == "timeout":
            return _("Your code did not finish within {seconds} s: look for an endless loop or work that "
                     "grows with the input.", seconds=self.message)
        if self.kind == "output":
            return _("Your code printed more than {size} during one call and was stopped there: is a print "
                     "inside a loop (perhaps one that never ends)? Print less, or only while you debug one "
                     "case, and grade again.", size=self.message)
        if self.kind == "crash":
            return _("The process running your code stopped ({status}). Did it call exit()/os._exit(), run "
                     "out of memory or crash the interpreter?", status=self.message)
        if self.kind == "budget":
            return _("{file} used up its total time budget; later calls were not run.", file=module_file)
        if self.kind == "sandbox":
            return _("The grader could not start a sandbox for {file} ({problem}). This is not your mistake: "
                     "tell the course staff.", file=module_file, problem=self.message)
        return _("Your code's answer could not be read ({problem}). The process running your code sent "
                 "something that is not a valid answer: did it write to the grader's socket or print binary "
                 "data there?", problem=self.message)

    def imported_exercise(self):
        """The other exercise file this error's import asked for ('' if none)."""
        if self.type not in ("ModuleNotFoundError", "ImportError") or self.kind not in ("import", "exception"):
            return ""
        # Python's words, or the worker's for the blocked package (exercises.<module>)
        found = re.match(r"No module named '([\w.]+)'|importing '([\w.]+)' is not allowed", self.message)
        parts = (found.group(1) or found.group(2)).split(".") if found else [""]
        if parts[0] == "exercises":  # the worker refuses the package before Python names the module
            return parts[1] + ".py" if len(parts) > 1 else "exercises/"
        return parts[0] + ".py" if parts[0] in active_assignment.current().modules else ""


def _size_text(count):
    return f"{count // 2**20} MiB" if count >= 2**20 and not count % 2**20 else f"{count // 1024} KiB"


class _PrintedTooMuch(Exception):
    """The running call printed past its limit."""


@dataclass
class Outcome:
    """A call's result; ``args_after``/``kwargs_after`` (the arguments as the call left
    them) only from :meth:`Sandbox.call_watching_inputs`."""
    ok: bool
    value: object = None
    args_after: list = field(default_factory=list)
    kwargs_after: dict = field(default_factory=dict)
    error: StudentError = None


class Sandbox:
    """One student module, served by a boxed worker that is restarted on failure.

    ``spec`` says where the box's files are (see :func:`autograder.judging.engine.box_specs`):
    ``submission`` (a folder holding only this module), ``scratch``, ``log``,
    ``uid``/``gid`` (as root), ``forbidden``/``hide`` (the grader's folders),
    and ``problem`` when the module could not be taken from the submission.
    """

    def __init__(self, module_name, spec, boxes, limits_=None):
        self.module_name = module_name
        self.module_file = f"{module_name}.py"
        self.spec = spec
        self.boxes = boxes
        self.limits = limits_ or Limits()
        self.spent = 0.0          # seconds charged (call_clock)
        self.wall_spent = 0.0     # against the backstop (call_clock.WALL_FACTOR x the budget)
        self.restarts = 0
        self.isolation = []       # one report per box started
        self.delegation = []      # what the module's guard refused in the worker
        self._box = None
        self._import_error = None
        self._cpu_mark = None     # the box's CPU count when the last call's clock stopped
        self._pending = None      # a box asked for by prestart(), not yet confined
        self.allowance = call_clock.Allowance(self.limits.call_timeout, self.limits.after_timeout,
                                              self.limits.call_output_bytes)
        self.printed = call_clock.PrintedOutput(spec.get("log"))

    def wanted(self):
        return bool(self.spec.get("present")) and not self.spec.get("problem")

    # -- process management -------------------------------------------------
    def request_box(self):
        """Ask for this module's box without waiting for its confinement (prestart)."""
        if self._box is not None or self._pending is not None or not self.wanted() \
                or not hasattr(self.boxes, "request_box"):
            return
        started = time.monotonic()
        try:
            self._pending = self.boxes.request_box(box_config(self.spec, self.module_name, self.limits))
        except (BoxError, OSError):
            self._pending = None  # _start() asks again and reports what went wrong
        finally:
            self.wall_spent += time.monotonic() - started

    def _start(self):
        started = time.monotonic()
        pending, self._pending = self._pending, None
        self._cpu_mark = None
        try:
            if pending is not None:
                self._box = self.boxes.finish_box(pending, self.limits.import_timeout)
            else:
                config = box_config(self.spec, self.module_name, self.limits)
                self._box = self.boxes.new_box(config, self.limits.import_timeout)
        except (BoxError, OSError) as exc:
            self._import_error = StudentError("sandbox", message=str(exc)[:300])
            return
        finally:  # starting a box is the grader's work: only the backstop counts it
            self.wall_spent += time.monotonic() - started
        self.isolation.append(self._box.isolation)
        if self._box.isolation.get("refused"):  # never run student code unconfined as root
            problems = "; ".join(self._box.isolation.get("problems") or ["confinement failed"])
            self._import_error = StudentError("sandbox", message=problems[:300])
            self.close()
            return
        reply = self._request({"op": "import"}, self.limits.import_timeout)
        if not reply.ok:
            error = reply.error
            if error.kind == "timeout":
                error = StudentError("import", "Timeout", error.message)
            elif error.kind == "protocol":
                error = StudentError("import", "ProtocolError", error.message)
            elif error.kind == "output":
                error = StudentError("import", "PrintedTooMuch", error.message)
            elif error.kind != "exception":
                error = StudentError("import", "ProcessExit", error.message)
            self._import_error = StudentError("import", error.type, error.message, error.traceback,
                                              error.line, error.code, error.offset)
            self.close()

    def kill(self):
        """Ask this module's box to end, without waiting (:func:`close_all`)."""
        for box in (self._pending, self._box):
            if box is not None:
                box.kill()

    def close(self):
        if self._pending is not None:
            self._pending.close()
            self._pending = None
        if self._box is not None:
            self._box.close()
            self._box = None
        self._cpu_mark = None

    def _exit_status(self):
        if self._box is None:
            return "not running"
        return self._box.exit_status(timeout=3.0)

    # -- requests -----------------------------------------------------------
    def _wait_for_answer(self, sock, timeout, clock, backstop):
        """Until the answer starts to arrive; raises socket.timeout once the call
        was charged ``timeout`` seconds (:mod:`call_clock`), or at the backstop,
        and _PrintedTooMuch once it printed past its limit."""
        while True:
            now = time.monotonic()
            if now >= backstop:
                raise socket.timeout("wall-clock backstop")
            ready, _, _ = select.select([sock], [], [], min(call_clock.POLL_S, backstop - now))
            if ready:
                return
            call_clock.check_cancelled()
            if self.printed.printed_by_call() > self.allowance.output_bytes():
                raise _PrintedTooMuch()
            if clock.update() >= timeout:
                raise socket.timeout("time limit")

    def _request(self, message, timeout, short=False):
        request_id = secrets.token_hex(8)
        clock = call_clock.CallClock(self._box, since=self._cpu_mark)
        deadline = clock.backstop(timeout)
        sock = self._box.sock
        self.printed.start_call()
        try:
            wire.send_frame(sock, dict(message, id=request_id), deadline=deadline)
            while True:
                self._wait_for_answer(sock, timeout, clock, deadline)
                frame = wire.recv_frame(sock, deadline=deadline, max_bytes=wire.MAX_REPLY_BYTES)
                if frame.get("id") == request_id:
                    break  # anything else is stale or forged: skip it, the deadline still runs
        except (socket.timeout, _PrintedTooMuch):
            limit = self.allowance.output_bytes()
            storm = self.printed.printed_by_call() > limit  # a print storm, not a loop
            self._charge(clock)
            self.close()
            self.allowance.overran()
            if storm:
                return Outcome(False, error=StudentError("output", message=_size_text(limit)))
            return Outcome(False, error=StudentError("timeout", "after_timeout" if short else "", f"{timeout:g}"))
        except (EOFError, OSError):
            self._charge(clock)
            status = self._exit_status()
            self.close()
            return Outcome(False, error=StudentError("crash", message=status))
        except wire.WireError as exc:
            self._charge(clock)
            self.close()
            return Outcome(False, error=StudentError("protocol", message=str(exc)[:200]))
        self.allowance.answered(self._charge(clock))
        delegation = frame.get("delegation")
        if isinstance(delegation, list):
            for item in delegation[:20]:
                if isinstance(item, str) and item[:200] not in self.delegation:
                    self.delegation.append(item[:200])
        return self._outcome(frame)

    def _charge(self, clock):
        """Charge the call that ``clock`` timed; returns what it cost."""
        charged = clock.finish()
        self.spent += charged
        self.wall_spent += time.monotonic() - clock.started
        self._cpu_mark = clock.last_cpu if clock.counting else None
        self.printed.end_call()
        return charged

    def _outcome(self, frame):
        if not frame.get("ok"):
            error = frame.get("error") if isinstance(frame.get("error"), dict) else {}
            kind = "protocol" if error.get("type") == "ProtocolError" else "exception"
            line, offset = error.get("line"), error.get("offset")
            return Outcome(False, error=StudentError(
                kind, str(error.get("type", ""))[:100], str(error.get("message", ""))[:1500],
                str(error.get("traceback", ""))[:3000],
                line if isinstance(line, int) and not isinstance(line, bool) and 0 < line < 10**7 else 0,
                str(error.get("code", ""))[:300],
                offset if isinstance(offset, int) and not isinstance(offset, bool) and 0 < offset < 10**4 else 0))
        result = frame.get("result")
        if result is None:
            return Outcome(True)
        try:
            budget = wire.DecodeBudget()
            if not isinstance(result, dict):
                raise wire.WireError("the answer is not an object")
            return Outcome(True, wire.decode_value(result.get("value"), budget=budget),
                           wire.decode_value(result.get("args_after", []), budget=budget),
                           wire.decode_value(result.get("kwargs_after", {"$dict": {}}), budget=budget))
        except (wire.WireError, ValueError, TypeError, AttributeError, RecursionError, MemoryError) as exc:
            return Outcome(False, error=StudentError("protocol", message=str(exc)[:200] or type(exc).__name__))

    def _ensure_started(self):
        problem = self.spec.get("problem")
        if problem or not self.spec.get("present"):
            return StudentError("missing", message=problem or "")
        if self._import_error is not None:
            return self._import_error
        if self.spent >= self.limits.module_budget or \
                self.wall_spent >= self.limits.module_budget * call_clock.WALL_FACTOR + call_clock.WALL_SLACK:
            return StudentError("budget")
        if self._box is None:
            self.restarts += 1
            self._start()
            if self._import_error is not None:
                return self._import_error
        return None

    def _send(self, message, timeout):
        error = self._ensure_started()
        if error is not None:
            return Outcome(False, error=error)
        limit, short = self.allowance.seconds(timeout)
        remaining = self.limits.module_budget - self.spent
        return self._request(message, max(0.5, min(limit, remaining)), short)

    def call(self, function, *args, timeout=None, **kwargs):
        """Call ``<module>.<function>(*args, **kwargs)`` in the worker."""
        return self._call(function, args, kwargs, timeout, inputs_after=False)

    def call_watching_inputs(self, function, *args, timeout=None, **kwargs):
        """As :meth:`call`, and the arguments come back as the call left them
        (``args_after``, ``kwargs_after``): did it change its inputs?"""
        return self._call(function, args, kwargs, timeout, inputs_after=True)

    def _call(self, function, args, kwargs, timeout, inputs_after):
        message = {"op": "call", "function": function,
                   "args": [wire.encode_value(arg) for arg in args],
                   "kwargs": {key: wire.encode_value(value) for key, value in kwargs.items()}}
        if inputs_after:  # asked for only where a test looks: sending them back costs both sides
            message["inputs_after"] = True
        return self._send(message, timeout)

    def scenario(self, name, spec, timeout=None):
        """Run the trusted scenario ``name`` with the student module plugged in."""
        return self._send({"op": "scenario", "name": name, "spec": spec}, timeout)


def close_all(sandboxes):
    """Close every sandbox of a grade: all boxes are told to end at once, so their
    keepers take their workers down in parallel, then each is waited for."""
    sandboxes = list(sandboxes)
    for sandbox in sandboxes:
        sandbox.kill()
    for sandbox in sandboxes:
        sandbox.close()


def prestart(sandboxes, modules=None):
    """Ask for every box a grade will use at once, so that they confine in
    parallel instead of one after the other at each module's first call."""
    for sandbox in sandboxes:
        if not modules or sandbox.module_name in modules:
            sandbox.request_box()

