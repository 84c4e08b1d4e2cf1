"""A seccomp filter for the box: the kernel refuses the system calls student
code has no business making, whatever it has managed to see.

Built with ``pyseccomp`` (PyPI: ctypes over the system's libseccomp, the same
API as libseccomp's own Python binding) rather than hand-written BPF:
libseccomp knows every architecture's syscall numbers and compiles the rules.
Chosen over Debian's ``python3-seccomp`` because that one only installs for
the system interpreter, not into the grader's virtual environment; bubblewrap
was not used because it is a separate program the zygote model (fork, then
confine) cannot use without giving up the clean fork.

Refused (``EPERM``, so that honest libraries see an ordinary error):

* every new socket, and ``connect``/``bind``/``listen``/``accept`` on any
  socket: the box keeps only the channel it was given (``socketpair`` stays
  allowed: a connected pair reaches nothing outside the box);
* ``memfd_create`` and ``memfd_secret``: memory that no address-space limit sees;
* ``ptrace``, ``process_vm_readv``/``writev``, ``pidfd_getfd``, ``kcmp``;
* ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring_*`` (which could
  make socket calls the filter never sees), ``keyctl``/``add_key``/``request_key``;
* ``mount`` and the new mount API, ``pivot_root``, ``chroot``, ``unshare``,
  ``setns``, and ``clone`` with any namespace flag (``clone3`` answers
  ``ENOSYS``: its flags live in memory a filter cannot read, and C libraries
  then fall back to ``clone``);
* kernel modules, kexec, swap, reboot, ``iopl``/``ioperm``.

Calls of another architecture's ABI (32-bit calls on x86-64) kill the process
(libseccomp's default for a foreign architecture).
"""
import ctypes
import errno
import os
import tempfile

try:
    import pyseccomp as seccomp
except (ImportError, OSError, RuntimeError) as exc:  # RuntimeError, OSError: no libseccomp.so.2
    seccomp = None
    MISSING = f"{type(exc).__name__}: {exc}"
else:
    MISSING = None

REFUSED = (
    "socket", "connect", "bind", "listen", "accept", "accept4",
    "memfd_create", "memfd_secret",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key",
    "mount", "umount2", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
    "mount_setattr", "pivot_root", "chroot", "unshare", "setns",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "swapon", "swapoff", "reboot", "iopl", "ioperm", "acct", "quotactl", "syslog",
)
CLONE_NAMESPACE_FLAGS = (0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
                         0x20000000, 0x40000000)  # NEWTIME, NEWNS, NEWCGROUP, UTS, IPC, USER, PID, NET


def available():
    return seccomp is not None


_COMPILED = None  # (the filter as BPF, its report line), compiled once by prepare()
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


class _SockFprog(ctypes.Structure):  # struct sock_fprog: the kernel reads 8-byte instructions
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _rules():
    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    skipped = []
    for name in REFUSED:
        try:
            rules.add_rule(refuse, name)
        except (OSError, ValueError, RuntimeError):
            skipped.append(name)  # unknown to this libseccomp or architecture
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    try:
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    except (OSError, ValueError, RuntimeError):
        skipped.append("clone3")
    text = "seccomp: no new sockets, memfd, ptrace, bpf, mounts or namespaces"
    return rules, text + (f" (unknown here: {', '.join(skipped)})" if skipped else "")


def prepare():
    """(The zygote, once) Compile the filter to BPF with libseccomp, so that each
    box only loads it: building it again is most of what installing it costs."""
    global _COMPILED
    if seccomp is None:
        return
    rules, text = _rules()
    with tempfile.TemporaryFile() as program:
        rules.export_bpf(program)
        program.seek(0)
        _COMPILED = (program.read(), text)


def compiled():
    """The BPF program :func:`prepare` compiled, or None."""
    return _COMPILED[0] if _COMPILED is not None else None


def load_program(program):
    """Load a compiled filter the way libseccomp's ``seccomp_load`` does with its
    default attributes: no new privileges, then the filter, no flags."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # a handle of its own: argtypes set here only
    prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    address = ctypes.cast(ctypes.pointer(fprog), ctypes.c_void_p).value
    for args in ((_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), (_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, address, 0, 0)):
        if prctl(*args) != 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))


def install():
    """Load the filter on this process (and everything it will start); returns a
    line for the isolation report. Raises OSError when the kernel refuses it."""
    if seccomp is None:
        raise OSError(errno.ENOSYS, f"no libseccomp binding ({MISSING})")
    if _COMPILED is not None:
        load_program(_COMPILED[0])
        return _COMPILED[1]
    rules, text = _rules()
    rules.load()
    return text
