"""Linux namespaces, mounts and capabilities for one box, through ctypes.

A box keeper calls :func:`enter_namespaces` (a user namespace first when it is
not root), then forks the worker, which becomes PID 1 of a fresh PID
namespace: when it dies the kernel kills everything it started, however it
forked. The worker then shapes its private mount namespace (everything
read-only, a size-limited tmpfs as its only writable folder, a /proc that
shows only its own processes, the grader's folders covered) and drops every
capability before any student code runs.

Each step reports what it achieved instead of raising: a kernel or a
distribution may refuse any of them (Ubuntu restricts unprivileged user
namespaces through AppArmor), and the caller records what held.
"""
import ctypes
import os

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
_SYS_MOUNT_SETATTR = 442
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_DUMPABLE = 1, 24, 4
_CAP_VERSION_3 = 0x20080522


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_LIBC = None


def libc():
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.syscall.restype = ctypes.c_long
        _LIBC.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                                ctypes.c_char_p]
        _LIBC.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return _LIBC


def _check(result, what):
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _bytes(value):
    return None if value is None else os.fsencode(value)


def mount(source, target, fstype, flags=0, data=None):
    _check(libc().mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data)),
           f"mount {target}")


def unmount(target):
    _check(libc().umount2(_bytes(target), MNT_DETACH), f"umount {target}")


def _write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def unshare(flags):
    _check(libc().unshare(ctypes.c_int(flags)), "unshare")


def setns(fd, nstype):
    _check(libc().setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def enter_namespaces(as_root):
    """Unshare what this process may; returns ``(flags, problems)``.

    As root: mount, PID, network and IPC namespaces (no user namespace, so that
    the worker can become a uid of its own). Otherwise a user namespace comes
    first, mapping our own uid and gid onto themselves, and gives the rights to
    create the others inside it.
    """
    wanted = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
    problems = []
    if as_root:
        try:
            unshare(wanted)
            return wanted, problems
        except OSError as exc:
            problems.append(f"namespaces: {exc.strerror}")
            return 0, problems
    uid, gid = os.geteuid(), os.getegid()
    try:
        unshare(CLONE_NEWUSER | wanted)
    except OSError as exc:
        problems.append(f"user namespace: {exc.strerror} (unprivileged user namespaces are "
                        f"disabled or restricted on this machine)")
        return 0, problems
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    except OSError as exc:
        problems.append(f"user namespace id map: {exc.strerror}")
    return CLONE_NEWUSER | wanted, problems


def die_with_parent(signum=9):
    """This process gets ``signum`` (by default it is killed) when its parent dies,
    whatever the parent died of: a worker when its keeper does."""
    libc().prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)


def make_private():
    mount(None, "/", None, MS_REC | MS_PRIVATE)


def read_only_everything():
    """Every mount this namespace sees becomes read-only, nosuid and nodev."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV, 0, 0, 0)
    result = libc().syscall(ctypes.c_long(_SYS_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), b"/",
                            ctypes.c_uint(_AT_RECURSIVE), ctypes.byref(attr),
                            ctypes.c_size_t(ctypes.sizeof(attr)))
    if result == 0:
        return
    # Kernels before 5.12: remount each mount point read-only, deepest last.
    with open("/proc/self/mountinfo") as info:
        points = [line.split()[4] for line in info]
    for point in points:
        point = point.encode().decode("unicode_escape")  # \040 for spaces
        try:
            mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        except OSError:
            pass


def mount_scratch(path, size_bytes, uid, gid):
    """A tmpfs of at most ``size_bytes`` at ``path``, owned by the student."""
    options = f"size={int(size_bytes)},nr_inodes=4096,mode=0700,uid={uid},gid={gid}"
    mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, options)


def mount_proc():
    """A /proc that lists only this PID namespace's processes."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def cover(path):
    """Hide a folder behind an empty, read-only tmpfs."""
    mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")


def _searchable_by(info, uid, gid):
    if info.st_uid == uid:
        return bool(info.st_mode & 0o100)
    if info.st_gid == gid:
        return bool(info.st_mode & 0o010)
    return bool(info.st_mode & 0o001)


def expose_for_others(needed_paths, staging, uid, gid):
    """Make ``needed_paths`` reachable by ``uid`` although a folder above
    them is not searchable by it (a Python under /root, mode 0700).

    Each such folder is covered by a world-searchable tmpfs into which only the
    children that lead to a needed path are bound back; the rest of the folder
    stays invisible. Runs as root, in a private mount namespace, before the
    uid changes. Returns the folders it had to open up.
    """
    opened = []
    for _ in range(8):  # nested blocked folders are opened one level per round
        blocked = {}
        for needed in needed_paths:
            parts = os.path.abspath(needed).split(os.sep)[1:]
            current = "/"
            for index, part in enumerate(parts):
                try:
                    info = os.stat(current)
                except OSError:
                    break
                if not _searchable_by(info, uid, gid):
                    blocked.setdefault(current, set()).add(part)
                    break
                current = os.path.join(current, part)
                if index == len(parts) - 1:
                    break
        if not blocked:
            return opened
        for folder, children in sorted(blocked.items()):
            holder = os.path.join(staging, f"exposed{len(opened)}")
            os.mkdir(holder, 0o700)
            mount(folder, holder, None, MS_BIND | MS_REC)
            mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
            for child in sorted(children):
                source = os.path.join(holder, child)
                target = os.path.join(folder, child)
                if os.path.isdir(source):
                    os.mkdir(target, 0o755)
                else:
                    open(target, "w").close()
                mount(source, target, None, MS_BIND | MS_REC)
            unmount(holder)
            opened.append(folder)
    return opened


def drop_capabilities():
    """No capability is left in any set (bounding set included)."""
    lib = libc()
    for cap in range(64):
        if lib.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:  # EINVAL: past the last
            break
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(lib.capset(ctypes.byref(header), data), "capset")


def become(uid, gid):
    """Root to an unprivileged uid: all capabilities go with the switch."""
    os.setgroups([])
    if hasattr(os, "setresuid"):  # real, effective and saved ids at once
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    else:  # macOS: as root, setuid sets all three too
        os.setgid(gid)
        os.setuid(uid)


def not_dumpable():
    """Other processes of the same uid cannot ptrace or read our memory."""
    libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def dumpable():
    """Undo :func:`not_dumpable` (inherited from the zygote): a process writes its
    own /proc/self/uid_map, which a non-dumpable process does not own."""
    libc().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
