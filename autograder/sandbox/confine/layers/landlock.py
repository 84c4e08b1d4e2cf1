"""Layer "Landlock" (:mod:`autograder.sandbox.confine.landlock`): reading what the
box may read (:mod:`.readable`) and its own module, writing its scratch only,
a few devices; no TCP (ABI >= 4); signals and abstract sockets kept inside
the box (ABI >= 6). Cut down to the kernel's ABI at run time.

After the mounts (a Landlock domain may no longer mount or ``pivot_root``) and
the seal (it keeps ``/proc/<pid>/mem`` read-only), before the filter.
Facts: ``abi``.
"""
import sys

from autograder.sandbox.confine import landlock as kernel_landlock
from autograder.sandbox.confine.layers import root
from autograder.sandbox.confine.layers.readable import DEVICES, SYSTEM_READ_ONLY
from autograder.sandbox.confine.layers.result import applied, failed, not_available


def landlock(box):
    if not sys.platform.startswith("linux"):
        return not_available("Landlock", "Linux only", problems=["Landlock: Linux only"], abi=0)
    if box.config.disabled("landlock"):
        return not_available("Landlock", "disabled for this run", problems=["Landlock: disabled for this run"],
                             abi=0)
    abi = kernel_landlock.abi_version()
    if abi < 1:
        return not_available("Landlock", "not available in this kernel",
                             problems=["Landlock: not available in this kernel"], abi=0)
    try:
        rules = kernel_landlock.Ruleset(abi)
        for path in box.interpreter + list(SYSTEM_READ_ONLY):
            rules.allow(path, kernel_landlock.READ_ONLY)
        rules.allow(box.submission, kernel_landlock.READ_FILE | kernel_landlock.READ_DIR)
        for device in DEVICES:
            rules.allow(device, kernel_landlock.READ_FILE | kernel_landlock.WRITE_FILE)
        if root.mounted(box, "proc"):
            rules.allow("/proc", kernel_landlock.READ_FILE | kernel_landlock.READ_DIR)
        if root.mounted(box, "scratch"):
            rules.allow(box.scratch, kernel_landlock.READ_WRITE)
        rules.restrict_self()
    except OSError as exc:
        return failed("Landlock", str(exc), problems=[f"Landlock: {exc}"], abi=abi)
    return applied("Landlock", rules.summary(), abi=abi)
