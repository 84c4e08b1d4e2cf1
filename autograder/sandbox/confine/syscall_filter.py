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
  socket: the box keeps only the channel it was given;
* kernel objects that hold memory no address-space limit sees (without root no
  cgroup adds them up): ``memfd_create``/``memfd_secret``; System V shared
  memory, message queues and semaphores (``shmget``, ``msgget``, ``semget``
  and the rest, ``ipc`` where it exists) and POSIX message queues
  (``mq_open``...); ``socketpair`` (socket buffers, and descriptors in flight
  outside ``RLIMIT_NOFILE``); ``epoll`` (watches grow with descriptors squared),
  ``inotify``/``fanotify`` (per-user limits of the whole machine); ``splice``,
  ``tee``, ``vmsplice`` (pages pinned in pipes); Linux AIO (``io_setup``...);
  record locks (``fcntl`` ``F_SETLK``/``F_SETLKW``/``F_OFD_*``: one kernel
  object per locked byte range, unlimited) and ``F_SETPIPE_SZ`` (pipes stay at
  their default 64 KiB). What stays (pipes, ``eventfd``, ``timerfd``,
  ``signalfd``, flock) costs at most a pipe buffer or less per descriptor, and
  descriptors, processes, pending signals and POSIX timers are bounded by the
  box's rlimits (:mod:`limits`);
* ``ptrace``, ``process_vm_readv``/``writev``, ``pidfd_getfd``, ``kcmp``;
* ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring_*`` (which could
  make socket calls the filter never sees), ``keyctl``/``add_key``/``request_key``;
* ``mount`` and the new mount API, ``pivot_root``, ``chroot``, ``unshare``,
  ``setns``, and ``clone`` with any namespace flag (``clone3`` answers
  ``ENOSYS``: its flags live in memory a filter cannot read, and C libraries
  then fall back to ``clone``);
* kernel modules, kexec, swap, reboot, ``iopl``/``ioperm``.

A box whose guard sealed code (:mod:`code_seal`) also gets no new executable
memory: ``mmap``/``mprotect``/``pkey_mprotect`` with ``PROT_EXEC``,
``personality(READ_IMPLIES_EXEC)``, ``remap_file_pages``, ``execve``/``execveat``.

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
    "socket", "connect", "bind", "listen", "accept", "accept4", "socketpair",
    "memfd_create", "memfd_secret",
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl", "ipc",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    "epoll_create", "epoll_create1", "inotify_init", "inotify_init1", "inotify_add_watch",
    "fanotify_init", "fanotify_mark", "splice", "tee", "vmsplice",
    "io_setup", "io_submit", "io_cancel", "io_getevents", "io_pgetevents", "io_destroy",
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
# fcntl commands: F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW, F_SETPIPE_SZ
FCNTL_REFUSED = (6, 7, 37, 38, 1031)
# with sealed code: no new executable memory, no new program
NO_NEW_CODE = ("execve", "execveat", "remap_file_pages")
PROT_EXEC, READ_IMPLIES_EXEC = 0x4, 0x0400000
TEXT = "seccomp: no new sockets, memfd, System V or POSIX IPC, ptrace, bpf, mounts or namespaces"
NO_NEW_CODE_TEXT = "no new executable memory or programs"


def available():
    return seccomp is not None


_COMPILED = {}  # no_new_code -> (the filter as BPF, its report line), compiled once by prepare()
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


class _SockFprog(ctypes.Structure):  # struct sock_fprog: the kernel reads 8-byte instructions
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _refuse(rules, action, name, skipped, *conditions):
    try:
        rules.add_rule(action, name, *conditions)
    except (OSError, ValueError, RuntimeError):
        if name not in skipped:
            skipped.append(name)  # unknown to this libseccomp or architecture


def _rules(no_new_code=False):
    refuse = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    skipped = []
    for name in REFUSED + (NO_NEW_CODE if no_new_code else ()):
        _refuse(rules, refuse, name, skipped)
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    for command in FCNTL_REFUSED:
        _refuse(rules, refuse, "fcntl", skipped, seccomp.Arg(1, seccomp.EQ, command))
    if no_new_code:
        for name in ("mmap", "mprotect", "pkey_mprotect"):
            _refuse(rules, refuse, name, skipped, seccomp.Arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
        _refuse(rules, refuse, "personality", skipped,
                seccomp.Arg(0, seccomp.MASKED_EQ, READ_IMPLIES_EXEC, READ_IMPLIES_EXEC))
    _refuse(rules, seccomp.ERRNO(errno.ENOSYS), "clone3", skipped)
    # "ipc" multiplexes System V IPC only where the architecture has it (not x86-64, aarch64)
    skipped = [name for name in skipped if name != "ipc"]
    text = TEXT + (f"; {NO_NEW_CODE_TEXT}" if no_new_code else "")
    return rules, text + (f" (unknown here: {', '.join(skipped)})" if skipped else "")


def prepare():
    """(The zygote, once) Compile both filters to BPF with libseccomp, so that each
    box only loads one: building it again is most of what installing it costs."""
    if seccomp is None:
        return
    for no_new_code in (False, True):
        rules, text = _rules(no_new_code)
        with tempfile.TemporaryFile() as program:
            rules.export_bpf(program)
            program.seek(0)
            _COMPILED[no_new_code] = (program.read(), text)


def compiled(no_new_code=False):
    """The BPF program :func:`prepare` compiled, or None."""
    return _COMPILED[no_new_code][0] if no_new_code in _COMPILED else None


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


def install(no_new_code=False):
    """Load the filter on this process (and everything it will start); returns a
    line for the isolation report. Raises OSError when the kernel refuses it.
    ``no_new_code``: also refuse new executable memory and programs."""
    if seccomp is None:
        raise OSError(errno.ENOSYS, f"no libseccomp binding ({MISSING})")
    if no_new_code in _COMPILED:
        program, text = _COMPILED[no_new_code]
        load_program(program)
        return text
    rules, text = _rules(no_new_code)
    rules.load()
    return text
