"""A uid of its own for each student, when the grader runs as root.

Any unused uid will do (no passwd entry is needed): it owns nothing on the
machine, shares no process with anyone, and its process count limit starts
from zero. Uids are drawn from a range far above the ones distributions hand
out, and checked against /etc/passwd and the running processes; the batch
parent hands distinct ones to the students it grades at the same time.
"""
import os
import secrets

FIRST, SPAN = 1_900_000_000, 100_000_000


def running_as_root():
    """Root of the machine: uid 0 in the initial user namespace, able to become
    any uid (root inside a container's user namespace usually is not)."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return False
    try:
        with open("/proc/self/uid_map") as mapping:
            return mapping.read().split() == ["0", "0", "4294967295"]
    except OSError:
        return os.name == "posix" and not os.path.exists("/proc")  # e.g. BSD, macOS root


def _passwd_ids():
    ids = set()
    for name in ("/etc/passwd", "/etc/group"):
        try:
            with open(name, encoding="utf-8", errors="replace") as table:
                for line in table:
                    fields = line.split(":")
                    if len(fields) > 2 and fields[2].isdigit():
                        ids.add(int(fields[2]))
        except OSError:
            pass
    return ids


def _processes():
    """``{pid: real uid}`` of the live processes (Linux), else {}."""
    found = {}
    if not os.path.isdir("/proc"):
        return found
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:  # raw bytes: a batch looks once per student, with its boxes running
                fd = os.open(f"/proc/{entry}/status", os.O_RDONLY)
                try:
                    status = os.read(fd, 8192)
                finally:
                    os.close(fd)
                start = status.index(b"\nUid:") + 5
                found[int(entry)] = int(status[start:status.index(b"\n", start)].split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return found


def processes_of(uid):
    """Pids of live processes whose real uid is ``uid`` (Linux), else []."""
    return [pid for pid, owner in _processes().items() if owner == uid]


def allocate(count=1):
    """``count`` distinct unused uids (as root), or ``[None] * count`` otherwise:
    in no passwd or group entry, run by no process (one look at /proc for all)."""
    if not running_as_root():
        return [None] * count
    known = _passwd_ids() | set(_processes().values())
    chosen = []
    while len(chosen) < count:
        uid = FIRST + secrets.randbelow(SPAN)
        if uid not in chosen and uid not in known:
            chosen.append(uid)
    return chosen


def kill_leftovers(uid):
    """Kill whatever still runs as ``uid``; returns how many there were."""
    import signal

    if uid is None:
        return 0
    leftovers = processes_of(uid)
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return len(leftovers)
