"""Layer "syscall filter" (:mod:`autograder.sandbox.confine.syscall_filter`):
seccomp refuses new sockets, memfd, IPC, ptrace, mounts, namespaces and the
other calls docs/sandbox.md lists; after a seal, new executable memory and
programs too. Loading it also sets ``no_new_privs``.

Last: it refuses what the layers before it use (mount, ``pivot_root``,
``unshare``, new executable memory for the seal), and nothing but the
student's import comes after it.
"""
import sys

from autograder.sandbox.confine import syscall_filter as seccomp_filter
from autograder.sandbox.confine.layers.result import applied, failed, not_available


def syscall_filter(box):
    if not sys.platform.startswith("linux"):
        return not_available("syscall filter", "Linux only")
    if box.config.disabled("seccomp"):
        return not_available("syscall filter", "disabled for this run",
                             problems=["syscall filter: disabled for this run"])
    try:
        words = seccomp_filter.install(no_new_code=box.held("code seal"))
    except OSError as exc:
        why = f"{exc.strerror or exc}"
        return failed("syscall filter", why, problems=[f"syscall filter: {why}"])
    return applied("syscall filter", words)
