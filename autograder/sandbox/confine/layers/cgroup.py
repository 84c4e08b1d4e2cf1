"""Layer "cgroup" (as root): one memory bound, one process bound and an equal
CPU share for everything the box starts (:mod:`autograder.sandbox.confine.cgroups`).

Applied by the box's maker before it forks the worker: a keeper joins the
cgroup first, so the worker is born inside; the zygote (as root, it keeps its
boxes itself) makes it, and the worker joins it in its first instruction
(:mod:`autograder.sandbox.supervisor`). Either way nothing of the box is
ever outside it.

Facts: ``memory`` (the report's words for the bound), ``cpu`` (the CPU share's
words, None where no CPU controller could be set).
"""
import sys

from autograder.sandbox.confine import cgroups
from autograder.sandbox.confine.layers.result import applied, failed, not_available

LAYER = "cgroup"
HEADROOM_BYTES = 512 * 2**20  # the worker's own interpreter pages on top of the student's
EXTRA_TASKS = 32              # threads count as tasks for the pids controller


def make(config, name, join=True):
    """(The box's maker) ``(cgroup or None, result)``; ``join``: move this process in."""
    if not config.as_root or not sys.platform.startswith("linux"):
        return None, not_available(LAYER, "not root: each process bounded on its own")
    if config.disabled("cgroups"):
        return None, not_available(LAYER, "disabled for this run")
    lim = config.limits
    cgroup, problem = cgroups.box_cgroup(name, lim.memory_bytes + HEADROOM_BYTES,
                                         lim.max_processes + EXTRA_TASKS, join=join)
    if cgroup is None:
        return None, failed(LAYER, problem, problems=[problem])
    memory = (f"{cgroup.kind}: at most {(lim.memory_bytes + HEADROOM_BYTES) // 2**20} MiB for the whole box "
              f"(all its processes, files and shared memory together), at most {lim.max_processes} processes")
    return cgroup, applied(LAYER, memory, memory=memory, cpu=cgroup.cpu)
