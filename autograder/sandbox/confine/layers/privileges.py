"""Layers "own uid" and "capabilities": never root with student code.

* own uid (as root): no supplementary groups, then the student's uid and gid of
  its own (real, effective and saved); every capability goes with the switch.
  Where it cannot be done the box refuses to run student code.
* capabilities (without root, in a user namespace): every capability dropped,
  the bounding set included. A process that would still be uid 0 without a user
  namespace refuses to run student code.

Both come after the mounts, which need the privileges they take away.
Facts of "own uid": ``uid`` (the uid student code runs as).
"""
import os

from autograder.sandbox.confine import namespaces
from autograder.sandbox.confine.layers.result import applied, failed, not_available, refused


def own_uid(box):
    config = box.config
    if not config.as_root:
        return not_available("own uid", "the judge is not root: the grading user's uid", uid=os.geteuid())
    try:
        namespaces.become(config.uid, config.gid)
    except OSError as exc:
        why = f"could not drop root privileges: {exc}"
        return refused("own uid", why, problems=[why])
    return applied("own uid", f"uid {config.uid} of its own", uid=config.uid)


def capabilities(box):
    if box.config.as_root:
        return not_available("capabilities", "none left after the uid change")
    in_user_namespace = bool(box.fact("namespaces", "flags", 0) & namespaces.CLONE_NEWUSER)
    if os.geteuid() == 0 and not in_user_namespace:
        why = "uid 0 without a user namespace to drop its capabilities"
        return refused("capabilities", why, problems=[why])
    if not in_user_namespace:
        return not_available("capabilities", "no user namespace: the grading user's own, none to drop")
    try:
        namespaces.drop_capabilities()
    except OSError as exc:
        return failed("capabilities", str(exc), problems=[f"dropping capabilities: {exc}"])
    return applied("capabilities", "no capabilities")
