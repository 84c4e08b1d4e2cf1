"""Layer "namespaces": a PID namespace (the worker is its PID 1: when it dies the
kernel kills everything the box started), an empty network namespace, its own
mount and IPC namespaces, and without root a user namespace first
(:mod:`autograder.sandbox.confine.namespaces`).

Applied before the worker runs: a new PID namespace holds only the children of
the process that asked for it, so the box's maker enters it before it forks the
worker. A keeper enters all of them (:func:`enter`); as root the zygote asks for
the PID namespace alone and the worker enters the others first thing
(:func:`enter_rest`).

Facts: ``flags`` (the ``CLONE_NEW*`` flags of the namespaces the worker is in).
"""
import os
import sys

from autograder.sandbox.confine import namespaces
from autograder.sandbox.confine.layers.result import applied, failed, not_available

LAYER = "namespaces"
REST = namespaces.CLONE_NEWNS | namespaces.CLONE_NEWNET | namespaces.CLONE_NEWIPC
NAMES = ((namespaces.CLONE_NEWUSER, "user"), (namespaces.CLONE_NEWPID, "PID"), (namespaces.CLONE_NEWNS, "mount"),
         (namespaces.CLONE_NEWNET, "network"), (namespaces.CLONE_NEWIPC, "IPC"))


def enter(config):
    """(A keeper, before it forks the worker) Enter every namespace this process may."""
    if config.disabled("namespaces"):  # tests of the degraded paths
        return not_available(LAYER, "disabled for this run", problems=["namespaces: disabled for this run"], flags=0)
    if not sys.platform.startswith("linux"):
        return not_available(LAYER, "Linux only", problems=["namespaces: Linux only"], flags=0)
    return held(*namespaces.enter_namespaces(config.as_root))


def enter_rest():
    """(The worker, PID 1 of the namespace the zygote made for it) The others."""
    flags = namespaces.CLONE_NEWPID if os.getpid() == 1 else 0
    problems = []
    try:
        namespaces.unshare(REST)
        flags |= REST
    except OSError as exc:
        problems.append(f"namespaces: {exc.strerror}")
    return held(flags, problems)


def held(flags, problems):
    """The result for a worker in the namespaces of ``flags``."""
    if not flags:
        return failed(LAYER, "; ".join(problems) or "none entered", problems=problems, flags=0)
    return applied(LAYER, ", ".join(name for flag, name in NAMES if flags & flag), problems=problems, flags=flags)
