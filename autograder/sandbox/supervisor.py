"""As root, the zygote keeps its boxes itself: no keeper process per box.

A keeper (:mod:`autograder.sandbox.box`) is a fork of the zygote whose work is
to enter the box's namespaces, fork the worker and watch it. Each one costs a
fork and an exit of a process holding torch's heap, for every box of every
student. As root the zygote does the same work from its event loop instead:

* it makes the box's cgroup, asks for a new PID namespace for its next child
  only (``unshare``, then ``setns`` back to its own) and forks the worker,
  which is PID 1 of that namespace: when it dies the kernel kills everything
  it started;
* the worker joins the cgroup and enters its other namespaces (mount,
  network, IPC) itself, in its first instructions, before any student code
  (:func:`start_worker`);
* the zygote then serves the box's keeper socket as a keeper does (the
  worker's confinement report once it is written, ``cpu``, ``kill``, then the
  worker's end), so the judge cannot tell one from the other.

Without root a box needs a user namespace, which the zygote could not leave
again: there every box keeps its keeper.
"""
import contextlib
import json
import os
import signal
import time

from autograder.sandbox import box
from autograder.sandbox.confine import cgroups, limits, namespaces
from autograder.sandbox.confine.layers import cgroup as cgroup_layer, namespaces as namespaces_layer

REPORT_TIMEOUT_S = 30.0
_own_pid_namespace = None


def applies(config):
    """Whether the zygote keeps this box itself: as root, with namespaces."""
    return (config.as_root and not config.disabled("namespaces")
            and hasattr(os, "pidfd_open") and os.geteuid() == 0)


class KeptBox:
    """One box the zygote keeps: its worker, its keeper socket, its cgroup."""

    def __init__(self, pid, keeper_sock, report_r, cgroup):
        self.pid = pid
        self.sock = keeper_sock
        self.report_r = report_r
        os.set_blocking(report_r, False)  # read as far as it goes, in the loop and at the end
        self.report = bytearray()
        self.report_deadline = time.monotonic() + REPORT_TIMEOUT_S
        self.cgroup = cgroup
        self.pidfd = os.pidfd_open(pid)
        self.done = False

    def fds(self):
        return [self.sock, self.pidfd] + ([self.report_r] if self.report_r is not None else [])

    def handle(self, fd):
        """Something is ready on ``fd``; True once the box is over."""
        if fd == self.report_r:
            if self._read_report():
                self._send_ready()
        elif fd is self.sock:
            try:
                message = self.sock.recv(4096)
            except OSError:
                message = b""
            if message == b"cpu":  # what the judge's call clock charges (call_clock.py)
                self._send(limits.box_count(self.pid, self.cgroup))
            elif message == b"where":  # a call ran out of time: its stack, to the judge's socket
                box.ask_for_stack(self.pid)
            elif not message or message == b"kill":
                self.kill()
        elif fd == self.pidfd:
            self._ended()
        return self.done

    def expire(self, now):
        """A worker that wrote no report in time: ready with what there is."""
        if self.report_r is not None and now >= self.report_deadline:
            self._send_ready()

    def _read_report(self):
        """Read what the worker wrote so far; True once the pipe has ended (EOF or an
        error), False while a process of the box may still write to it."""
        while True:
            try:
                chunk = os.read(self.report_r, 65536)
            except BlockingIOError:
                return False
            except OSError:
                return True
            if not chunk:
                return True
            self.report += chunk

    def _send_ready(self):
        if self.report_r is None:
            return
        os.close(self.report_r)
        self.report_r = None
        self._send({"pid": self.pid, "isolation": box.parse_report(self.report)})

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)  # PID 1 of its namespace: everything in it goes too
        except OSError:
            pass

    def _ended(self):
        try:
            _, status = os.waitpid(self.pid, 0)
            ended = limits.describe_status(status)
        except ChildProcessError:
            ended = "exit status unknown"
        if self.report_r is not None:  # its exit and its report can come in the same round
            self._read_report()        # of the loop (a probe box writes, then exits at once)
        self._send_ready()
        if self.cgroup is not None:
            self.cgroup.leave_and_remove()
        self._send({"exit": ended})
        for closing in (lambda: os.close(self.pidfd), self.sock.close):
            try:
                closing()
            except OSError:
                pass
        self.done = True

    def _send(self, message):
        try:
            self.sock.send(json.dumps(message).encode())
        except OSError:
            pass


def fork_box(config, worker_sock, keeper_sock, log_fd, channels):
    """(The zygote) Fork the worker of ``config`` in a PID namespace of its own and
    return its :class:`KeptBox` (None where no PID namespace can be made: a keeper
    then does what it can); the worker never returns from here. Raises OSError,
    with nothing of the box left behind, when the zygote is out of processes or
    descriptors; the caller still owns the sockets and ``log_fd`` then."""
    global _own_pid_namespace
    try:
        if _own_pid_namespace is None:
            _own_pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        namespaces.unshare(namespaces.CLONE_NEWPID)  # for the next child only
    except OSError:
        return None  # no PID namespace here: a keeper does what it can instead
    cgroup, report_r, report_w, pid = None, None, None, -1
    try:
        try:
            cgroup, made = cgroup_layer.make(config, f"{cgroups.PREFIX}{os.getpid()}-{time.monotonic_ns()}",
                                             join=False)
            report_r, report_w = os.pipe()
            pid = os.fork()
        finally:
            if pid != 0:  # the zygote: its next children are its own again
                namespaces.setns(_own_pid_namespace, namespaces.CLONE_NEWPID)
    except OSError:
        _undo_box(pid, cgroup, report_r, report_w)
        raise
    if pid == 0:
        try:
            for other in channels:
                other.close()
            keeper_sock.close()
            os.close(report_r)
        except BaseException:  # noqa: B036 - never back into the zygote's loop
            os._exit(box.EXIT_CONFINEMENT_FAILED)
        start_worker(config, cgroup, made, worker_sock, log_fd, report_w)  # never returns
    try:
        os.close(report_w)
        report_w = None
        if cgroup is not None:
            cgroup.watch()
        kept = KeptBox(pid, keeper_sock, report_r, cgroup)
    except OSError:
        _undo_box(pid, cgroup, report_r, report_w)
        raise
    worker_sock.close()
    os.close(log_fd)
    return kept


def _undo_box(pid, cgroup, *fds):
    """A box that could not be kept: its worker (if forked) killed and reaped, its
    cgroup removed, its descriptors closed."""
    if pid > 0:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
    if cgroup is not None:
        cgroup.leave_and_remove()
    for fd in fds:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def start_worker(config, cgroup, made, worker_sock, log_fd, report_w):
    """(The forked worker, PID 1 of its namespace) Join the cgroup, enter the
    other namespaces, then confine and serve (:func:`box.worker_main`); ``made``:
    the cgroup layer's result."""
    try:
        os.setsid()  # no signal to our process group reaches the zygote
        namespaces.dumpable()
        if cgroup is not None:
            cgroup.join_self()  # first: everything the box starts is born inside
        entered = namespaces_layer.enter_rest()
    except BaseException:  # noqa: B036 - no student code runs: the report says nothing held
        os._exit(box.EXIT_CONFINEMENT_FAILED)
    box.worker_main(config, worker_sock, log_fd, report_w, (made, entered))
