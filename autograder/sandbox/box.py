"""One box: a keeper process and the worker it starts, both forked from the zygote.

The keeper (trusted) enters new namespaces and forks the worker, then waits:
when the judge says ``kill`` or goes away, or the worker dies, it kills the
worker -- PID 1 of its own PID namespace, so the kernel takes every process
the student started with it -- and tells the judge how the worker ended.

The worker confines itself before the first line of student code
(:mod:`autograder.sandbox.confine.confinement`: a minimal root, its own uid, limits,
Landlock, a syscall filter).

It reports what held to the keeper through a pipe it closes before any
student code runs, so the report cannot be forged.
"""
import json
import os
import select
import signal
import sys

from autograder.sandbox import assignment_side
from autograder.sandbox.confine import cgroups, limits, namespaces
from autograder.sandbox.confine.confinement import confine

EXIT_CONFINEMENT_FAILED = 86
CGROUP_HEADROOM_BYTES = 512 * 2**20  # the worker's own interpreter pages on top of the student's
CGROUP_EXTRA_TASKS = 32              # threads count as tasks for the pids controller


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
        as_root = config.get("uid") is not None  # root of the machine, with a uid for the student
        cgroup, cgroup_problem = None, None
        if as_root and sys.platform.startswith("linux") and "cgroups" not in config.get("disable", ()):
            lim = config["limits"]
            cgroup, cgroup_problem = cgroups.box_cgroup(
                f"{cgroups.PREFIX}{os.getpid()}", lim["memory_bytes"] + CGROUP_HEADROOM_BYTES,
                lim["max_processes"] + CGROUP_EXTRA_TASKS)
        if "namespaces" in config.get("disable", ()):  # tests of the degraded paths
            flags, problems = 0, ["namespaces: disabled for this run"]
        elif sys.platform.startswith("linux"):
            flags, problems = namespaces.enter_namespaces(as_root)
        else:
            flags, problems = 0, ["namespaces: Linux only"]
        bounds_in_words(config, cgroup)  # the worker is born inside the cgroup: it bounds everything
        if cgroup_problem:
            problems = problems + [cgroup_problem]
        report_r, report_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(report_r)
            keeper_sock.close()
            worker_main(config, worker_sock, log_fd, report_w, flags, problems)
            os._exit(0)  # worker_main never returns
        os.close(report_w)
        worker_sock.close()
        os.close(log_fd)
        report = _read_report(report_r, timeout=30.0)
        _send(keeper_sock, {"pid": pid, "isolation": report})
        status = _supervise(pid, keeper_sock, own_pid_namespace=bool(flags & namespaces.CLONE_NEWPID),
                            cgroup=cgroup)
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


def bounds_in_words(config, cgroup):
    """What the box's cgroup bounds, for the isolation report (the worker writes it)."""
    config["memory_bound"] = (f"{cgroup.kind}: at most {config['limits']['memory_bytes'] // 2**20 + 512} MiB "
                              f"for the whole box (all its processes, files and shared memory together), "
                              f"at most {config['limits']['max_processes']} processes" if cgroup else None)
    config["cpu_bound"] = cgroup.cpu if cgroup else None


def _supervise(pid, keeper_sock, own_pid_namespace, cgroup=None):
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
            if message == b"cpu":  # the judge charges calls in the box's CPU time
                usage = limits.tree_usage(pid, cgroup.members() if cgroup is not None else None)
                _send(keeper_sock, {"cpu": usage[0], "running": usage[1]} if usage else {"cpu": None})
                continue
            if not message or message == b"kill":
                _kill(pid, own_pid_namespace)
                break
    _, status = os.waitpid(pid, 0)
    if not own_pid_namespace:
        limits.kill_descendants()
    return limits.describe_status(status)


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
def worker_main(config, worker_sock, log_fd, report_fd, flags, problems):
    """Confine, report, then serve the judge. Never returns."""
    code = 0
    try:
        namespaces.die_with_parent()
        run_on_cpus(config.get("cpus"))
        keep = {worker_sock.fileno(), log_fd, report_fd}
        for fd in _open_fds():
            if fd > 2 and fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        guard = assignment_side.guard(config.get("module"))
        config["emptied"] = guard.source_files() if guard is not None else []
        # machine code the guard takes out of the box's reach for good (confine.code_seal)
        config["sealed"] = guard.sealed_code() if hasattr(guard, "sealed_code") else None
        report = confine(config, flags, problems)
        if config.get("probe"):
            os.write(report_fd, json.dumps(report).encode())
            os._exit(0)
        os.write(report_fd, json.dumps(report).encode())
        os.close(report_fd)
        if report.get("refused"):
            code = EXIT_CONFINEMENT_FAILED
            return
        from autograder.sandbox import worker
        worker.run(worker_sock, config["submission"], config["module"], log_fd,
                   scratch=config["scratch"] if report.get("scratch_writable") else None)
    except BaseException:  # noqa: B036
        code = code or 70
    finally:
        os._exit(code)


def run_on_cpus(cpus):
    """Keep this process (and whatever it starts) on ``cpus``, the CPUs of the
    grading process that asked for the box (a batch pins each to one): a call
    and its answer then wake each other on one CPU instead of across two. Only
    CPUs this process may use count; where none is left, or there is no affinity
    (macOS), nothing changes: where a box runs is never a matter of confinement."""
    if not cpus or not isinstance(cpus, list) or not hasattr(os, "sched_setaffinity"):
        return
    chosen = {cpu for cpu in cpus if type(cpu) is int} & os.sched_getaffinity(0)
    if chosen:
        try:
            os.sched_setaffinity(0, chosen)
        except OSError:
            pass


def _open_fds():
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))
