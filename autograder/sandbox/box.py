"""One box: a keeper process and the worker it starts, both forked from the zygote.

The keeper (trusted) enters new namespaces and forks the worker, then waits:
when the judge says ``kill`` or goes away, or the worker dies, it kills the
worker -- PID 1 of its own PID namespace, so the kernel takes every process
the student started with it -- and tells the judge how the worker ended.

The keeper applies the layers that must come before the fork (the box's cgroup,
its namespaces); the worker applies the others before the first line of student
code (:mod:`autograder.sandbox.confine.confinement`: one line per layer).

The worker reports what held (:func:`autograder.sandbox.isolation.box_report`)
to the keeper through a pipe it closes before any student code runs, so the
report cannot be forged.
"""
import dataclasses
import json
import os
import select
import signal
import sys

from autograder.intake import stack_dump
from autograder.sandbox import assignment_side, isolation
from autograder.sandbox.confine import cgroups, limits, namespaces
from autograder.sandbox.confine.box_config import SealRequest
from autograder.sandbox.confine.confinement import confine
from autograder.sandbox.confine.layers import cgroup as cgroup_layer, namespaces as namespaces_layer

EXIT_CONFINEMENT_FAILED = 86


# -- the keeper ------------------------------------------------------------------------------
def keeper_main(config, worker_sock, keeper_sock, log_fd):
    """Runs in a fresh child of the zygote; never returns."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        if sys.platform.startswith("linux"):
            namespaces.dumpable()
            limits.become_subreaper()  # without a PID namespace, orphans come back to us
        cgroup, cgroup_result = cgroup_layer.make(config, f"{cgroups.PREFIX}{os.getpid()}")
        entered = namespaces_layer.enter(config)  # the worker forked next is PID 1 of its own
        # The machine's /proc, where the box's processes are counted: the worker's new root
        # replaces the keeper's too (one mount namespace), and its /proc shows the box's own pids.
        proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        report_r, report_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(report_r)
            os.close(proc)
            keeper_sock.close()
            worker_main(config, worker_sock, log_fd, report_w, (cgroup_result, entered))
            os._exit(0)  # worker_main never returns
        if cgroup is not None:
            cgroup.step_out()
        os.close(report_w)
        worker_sock.close()
        os.close(log_fd)
        report = _read_report(report_r, timeout=30.0)
        _send(keeper_sock, {"pid": pid, "isolation": report})
        own_pids = bool(entered.fact("flags") & namespaces.CLONE_NEWPID)
        status = _supervise(pid, keeper_sock, own_pid_namespace=own_pids, cgroup=cgroup, proc=proc)
        if cgroup is not None:
            cgroup.leave_and_remove()
        _send(keeper_sock, {"exit": status})
    except BaseException:  # noqa: B036 - the keeper must always reach os._exit
        code = 70
    finally:
        os._exit(code)


def _send(sock, message):
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        pass


def _read_report(fd, timeout):
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return parse_report(b"".join(chunks))


def parse_report(data):
    """The worker's confinement report, or what a worker that wrote none means."""
    try:
        report = json.loads(bytes(data).decode())
        return report if isinstance(report, dict) else {}
    except ValueError:
        return {"confined": False, "problems": ["the worker stopped before confining itself"]}


def _supervise(pid, keeper_sock, own_pid_namespace, cgroup=None, proc=None):
    """Wait for the worker's end or the judge's word; returns how the worker ended."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    while True:
        watched = [keeper_sock] + ([pidfd] if pidfd is not None else [])
        ready, _, _ = select.select(watched, [], [], None if pidfd is not None else 0.05)
        if pidfd is not None and pidfd in ready or pidfd is None and _exited(pid):
            break
        if keeper_sock in ready:
            try:
                message = keeper_sock.recv(4096)
            except OSError:
                message = b""
            if message == b"cpu":  # what the judge's call clock charges (call_clock.py)
                _send(keeper_sock, limits.box_count(pid, cgroup, proc))
                continue
            if message == b"where":  # a call ran out of time: its stack, to the judge's socket
                ask_for_stack(pid)
                continue
            if not message or message == b"kill":
                _kill(pid, own_pid_namespace)
                break
    _, status = os.waitpid(pid, 0)
    if not own_pid_namespace:
        limits.kill_descendants()
    return limits.describe_status(status)


def ask_for_stack(pid):
    """Signal the worker to write its stack to the judge (:mod:`autograder.intake.stack_dump`);
    a worker that dropped the handler ignores it (PID 1 of its namespace) or dies, as it would anyway."""
    if stack_dump.SIGNAL is not None:
        try:
            os.kill(pid, stack_dump.SIGNAL)
        except OSError:
            pass


def _exited(pid):
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill(pid, own_pid_namespace):
    if not own_pid_namespace:  # best effort: the worker's group, then what /proc shows
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        limits.kill_descendants()
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


# -- the worker ------------------------------------------------------------------------------
def worker_main(config, worker_sock, log_fd, report_fd, made):
    """Confine (after ``made``, the results of the layers the maker applied),
    report, then serve the judge. Never returns."""
    code = 0
    try:
        namespaces.die_with_parent()
        config = with_guard(config)
        box = confine(config, made, keep_fds=(worker_sock.fileno(), log_fd, report_fd))
        report = isolation.box_report(box.results)
        if config.probe:
            os.write(report_fd, json.dumps(report).encode())
            os._exit(0)
        os.write(report_fd, json.dumps(report).encode())
        os.close(report_fd)
        if report.get("refused"):
            code = EXIT_CONFINEMENT_FAILED
            return
        from autograder.sandbox import worker
        worker.run(worker_sock, box.submission, config.module, log_fd,
                   scratch=box.scratch if report.get("scratch_writable") else None)
    except BaseException:  # noqa: B036
        code = code or 70
    finally:
        os._exit(code)


def with_guard(config):
    """``config`` with what its module's guard asks of the box: files it sees empty,
    machine code sealed (:mod:`autograder.sandbox.confine.code_seal`)."""
    guard = assignment_side.guard(config.module)
    if guard is None:
        return config
    request = guard.sealed_code() if hasattr(guard, "sealed_code") else None
    sealed = SealRequest(str(request.get("what")), tuple(request.get("addresses") or ())) if request else None
    return dataclasses.replace(config, emptied=tuple(guard.source_files()), sealed=sealed)
