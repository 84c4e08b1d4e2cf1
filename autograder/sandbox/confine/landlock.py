"""A small ctypes binding for Landlock, the Linux LSM that lets an unprivileged
process restrict itself (kernel >= 5.13).

Why ctypes and not a package: the PyPI bindings we looked at either stop at
ABI 3 (no network or scope rules) or need a compiler at install time, and the
kernel interface is three syscalls and three structs, all listed below. The
rights a kernel knows grow with its ABI version, so :func:`abi_version` is
asked at run time and every request is cut down to what that ABI supports
("best effort", as the kernel documentation recommends).

Reference: Documentation/userspace-api/landlock.rst and
include/uapi/linux/landlock.h in the kernel tree.
"""
import ctypes
import os

# Syscall numbers are the same on every architecture (added after the unification).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

# File-system rights by the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1,
              5: (1 << 16) - 1}
# Rights that make sense on a file (not a directory): the kernel refuses others there.
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV

BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1          # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

READ_ONLY = EXECUTE | READ_FILE | READ_DIR
READ_WRITE = (1 << 16) - 1  # everything; cut down to the ABI


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class LandlockError(OSError):
    pass


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version():
    """The kernel's Landlock ABI (0 when Landlock is absent or disabled)."""
    try:
        libc = _libc()
    except OSError:
        return 0
    version = libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def fs_rights(abi):
    return _FS_BY_ABI.get(abi, _FS_BY_ABI[5]) if abi >= 1 else 0


class Ruleset:
    """Collect rules, then :meth:`restrict_self`. Paths that do not exist are skipped."""

    def __init__(self, abi=None):
        self.abi = abi_version() if abi is None else abi
        if self.abi < 1:
            raise LandlockError("Landlock is not available in this kernel")
        self.handled_fs = fs_rights(self.abi)
        self.handled_net = (BIND_TCP | CONNECT_TCP) if self.abi >= 4 else 0
        self.scoped = (SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL) if self.abi >= 6 else 0
        self._libc = _libc()
        attr = _RulesetAttr(self.handled_fs, self.handled_net, self.scoped)
        size = 8 if self.abi < 4 else 16 if self.abi < 6 else 24
        fd = self._libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), ctypes.byref(attr),
                                ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = int(fd)
        self.granted = []

    def allow(self, path, rights):
        """Allow ``rights`` beneath ``path`` (a folder) or on it (a file)."""
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            is_dir = os.path.isdir(f"/proc/self/fd/{target}")
            allowed = rights & self.handled_fs
            if not is_dir:
                allowed &= _FILE_RIGHTS
            if not allowed:
                return False
            attr = _PathBeneathAttr(allowed, target)
            result = self._libc.syscall(ctypes.c_long(_SYS_ADD_RULE), ctypes.c_int(self.fd),
                                        ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(attr),
                                        ctypes.c_uint32(0))
            if result < 0:
                raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            self.granted.append((path, allowed))
            return True
        finally:
            os.close(target)

    def restrict_self(self):
        """Enforce the rules on this thread and every process it starts; irreversible."""
        if self._libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        result = self._libc.syscall(ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(self.fd),
                                    ctypes.c_uint32(0))
        os.close(self.fd)
        if result < 0:
            raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")

    def summary(self):
        parts = [f"Landlock ABI {self.abi}: file system"]
        if self.handled_net:
            parts.append("TCP bind/connect")
        if self.scoped:
            parts.append("signals and abstract sockets scoped")
        return ", ".join(parts)
