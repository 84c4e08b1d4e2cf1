"""Operating-system limits for sandbox workers, applied where the OS has them.

Linux and macOS get resource limits (memory, CPU seconds, processes, file
size); Linux also makes the judge a child subreaper so that even a daemonised
grandchild of a worker is re-parented to the judge and can be killed at the
end. On Windows none of these exist: the judge's wall-clock timeouts still
bound every call, which is what keeps grading finite everywhere.
"""
import contextlib
import os
import signal
import sys

try:
    import resource
except ImportError:  # Windows
    resource = None

def _set(limit_name, value):
    limit = getattr(resource, limit_name, None)
    if limit is None:
        return
    try:
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(limit, (value, value if hard == resource.RLIM_INFINITY else hard))
    except (ValueError, OSError):
        pass  # the platform refuses this limit: timeouts still apply


# Kernel memory a box may hold outside its address space, counted per user by the
# kernel (per uid in the box's user namespace): queued signals and POSIX timers
# (each a sigqueue entry) and POSIX message queue bytes (also refused by the filter).
PENDING_SIGNALS = 128
MESSAGE_QUEUE_BYTES = 0


def current_address_space():
    """Bytes of virtual memory this process maps now (Linux), else None."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def apply_limits(memory_bytes, cpu_seconds, max_processes, max_file_bytes, own_uid=False, open_files=None,
                 nice=0):
    """Limit the calling process (a fresh worker); no-op where unsupported.
    ``own_uid``: the process runs as a uid of its own, so the process count
    starts from zero instead of from what the grading user already runs.
    ``open_files`` above what is open now; ``nice``: a lower CPU priority
    (where no cgroup shares the CPU out fairly)."""
    if resource is None:
        return
    mapped = current_address_space()
    if mapped is not None:  # headroom on top of what torch already maps
        _set("RLIMIT_AS", mapped + memory_bytes)
    _set("RLIMIT_CPU", int(cpu_seconds))
    running = 0 if own_uid else processes_of_this_user()
    if running is not None:  # the limit counts every process of the user, not just ours
        _set("RLIMIT_NPROC", running + int(max_processes))
    _set("RLIMIT_FSIZE", int(max_file_bytes))
    _set("RLIMIT_CORE", 0)
    _set("RLIMIT_SIGPENDING", PENDING_SIGNALS)
    _set("RLIMIT_MSGQUEUE", MESSAGE_QUEUE_BYTES)
    if open_files:
        _set("RLIMIT_NOFILE", _open_now() + int(open_files))
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass


def _open_now():
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 16


def processes_of_this_user():
    """How many processes this user runs now (Linux), else None."""
    if not os.path.isdir("/proc"):
        return None
    uid, count = os.getuid(), 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                pass
    return count


def protect_judge():
    """Linux: other processes of our uid may not read our memory, environment
    or open files through /proc, nor ptrace us (defence in depth: workers are
    confined, and the judge keeps tokens and runner paths in its environment)."""
    if not sys.platform.startswith("linux"):
        return False
    from autograder.sandbox.confine.namespaces import not_dumpable

    try:
        not_dumpable()
        return True
    except (OSError, AttributeError):
        return False


def become_subreaper():
    """Linux: orphaned descendants of workers get re-parented to us."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_CHILD_SUBREAPER = 36
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _read_proc(name, proc=None):
    """The bytes of ``/proc/<name>``; ``proc``: a descriptor of the /proc to read (one
    a keeper opened before the box's root replaced its own), else this process's /proc."""
    if proc is None:
        with open(f"/proc/{name}", "rb") as handle:
            return handle.read()
    handle = os.open(name, os.O_RDONLY, dir_fd=proc)
    try:
        return os.read(handle, 1 << 16)
    finally:
        os.close(handle)


def _list_proc(name="", proc=None):
    if proc is None:
        return os.listdir(f"/proc/{name}")
    handle = os.open(name or ".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=proc)
    try:
        return os.listdir(handle)
    finally:
        os.close(handle)


def _children_map(proc=None):
    children = {}
    for entry in _list_proc("", proc):
        if not entry.isdigit():
            continue
        try:
            fields = _read_proc(f"{entry}/stat", proc).rsplit(b")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return children


def _listed_children(pid, proc=None):
    """The kernel's list of ``pid``'s children (each of its threads'); raises OSError
    where the kernel keeps none or the process is gone."""
    found = []
    for task in _list_proc(f"{pid}/task", proc):
        found += [int(child) for child in _read_proc(f"{pid}/task/{task}/children", proc).split()]
    return found


def children(pid):
    """Direct children of ``pid`` (Linux), else []: from the kernel's list of
    each of its threads' children where there is one, else by a walk of /proc."""
    if not os.path.isdir("/proc"):
        return []
    try:
        return _listed_children(pid)
    except (OSError, ValueError):
        return _children_map().get(pid, [])


def descendants(root_pid, proc=None):
    """Every live descendant of ``root_pid`` (Linux, through /proc), else []."""
    if proc is None and not os.path.isdir("/proc"):
        return []
    children = _children_map(proc)
    stack, found = list(children.get(root_pid, [])), []
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _box_tree(root_pid, proc=None):
    """``root_pid``'s live descendants from the kernel's lists of children: no walk of
    every process of the machine on each count. A box's processes all descend from
    its worker (PID 1 of its namespace: the kernel hands it every orphan). Where the
    kernel keeps no such list, the walk."""
    try:
        stack = _listed_children(root_pid, proc)
    except (OSError, ValueError):
        return descendants(root_pid, proc)
    found = []
    while stack:
        pid = stack.pop()
        found.append(pid)
        try:
            stack.extend(_listed_children(pid, proc))
        except (OSError, ValueError):
            continue  # gone meanwhile
    return found


def tree_usage(root_pid, members=None, proc=None):
    """``(cpu_seconds, running, others)`` for ``root_pid`` and everything it started
    (Linux): the live processes' own CPU time plus what the children they reaped
    spent, whether any of them is runnable now (on a CPU or waiting for one) rather
    than sleeping, and how many live processes there are besides ``root_pid``; None
    elsewhere. ``members``: those processes when a cgroup already knows them (else
    they are found from ``root_pid``); ``proc``: see :func:`_read_proc`."""
    if proc is None and not os.path.isdir("/proc"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total, running = 0, False
    others = _box_tree(root_pid, proc) if members is None else [pid for pid in members if pid != root_pid]
    for pid in [root_pid] + others:
        try:
            fields = _read_proc(f"{pid}/stat", proc).rsplit(b")", 1)[1].split()
            total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
            running = running or fields[0] == b"R"
        except (OSError, IndexError, ValueError):
            continue
    return total / tick, running, len(others)


def box_count(worker_pid, cgroup=None, proc=None):
    """A keeper's answer to the judge's ``cpu`` (:mod:`autograder.sandbox.call_clock`):
    ``cpu`` -- with ``whole`` true, the CPU time of every process the box ever ran
    (its cgroup's count); else only what its live processes and the children they
    reaped spent --, ``running`` (one is runnable now) and ``others`` (how many live
    processes it holds besides the worker). ``cpu`` None: nothing could be counted."""
    usage = tree_usage(worker_pid, cgroup.members() if cgroup is not None else None, proc)
    if usage is None:
        return {"cpu": None}
    whole = cgroup.cpu_seconds() if cgroup is not None else None
    cpu, running, others = usage
    return {"cpu": cpu if whole is None else whole, "running": running, "whole": whole is not None,
            "others": others}


def kill_descendants(root_pid=None):
    """Kill every descendant of ``root_pid`` (default: this process) and reap
    what we can. Linux only; elsewhere workers are killed by process group."""
    root_pid = os.getpid() if root_pid is None else root_pid
    killed = 0
    for _ in range(5):  # a fork bomb may add children while we sweep
        found = descendants(root_pid)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        reap_children()
    return killed


def reap_children():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def describe_status(status):
    """How a process ended (a ``waitpid`` status), in the words the judge shows."""
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.WEXITSTATUS(status)}"


def watch_fd(pid):
    """A descriptor readable once child ``pid`` has ended (a pidfd), or None where
    there is none (not Linux, an old kernel): the caller then polls."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def kill_tree(pid):
    """SIGKILL ``pid``, its process group and every descendant (they may have
    left the group with setsid: found through /proc on Linux). Reaps only ``pid``'s
    orphans that were re-parented to us, never other children of this process."""
    for _ in range(3):  # a fork bomb may add processes while we sweep
        victims = descendants(pid)
        for victim in victims:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGKILL)
        if not victims:
            break
    with contextlib.suppress(OSError, AttributeError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
