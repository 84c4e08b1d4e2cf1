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


def _children_map():
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return children


def children(pid):
    """Direct children of ``pid`` (Linux), else []: from the kernel's list of
    each of its threads' children where there is one, else by a walk of /proc."""
    if not os.path.isdir("/proc"):
        return []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        found = []
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as listed:
                found += [int(child) for child in listed.read().split()]
        return found
    except (OSError, ValueError):
        return _children_map().get(pid, [])


def descendants(root_pid):
    """Every live descendant of ``root_pid`` (Linux, through /proc), else []."""
    if not os.path.isdir("/proc"):
        return []
    children = _children_map()
    stack, found = list(children.get(root_pid, [])), []
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def tree_usage(root_pid, members=None):
    """``(cpu_seconds, running)`` for ``root_pid`` and everything it started
    (Linux): the live processes' own CPU time plus what their reaped children
    spent, and whether any of them is runnable now (on a CPU or waiting for
    one) rather than sleeping; None elsewhere. ``members``: those processes
    when a cgroup already knows them (else /proc is walked for them)."""
    if not os.path.isdir("/proc"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total, running = 0, False
    others = descendants(root_pid) if members is None else [pid for pid in members if pid != root_pid]
    for pid in [root_pid] + others:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
            running = running or fields[0] == b"R"
        except (OSError, IndexError, ValueError):
            continue
    return total / tick, running


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
