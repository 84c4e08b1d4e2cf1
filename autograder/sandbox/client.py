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
protocol error. What fails in the judge's own code while it reads an answer is
the grader's failure (kind ``grader``), and so is a failure the box says our
code had there, once the judge has reproduced it without the student's code
(:meth:`Sandbox._settle`); every one is kept in ``Sandbox.faults``.
"""
import os
import secrets
import select
import socket
import time
from dataclasses import dataclass, field

from autograder import locations
from autograder.intake import stack_dump
from autograder.intake.submitted_text import clean
from autograder.sandbox import assignment_side, call_clock, wire, worker
from autograder.sandbox.boxes import BoxError
from autograder.sandbox.confine import minimal_root
from autograder.sandbox.confine.box_config import BoxLimits, for_module
from autograder.sandbox.confine.code_seal import EXIT_SEALED

_WORKER_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")  # serves the judge in a box

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
        """What the box itself enforces (the rest is the judge's clock)."""
        return BoxLimits(memory_bytes=self.memory_bytes, cpu_seconds=self.cpu_seconds,
                         max_processes=self.max_processes, max_file_bytes=self.max_file_bytes,
                         scratch_bytes=self.scratch_bytes, max_open_files=self.max_open_files)


@dataclass
class StudentError:
    """Why a call produced no usable value. ``kind`` is one of: missing, import,
    exception, timeout, crash, protocol, budget, sandbox (the grader could not start a
    box), grader (the grader's own code raised: ``type``, ``message`` and ``where``,
    'autograder/sandbox/wire.py:118').
    ``line``/``code``/``offset``: where in the student's file it happened (0/'' if unknown)."""
    kind: str
    type: str = ""
    message: str = ""
    traceback: str = ""
    line: int = 0
    code: str = ""
    offset: int = 0
    where: str = ""

    def headline(self):
        """'SyntaxError: expected ':'' -- Python's own words, quoted as they are."""
        return (self.type + ": " + self.message).rstrip(": ") if self.message else self.type


def size_text(count):
    """A byte limit as students read it: whole MiB, else KiB."""
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
        self.faults = []          # the grader's own failures (StudentError of kind grader), in order
        self.guarded = assignment_side.guard(module_name) is not None  # its answers must say so
        self._box = None
        self._import_error = None
        self._cpu_mark = None     # the box's count where the last call's clock stopped (call_clock.Mark)
        self._pending = None      # a box asked for by prestart(), not yet confined
        self._stack_misses = 0    # stopped calls in a row whose box dumped no stack of the module
        self.allowance = call_clock.Allowance(self.limits.call_timeout, self.limits.after_timeout,
                                              self.limits.call_output_bytes)
        self.printed = call_clock.PrintedOutput(spec.get("log"))

    def wanted(self):
        return bool(self.spec.get("present")) and not self.spec.get("problem")

    # -- process management -------------------------------------------------
    def _box_config(self):
        return for_module(self.spec, self.module_name, self.limits.for_box())

    def request_box(self):
        """Ask for this module's box without waiting for its confinement (prestart)."""
        if self._box is not None or self._pending is not None or not self.wanted() \
                or not hasattr(self.boxes, "request_box"):
            return
        started = time.monotonic()
        try:
            self._pending = self.boxes.request_box(self._box_config())
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
                config = self._box_config()
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
            if error.kind == "grader":  # the judge could not read the answer: every call of the module says so
                self._import_error = error
                self.close()
                return
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

    def _request(self, message, timeout, short=False, shapes=None):
        request_id = secrets.token_hex(8)
        clock = call_clock.CallClock(self._box, since=self._cpu_mark)
        backstop = clock.backstop(timeout)
        sock = self._box.sock
        reading = None
        self.printed.start_call()
        try:
            if clock.charged >= timeout:  # the box spent it in the background (call_clock)
                raise socket.timeout("time limit")
            wire.send_frame(sock, dict(message, id=request_id), deadline=backstop)
            self._wait_for_answer(sock, timeout, clock, backstop)
            # An answer that has begun follows at once from an honest worker (one
            # write): a box dribbling it out meets what is left of the call's time.
            deadline = min(backstop, time.monotonic() + max(timeout - clock.charged, call_clock.GRACE_S))
            reading = time.thread_time()
            frame = wire.recv_frame(sock, deadline=deadline, max_bytes=wire.MAX_REPLY_BYTES)
            outcome, claim = self._answer(frame, request_id, shapes)
        except (socket.timeout, _PrintedTooMuch):
            limit = self.allowance.output_bytes()
            storm = self.printed.printed_by_call() > limit  # a print storm, not a loop
            self.allowance.overran()
            error = StudentError("output", message=size_text(limit)) if storm else \
                StudentError("timeout", "after_timeout" if short else "", f"{timeout:g}")
            return self._failed(clock, error, reading, locate=True)
        except (EOFError, OSError):
            self._charge(clock)
            status = self._exit_status()
            sealed = self._box.isolation.get("sealed") if self._box is not None else None
            if sealed and status == f"exit code {EXIT_SEALED}":  # it reached code its guard sealed
                self._note_delegation([f"{sealed}, reached through raw memory"])
            self.close()
            return Outcome(False, error=StudentError("crash", message=status))
        except wire.WireError as exc:  # the box's bytes do not follow the protocol
            return self._failed(clock, StudentError("protocol", message=clean(str(exc), 200)), reading)
        except Exception as exc:  # noqa: BLE001 - a bug of the judge's own (its request, its decoder)
            if reading is None:  # before any answer: the judge's own request failed
                raise
            self._charge(clock)  # the box's time; the judge's own reading is not the box's
            self.close()
            return self._fault(exc)
        self.allowance.answered(self._charge(clock, reading))
        return self._settle(claim, message, outcome) if claim else outcome

    def _failed(self, clock, error, reading=None, locate=False):
        """The call failed on the box's side: charged, and the box ended (``locate``: once
        its stack said where the student's code was, as the frames of a traceback)."""
        self._charge(clock, reading)
        if locate and self._box is not None and self._stack_misses < 2:  # a module that silenced it: not again
            own = {os.path.join(folder, self.module_file) for folder in (self.spec.get("submission") or "",
                                                                         minimal_root.SUBMISSION)}
            found = stack_dump.frames(self._box.stack(), own, _WORKER_FILE)
            self._stack_misses = 0 if found else self._stack_misses + 1
            if found:
                error.traceback, error.line = stack_dump.as_traceback(found, self.module_file), found[-1][0]
        self.close()
        return Outcome(False, error=error)

    def _answer(self, frame, request_id, shapes=None):
        """The :class:`Outcome` of the answer ``frame``; raises on anything that is not one,
        or whose parts (``shapes``: part -> its :mod:`~autograder.intake.answer_shapes` shape) differ."""
        if frame.get("id") != request_id:  # one request at a time: anything else is forged
            raise wire.WireError("the answer was not for this request")
        self._note_delegation(frame.get("delegation"), required=self.guarded)
        outcome, claim = self._outcome(frame)
        return wire.check_parts(outcome, shapes), claim

    def _fault(self, exc, reproduced=None):
        """The grader's own failure ``exc`` (or ``reproduced``: ``(type, where, message)``) as an Outcome."""
        kind, where, message = reproduced or (type(exc).__name__, locations.grader_frame(
            exc, assignment_side.grader_roots()), str(exc))
        self.faults.append(StudentError("grader", clean(kind, 100), clean(message, 300), where=clean(where, 300)))
        return Outcome(False, error=self.faults[-1])

    def _settle(self, claim, message, outcome):
        """The box claims that our code raised (``claim``: ``phase``, ``type``, ``where``). Student
        code can forge that, so the judge runs the same code of ours without it: the inputs it
        sent decoded here, the codec's own probe values, the scenario with a stand-in and the
        assignment's reference. Only the same failure there makes it the grader's; else the
        outcome stays the student's."""
        phase = claim["phase"]
        if phase == "inputs":
            failures = wire.decoding_failures([*message.get("args", []), *message.get("kwargs", {}).values()])
        elif phase == "answer":
            failures = wire.codec_failures()
        else:
            failures = assignment_side.scenario_failures(message.get("name"), message.get("spec"), self.module_name)
        for failure in failures:
            if failure[0] == claim["type"] and failure[1] == claim["where"]:
                return self._fault(None, failure)
        return outcome

    def _note_delegation(self, record, required=False):
        for item in wire.decode_delegation(record, required):
            if item not in self.delegation:
                self.delegation.append(item)

    def _charge(self, clock, reading=None):
        """Charge the call that ``clock`` timed: the box's time (:mod:`call_clock`), and at
        least the judge's own CPU time spent reading its answer (``reading``: the thread's CPU
        time when it began); returns what it cost."""
        judge = time.thread_time() - reading if reading is not None else 0.0
        charged = max(clock.finish(), judge)
        self.spent += charged
        self.wall_spent += time.monotonic() - clock.started
        self._cpu_mark = clock.mark()
        self.printed.end_call()
        return charged

    @staticmethod
    def _outcome(frame):
        """The answer ``frame``'s Outcome, and the box's claim that our code failed (or None)."""
        if not frame.get("ok"):
            report = frame.get("error")
            error = wire.decode_error(report)
            kind = "protocol" if error["type"] == "ProtocolError" else "exception"
            return Outcome(False, error=StudentError(kind, **error)), worker.read_claim(report)
        result = frame.get("result")
        return (Outcome(True) if result is None else Outcome(True, *wire.decode_result(result))), None

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

    def _send(self, message, timeout, shapes=None):
        error = self._ensure_started()
        if error is not None:
            if error.kind == "grader" and (not self.faults or self.faults[-1] is not error):
                self.faults.append(error)  # each call it fails is the grader's
            return Outcome(False, error=error)
        limit, short = self.allowance.seconds(timeout)
        remaining = self.limits.module_budget - self.spent
        return self._request(message, max(0.5, min(limit, remaining)), short, shapes)

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
        return self._send(message, timeout, wire.inputs_shapes(args, kwargs) if inputs_after else None)

    def scenario(self, name, spec, timeout=None):
        """Run the trusted scenario ``name`` with the student module plugged in; its
        answer must have the shape the assignment declares for it."""
        shape = assignment_side.answer_shape(name, spec)
        return self._send({"op": "scenario", "name": name, "spec": spec}, timeout, {"value": shape})


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

