"""Grading processes kept for a class: one per job slot, each forked once from
the batch's judge and grading one student after another.

A grading process per student pays a fork of the judge (torch, pytest, the
collected suites), the pages of that heap it then writes to, and its exit, for
every student. A slot pays them once: it grades each student it is given with
the same call as ``python -m autograder grade`` (:func:`autograder.batch.jobs.grade_job`,
the student's own boxes, uid and seed), writes that student's results.json and
answers. Nothing of one student reaches the next through it: student code only
ever runs in the boxes the zygote forks, a grade's judge state is its own (the
suites' plugin is reset, the sandboxes and the grading area are new), and what
a slot keeps -- imported modules, the reference runs of
:mod:`autograder.judging.reference_cache` -- depends on the seed alone, as it
would for one student. A slot that dies, fails or outlives its student's
``--timeout`` is killed with what it was grading; the next student gets a new one.

Each slot runs on a CPU of its own where there are enough (:func:`slot_cpu`), and
so do the boxes it asks for: a call and its answer, dozens a test, then wake each
other on one CPU instead of across two.
"""
import contextlib
import json
import os
import pathlib
import signal
import sys
import time
import traceback

from autograder.batch import jobs
from autograder.batch.jobs import CRASHED
from autograder.sandbox.confine import limits


class Slot:
    """One grading process, as the batch's judge sees it."""

    def __init__(self, pid, jobs_w, done_r, cpu=None):
        self.pid = pid
        self.jobs_w = jobs_w
        self.done_r = done_r
        self.cpu = cpu
        self.job = None
        self.buffered = b""
        self.pidfd = limits.watch_fd(pid)

    def fds(self):
        return [self.done_r] + ([self.pidfd] if self.pidfd is not None else [])

    def answer(self):
        """The slot's answer for its student (True: graded), or None (not yet)."""
        try:
            chunk = os.read(self.done_r, 4096)
        except BlockingIOError:
            return None
        except OSError:
            chunk = b""
        if not chunk:
            return False if not self.buffered else None
        self.buffered += chunk
        if b"\n" not in self.buffered:
            return None
        line, self.buffered = self.buffered.split(b"\n", 1)
        try:
            return json.loads(line.decode()).get("ok") is True
        except (ValueError, AttributeError):
            return False

    def ended(self):
        """True once the process has ended (it is reaped by :meth:`JudgeSlots._retire`)."""
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def end_input(self):
        """No more students for it: it finishes and exits."""
        if self.jobs_w is not None:
            with contextlib.suppress(OSError):
                os.close(self.jobs_w)
            self.jobs_w = None

    def close(self):
        self.end_input()
        for fd in self.fds():
            with contextlib.suppress(OSError):
                os.close(fd)


class JudgeSlots:
    """The slots of a batch, forked on demand from this process (the batch's judge)."""

    def __init__(self, boxes):
        self.boxes = boxes
        self.slots = []

    def pids(self):
        return {slot.pid for slot in self.slots}

    def start(self, job):
        for idle in [slot for slot in self.slots if slot.job is None and slot.ended()]:
            self._retire(idle, kill=False)  # gone while it waited (the OOM killer, say)
        slot = next((slot for slot in self.slots if slot.job is None), None) or self._fork()
        slot.job, job.slot = job, slot
        order = {"submission": str(job.submission), "seed": job.seed, "include_hidden": job.include_hidden,
                 "layout": job.layout, "uid": job.uid, "lang": job.lang, "log": str(job.log),
                 "results": str(job.results), "modules": getattr(job, "modules", None)}
        try:
            os.write(slot.jobs_w, json.dumps(order).encode() + b"\n")
        except (OSError, TypeError):
            pass  # a slot that is gone: poll() says so

    def _fork(self):
        channel = self.boxes.new_channel()
        jobs_r, jobs_w = os.pipe()
        done_r, done_w = os.pipe()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        cpu = slot_cpu(_allowed_cpus(), [slot.cpu for slot in self.slots])
        pid = os.fork()
        if pid == 0:
            for fd in [jobs_w, done_r] + [fd for slot in self.slots for fd in slot.fds() + [slot.jobs_w]
                                          if fd is not None]:
                with contextlib.suppress(OSError):
                    os.close(fd)
            _slot_main(jobs_r, done_w, channel, cpu)  # never returns
        os.close(jobs_r)
        os.close(done_w)
        channel.close()
        os.set_blocking(done_r, False)
        slot = Slot(pid, jobs_w, done_r, cpu)
        self.slots.append(slot)
        return slot

    def wake_fds(self, job):
        return job.slot.fds() if getattr(job, "slot", None) is not None else []

    def poll(self, job):
        """``(status, reason)`` once the slot has answered for ``job`` or ended, else None."""
        slot = job.slot
        answer = slot.answer()
        if answer is True:
            slot.job = None
            return job._verdict("the grading process answered", True)
        if answer is None and not slot.ended():
            return None
        deadline = time.monotonic() + 5.0  # one that failed leaves by itself
        while not slot.ended() and time.monotonic() < deadline:
            time.sleep(0.01)
        ended = self._retire(slot, kill=not slot.ended())
        return CRASHED, ("the grader failed on this submission (see grader.log)" if answer is False and
                         ended == "exit code 0" else f"the grader stopped before finishing ({ended})")

    def kill(self, job):
        slot = getattr(job, "slot", None)
        if slot is not None and slot in self.slots:
            self._retire(slot, kill=True)

    def _retire(self, slot, kill):
        """Reap the slot (killed first if asked); returns how it ended."""
        if kill:
            limits.kill_tree(slot.pid)
        try:
            ended = limits.describe_status(os.waitpid(slot.pid, 0)[1])
        except ChildProcessError:
            ended = "exit status unknown"
        slot.close()
        self.slots.remove(slot)
        return ended

    def close(self, timeout=10.0):
        """No more students: idle slots end (their input closes), busy ones are killed."""
        for slot in list(self.slots):
            if slot.job is not None:
                self._retire(slot, kill=True)
            else:
                slot.end_input()
        deadline = time.monotonic() + timeout
        for slot in list(self.slots):
            while not slot.ended() and time.monotonic() < deadline:
                time.sleep(0.01)
            self._retire(slot, kill=not slot.ended())


def _allowed_cpus():
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def slot_cpu(allowed, taken):
    """The CPU for a new slot: of the ``allowed`` ones, the one the fewest live slots
    (their CPUs: ``taken``) run on, the lowest first; None where there is no choice
    to make (one CPU, or no affinity here)."""
    if len(allowed) < 2:
        return None
    return min(allowed, key=lambda cpu: (taken.count(cpu), cpu))


def _slot_main(jobs_r, done_w, channel, cpu=None):
    """The slot: one student per line of ``jobs_r``, an answer each on ``done_w``;
    ``os._exit`` at the end of its input or after a failure of its own. ``cpu``:
    where it and its boxes run (:func:`slot_cpu`)."""
    try:
        os.setpgid(0, 0)  # Ctrl-C reaches the batch's judge only; it cleans up
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        from autograder.sandbox.boxes import boxes_from_channel

        boxes = boxes_from_channel(channel)
        if cpu is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, {cpu})
                boxes.cpus = [cpu]
        with os.fdopen(jobs_r, "rb") as orders:
            for line in orders:
                graded = _grade_one(json.loads(line.decode()), boxes)
                os.write(done_w, json.dumps({"ok": graded}).encode() + b"\n")
                if not graded:
                    break  # a judge that failed once is not trusted with the next student
    except BaseException:  # noqa: B036 - the slot must always reach os._exit
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        os._exit(0)


def _grade_one(order, boxes):
    """One student: its log is this process's output meanwhile."""
    log = os.open(order["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    try:
        report = jobs.grade_job(pathlib.Path(order["submission"]), order["seed"], order["include_hidden"],
                                order["layout"] == "repo", boxes=boxes, uid=order["uid"], lang=order["lang"],
                                **({"modules": order["modules"]} if order.get("modules") else {}))
        jobs._write_report(report, order["results"])
        return True
    except Exception:  # noqa: BLE001 - the grader's own failure: this student's row says so
        with contextlib.suppress(OSError):
            os.write(2, traceback.format_exc().encode("utf-8", "replace"))  # the log, whatever sys.stderr is
        return False
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
