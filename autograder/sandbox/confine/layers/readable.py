"""What a box may read: the system's folders and files, a few devices, and the
interpreter's folders -- never one that contains the grader.

The minimal root binds exactly these into the box (:mod:`.root`); Landlock
grants reading exactly these (:mod:`.landlock`): one list, so the two cannot
drift apart.
"""
import os
import sys

SYSTEM_READ_ONLY = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin",
                    "/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/localtime",
                    "/sys/devices/system/cpu")
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")


def interpreter_paths(forbidden):
    """Folders the interpreter reads modules from, none of which contains a
    ``forbidden`` folder (the grader): an entry that does is replaced by its
    other children."""
    candidates = [sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix]
    candidates += [entry for entry in sys.path if entry]
    try:
        import site
        candidates += site.getsitepackages()
        if site.ENABLE_USER_SITE:
            candidates.append(site.getusersitepackages())
    except Exception:  # noqa: BLE001 - a broken site module costs only these paths
        pass
    paths = []
    for candidate in candidates:
        candidate = os.path.realpath(candidate)
        if candidate == os.path.dirname(candidate):
            continue  # never the whole file system, whatever sys.path says
        if os.path.exists(candidate):
            for path in carve(candidate, [os.path.realpath(f) for f in forbidden]):
                if path not in paths:
                    paths.append(path)
    return paths


def carve(path, forbidden):
    """``path``, or where it contains a ``forbidden`` folder, its other descendants."""
    inside = [f for f in forbidden if f == path or f.startswith(path.rstrip(os.sep) + os.sep)]
    if not inside:
        return [path]
    if path in inside or not os.path.isdir(path):
        return []
    kept = []
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    for name in names:
        kept += carve(os.path.join(path, name), inside)
    return kept
