"""A root file system built for one box, then entered with ``pivot_root``.

Read-only mounts and Landlock leave one hole: ``connect()`` to a pathname UNIX
socket is checked against neither, so any socket file a box can *see*
(``/run/docker.sock``, a D-Bus bus, journald, anything in ``/tmp``) answers it
with the rights of its uid and supplementary groups. The answer is the one
isolate, nsjail and bubblewrap give: the box gets a fresh, empty tmpfs as its
root holding only bind mounts of what it needs -- the interpreter's folders,
the student's one module, ``/dev/null``, ``zero``, ``urandom``, a few ``/etc``
files, its scratch tmpfs and a /proc of its own -- all read-only but the
scratch. No ``/run``, ``/var``, ``/tmp``, ``/home``, ``/dev/shm``, no grader, and
whatever group-owned files live elsewhere are simply not there.

Runs in the worker's private mount namespace (as root, or as root of a user
namespace), before the uid changes and before Landlock.
"""
import ctypes
import os
import platform

from autograder.sandbox.confine import namespaces

_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "ppc64le": 203,
               "ppc64": 203, "s390x": 217, "i686": 217, "i386": 217}
_ATTR_RDONLY, _ATTR_NOSUID, _ATTR_NODEV = 0x1, 0x2, 0x4


def _set_attributes(target, attributes, recursive=True):
    """Add mount attributes (never clears one: a user namespace may not)."""
    attr = namespaces._MountAttr(attributes, 0, 0, 0)
    result = namespaces.libc().syscall(
        ctypes.c_long(namespaces._SYS_MOUNT_SETATTR), ctypes.c_int(namespaces._AT_FDCWD),
        os.fsencode(target), ctypes.c_uint(namespaces._AT_RECURSIVE if recursive else 0),
        ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))
    if result == 0:
        return
    flags = namespaces.MS_REMOUNT | namespaces.MS_BIND  # kernels before 5.12
    flags |= namespaces.MS_RDONLY if attributes & _ATTR_RDONLY else 0
    flags |= namespaces.MS_NOSUID if attributes & _ATTR_NOSUID else 0
    flags |= namespaces.MS_NODEV if attributes & _ATTR_NODEV else 0
    namespaces.mount(None, target, None, flags)


def _pivot(new_root):
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(0, f"pivot_root: unknown architecture {platform.machine()}")
    os.chdir(new_root)
    # pivot_root(".", "."): the old root ends up stacked under the new one and
    # is detached at once (no folder for it needed).
    if namespaces.libc().syscall(ctypes.c_long(number), b".", b".") != 0:
        errno = ctypes.get_errno()
        os.chdir("/")
        raise OSError(errno, f"pivot_root: {os.strerror(errno)}")
    try:
        namespaces.unmount(".")
    except OSError as exc:  # the old root would still show: never run student code so
        raise RuntimeError(f"pivot_root: the old root could not be detached ({exc})") from None
    os.chdir("/")


class RootBuilder:
    """Collects bind mounts into ``new_root`` (a tmpfs mounted on an existing folder)."""

    def __init__(self, new_root):
        self.new_root = new_root.rstrip(os.sep)
        self.bound = []      # host paths now visible (real paths)
        self.missing = []    # requested but absent on this machine

    def _inside(self, path):
        return self.new_root + path

    def _walk(self, path):
        """The real path behind ``path``; each link on the way is recreated as the
        same link inside the new root, so paths through it resolve there too."""
        real = "/"
        for part in os.path.abspath(path).strip("/").split("/"):
            candidate = os.path.join(real, part)
            if os.path.islink(candidate):
                inside = self._inside(candidate)
                os.makedirs(os.path.dirname(inside), exist_ok=True)
                if not os.path.lexists(inside) and not self._covered(candidate):
                    os.symlink(os.readlink(candidate), inside)
                real = os.path.realpath(candidate)
            else:
                real = candidate
        return real

    def _covered(self, real):
        return any(real == done or real.startswith(done.rstrip(os.sep) + os.sep) for done in self.bound)

    def bind(self, path, device=False, at=None):
        """Make ``path`` visible read-only at the same place (or at ``at``); False when absent."""
        if not os.path.lexists(path):
            self.missing.append(path)
            return False
        real = self._walk(path)
        if not os.path.exists(real):
            self.missing.append(path)
            return False
        if at is None and self._covered(real):
            return True
        inside = self._inside(at or real)
        os.makedirs(os.path.dirname(inside), exist_ok=True)
        if os.path.isdir(real):
            os.makedirs(inside, exist_ok=True)
        elif not os.path.exists(inside):
            open(inside, "w").close()
        namespaces.mount(real, inside, None, namespaces.MS_BIND | namespaces.MS_REC)
        _set_attributes(inside, _ATTR_RDONLY | _ATTR_NOSUID | (0 if device else _ATTR_NODEV))
        if at is None:
            self.bound.append(real)
        return True

    def empty(self, path):
        """Cover a file already bound (a module guard's source file) with an empty one."""
        inside = self._inside(os.path.realpath(path))
        if not os.path.isfile(inside):
            return False
        blank = self._inside("/.empty")
        if not os.path.exists(blank):
            open(blank, "w").close()
            os.chmod(blank, 0o444)
        namespaces.mount(blank, inside, None, namespaces.MS_BIND)
        _set_attributes(inside, _ATTR_RDONLY | _ATTR_NOSUID | _ATTR_NODEV, recursive=False)
        return True

    def folder(self, path, mode=0o755):
        inside = self._inside(os.path.abspath(path))
        os.makedirs(inside, exist_ok=True)
        os.chmod(inside, mode)
        return inside


BOX = "/box"  # the student's module and scratch, wherever the judge keeps them
SUBMISSION, SCRATCH = BOX + "/submission", BOX + "/scratch"


def enter(new_root, read_only, devices, emptied, submission, scratch_bytes, uid, gid, proc):
    """Build the box's root on ``new_root`` and pivot into it: ``submission``
    appears at :data:`SUBMISSION` (read-only), a fresh tmpfs at :data:`SCRATCH`.

    Returns ``(builder, proc_mounted, problems)``. Raises OSError when the root
    could not be entered: nothing of it is left mounted, and the caller falls
    back to the whole, read-only file system and reports it."""
    namespaces.mount("tmpfs", new_root, "tmpfs", namespaces.MS_NOSUID | namespaces.MS_NODEV,
                     "size=1m,nr_inodes=4096,mode=0755")
    try:
        builder, proc_mounted, problems = _populate(new_root, read_only, devices, emptied, submission,
                                                    scratch_bytes, uid, gid, proc)
        _set_attributes(new_root, _ATTR_RDONLY | _ATTR_NOSUID | _ATTR_NODEV, recursive=False)
        _pivot(new_root)
    except OSError:
        namespaces.unmount(new_root)
        raise
    return builder, proc_mounted, problems


def _populate(new_root, read_only, devices, emptied, submission, scratch_bytes, uid, gid, proc):
    problems = []
    builder = RootBuilder(new_root)
    builder.folder(BOX)
    builder.bind(submission, at=SUBMISSION)
    for path, device in [(path, False) for path in read_only] + [(path, True) for path in devices]:
        try:
            builder.bind(path, device=device)
        except OSError as exc:
            problems.append(f"minimal root: {path}: {exc.strerror or exc}")
    for path in emptied:
        builder.empty(path)
    namespaces.mount_scratch(builder.folder(SCRATCH, 0o700), scratch_bytes, uid, gid)
    proc_mounted = False
    if proc:
        try:
            namespaces.mount("proc", builder.folder("/proc", 0o555), "proc",
                             namespaces.MS_NOSUID | namespaces.MS_NODEV | namespaces.MS_NOEXEC)
            proc_mounted = True
        except OSError as exc:
            problems.append(f"/proc of its own: {exc.strerror}")
    return builder, proc_mounted, problems
