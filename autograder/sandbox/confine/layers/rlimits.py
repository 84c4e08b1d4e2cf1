"""Layer "rlimits": each process of the box bounded on its own
(:mod:`autograder.sandbox.confine.limits`): address space on top of what the
worker maps now, CPU seconds, processes, file size, open files, pending
signals, no core files, no POSIX message queue bytes; and without a cgroup's
CPU share, a lower priority.

After the uid change: the process count (``RLIMIT_NPROC``) counts the processes
of the uid, which for a uid of its own start from none.
Facts: ``limits`` (the box's :class:`BoxLimits`), ``nice``.
"""
from autograder.sandbox.confine import limits
from autograder.sandbox.confine.layers.result import applied, not_available

NICE = 10  # without a cgroup: a box's processes yield to the judge and to honest neighbours


def rlimits(box):
    lim = box.config.limits
    nice = 0 if box.fact("cgroup", "cpu") else NICE  # a cgroup gives each box an equal CPU share
    if limits.resource is None:
        return not_available("rlimits", "no resource limits on this platform", limits=lim, nice=0)
    limits.apply_limits(lim.memory_bytes, lim.cpu_seconds, lim.max_processes, lim.max_file_bytes,
                        own_uid=box.config.as_root, open_files=lim.max_open_files, nice=nice)
    return applied("rlimits", f"{lim.memory_bytes // 2**20} MiB more address space and {lim.cpu_seconds} s "
                   f"of CPU per process, {lim.max_processes} processes, nice {nice}", limits=lim, nice=nice)
