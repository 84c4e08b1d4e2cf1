"""Layers "private mounts", "minimal root" and "read-only tree": what the box's
file system is, in its own mount namespace.

* private mounts: no mount the box makes propagates to the machine, none the
  machine makes reaches the box.
* minimal root (:mod:`autograder.sandbox.confine.minimal_root`): an empty tmpfs
  holding read-only binds of what the box reads (:mod:`.readable`), the
  student's module at ``/box/submission``, its scratch tmpfs and a /proc of its
  own, entered with ``pivot_root``. No socket file is in sight.
* read-only tree, only where the minimal root failed: the machine's tree,
  read-only, the grader's folders covered, a scratch tmpfs and a /proc of its own.

Facts of the two roots: ``proc`` (a /proc of its own mounted), ``scratch`` (the
scratch tmpfs mounted); of the minimal root also ``bound`` (how many folders and
files) and ``submission``/``scratch_path`` (where the box sees them).
"""
import os

from autograder.sandbox.confine import minimal_root, namespaces
from autograder.sandbox.confine.layers.readable import DEVICES, SYSTEM_READ_ONLY
from autograder.sandbox.confine.layers.result import applied, failed, not_available

ROOTS = ("minimal root", "read-only tree")


def own_mounts(box):
    return bool(box.fact("namespaces", "flags", 0) & namespaces.CLONE_NEWNS)


def own_pids(box):
    return bool(box.fact("namespaces", "flags", 0) & namespaces.CLONE_NEWPID)


def mounted(box, what):
    """Whether either root mounted ``what`` ("proc" or "scratch")."""
    return any(box.fact(layer, what, False) for layer in ROOTS)


def _owner(config):
    return (config.uid if config.uid is not None else os.geteuid(),
            config.gid if config.gid is not None else os.getegid())


def private_mounts(box):
    if not own_mounts(box):
        return not_available("private mounts", "no mount namespace of its own")
    try:
        namespaces.make_private()
    except OSError as exc:
        return failed("private mounts", str(exc), problems=[f"mounts: {exc}"])
    return applied("private mounts", "no mount propagates in or out")


def minimal(box):
    config = box.config
    if not own_mounts(box):
        return not_available("minimal root", "no mount namespace of its own")
    if config.disabled("minimal_root"):
        return not_available("minimal root", "disabled for this run",
                             problems=["minimal root: disabled for this run"])
    try:
        root, proc_mounted, problems = minimal_root.enter(
            config.scratch, box.interpreter + list(SYSTEM_READ_ONLY), DEVICES, config.emptied, config.submission,
            config.limits.scratch_bytes, *_owner(config), proc=own_pids(box))
    except OSError as exc:
        why = f"{exc} (the whole file system stays visible, read-only)"
        return failed("minimal root", why, problems=[f"minimal root: {why}"])
    return applied("minimal root", f"minimal (pivot_root): {len(root.bound)} read-only folders and files, "
                   f"scratch, /proc of its own", problems, bound=len(root.bound), proc=proc_mounted, scratch=True,
                   submission=minimal_root.SUBMISSION, scratch_path=minimal_root.SCRATCH)


def read_only_tree(box):
    if not own_mounts(box):
        return not_available("read-only tree", "no mount namespace of its own")
    if box.held("minimal root"):
        return not_available("read-only tree", "the minimal root holds")
    config = box.config
    uid, gid = _owner(config)
    problems, proc_mounted = [], False
    try:
        if config.as_root:  # a Python under a folder the student's uid cannot enter (/root)
            namespaces.mount("tmpfs", config.scratch, "tmpfs", 0, "size=1m,mode=0700")
            try:
                namespaces.expose_for_others(box.interpreter + [config.submission], config.scratch, uid, gid)
            finally:
                namespaces.unmount(config.scratch)
        for path in config.hide:
            if os.path.isdir(path):
                try:
                    namespaces.cover(path)
                except OSError as exc:
                    problems.append(f"cover {path}: {exc.strerror}")
        if own_pids(box):
            try:
                namespaces.mount_proc()
                proc_mounted = True
            except OSError as exc:
                problems.append(f"/proc of its own: {exc.strerror}")
        namespaces.read_only_everything()
        namespaces.mount_scratch(config.scratch, config.limits.scratch_bytes, uid, gid)
    except OSError as exc:
        return failed("read-only tree", str(exc), problems=problems + [f"mounts: {exc}"], proc=proc_mounted,
                      scratch=False)
    return applied("read-only tree", "the machine's, read-only", problems, proc=proc_mounted, scratch=True)
