"""Layer "code seal": machine code a module's guard names is made to end the box
with ``EXIT_SEALED`` before the module is imported
(:mod:`autograder.sandbox.confine.code_seal`).

It holds only under what follows it: the syscall filter refusing new executable
memory (so it is applied only where that filter will be), and Landlock keeping
``/proc/<pid>/mem`` read-only. It comes before both: the seal itself makes
memory executable, and reads ``/proc/self/maps``.
Facts: ``what`` (the guard's words), ``count`` (functions sealed).
"""
import sys

from autograder.sandbox.confine import code_seal, syscall_filter
from autograder.sandbox.confine.layers.result import applied, failed, not_available


def seal(box):
    request = box.config.sealed
    if not request:
        return not_available("code seal", "nothing to seal")
    if not (sys.platform.startswith("linux") and not box.config.disabled("seccomp") and syscall_filter.available()):
        return not_available("code seal", "no syscall filter would keep it sealed")
    try:
        count = code_seal.seal(request.addresses)
    except OSError as exc:
        why = f"{exc.strerror or exc}"
        return failed("code seal", why, problems=[f"code seal ({request.what}): {why}; "
                                                  "only the guard in the box's own interpreter stands"])
    problems = [f"code seal: writable or shared executable memory at {mapping}" for mapping in code_seal.open_code()]
    return applied("code seal", f"{request.what} ({count} functions)", problems, what=request.what, count=count)
