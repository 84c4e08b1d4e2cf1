"""Layers "cpu affinity" and "descriptors": the worker process as the box starts
from it.

* cpu affinity: the CPUs of the grading process that asked for the box (a batch
  pins each to one): a call and its answer then wake each other on one CPU
  instead of across two. Only CPUs this process may use count; a value that is
  not a CPU is ignored. Speed only: a box may change its own affinity, and
  nothing of its confinement depends on it.
* descriptors: every descriptor inherited from the zygote or the keeper (other
  boxes' sockets, the zygote's channels, a keeper's cgroup files) is closed; the
  box keeps its channel to the judge, its log and the pipe its report goes
  through.
"""
import os

from autograder.sandbox.confine.layers.result import applied, failed, not_available


def cpu_affinity(box):
    cpus = box.config.cpus
    if not cpus:
        return not_available("cpu affinity", "no CPUs asked for")
    if not hasattr(os, "sched_setaffinity"):
        return not_available("cpu affinity", "no CPU affinity on this platform")
    chosen = {cpu for cpu in cpus if type(cpu) is int} & os.sched_getaffinity(0)
    if not chosen:
        return not_available("cpu affinity", "none of the CPUs asked for may be used here")
    try:
        os.sched_setaffinity(0, chosen)
    except OSError as exc:
        return failed("cpu affinity", exc.strerror or str(exc))
    return applied("cpu affinity", f"CPUs {', '.join(map(str, sorted(chosen)))}", cpus=tuple(sorted(chosen)))


def descriptors(box):
    closed = 0
    for fd in _open_fds():
        if fd > 2 and fd not in box.keep_fds:
            try:
                os.close(fd)
                closed += 1
            except OSError:
                pass  # the listing's own descriptor, closed already
    return applied("descriptors", f"only its channel, log and report pipe ({closed} closed)", closed=closed)


def _open_fds():
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))
