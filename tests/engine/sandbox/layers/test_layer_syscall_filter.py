"""Layer "syscall filter" (autograder/sandbox/confine/layers/syscall_filter.py):
after it the box makes no new socket nor memfd, nor any kernel object that holds
memory no rlimit counts (System V and POSIX IPC, epoll, inotify, fanotify,
splice, AIO, record locks), and after a seal no new executable memory; where it
cannot be loaded the report says why."""
import ctypes
import errno
import fcntl
import mmap
import os
import socket
import sys

import pytest

from autograder.sandbox.confine import namespaces, syscall_filter as seccomp_filter
from autograder.sandbox.confine.layers import syscall_filter
from autograder.sandbox.confine.layers.result import Status, applied
from support.layer_support import box, config, errno_of, in_child, plain

needs_filter = pytest.mark.skipif(not sys.platform.startswith("linux") or not seccomp_filter.available(),
                                  reason="no libseccomp binding here")


def _filtered(tmp_path, *earlier):
    def body():
        result = syscall_filter.syscall_filter(box(config(tmp_path), *earlier))
        return (plain(result), errno_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()),
                errno_of(lambda: os.close(os.memfd_create("hoard"))),
                errno_of(lambda: mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC).close()))
    return in_child(body)[1]


@needs_filter
def test_no_new_sockets_nor_memfd_after_it(tmp_path):
    result, new_socket, memfd, executable = _filtered(tmp_path)
    assert (new_socket, memfd, executable) == (errno.EPERM, errno.EPERM, 0)
    assert result["status"] == "applied" and result["words"].startswith("seccomp: no new sockets")


@needs_filter
def test_after_a_seal_no_new_executable_memory_either(tmp_path):
    sealed = applied("code seal", "x (1 functions)", what="x", count=1)
    result, _socket, _memfd, executable = _filtered(tmp_path, sealed)
    assert executable == errno.EPERM and result["status"] == "applied"


KERNEL_OBJECTS = ("shmget", "msgget", "semget", "mq_open", "epoll_create1", "inotify_init1", "fanotify_init",
                  "splice", "io_setup", "fcntl(F_SETLK)")


def _kernel_objects(handle):
    """0 or the errno of each call that makes a kernel object holding memory; in
    a child with an IPC namespace of its own, so what one makes dies with it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def call(name, *args):
        number = seccomp_filter.seccomp.resolve_syscall(seccomp_filter.seccomp.Arch.NATIVE, name)
        return 0 if libc.syscall(number, *args) >= 0 else ctypes.get_errno()

    context, creat = ctypes.c_ulong(0), 0o1600  # IPC_CREAT, mode 0600
    source, sink = os.pipe(), os.pipe()
    os.write(source[1], b"x")
    return {"shmget": call("shmget", 0, 4096, creat), "msgget": call("msgget", 0, creat),
            "semget": call("semget", 0, 1, creat),
            "mq_open": call("mq_open", b"layer-test", os.O_CREAT | os.O_RDWR, 0o600, None),
            "epoll_create1": call("epoll_create1", 0), "inotify_init1": call("inotify_init1", 0),
            "fanotify_init": call("fanotify_init", 0, 0),
            "splice": call("splice", source[0], None, sink[1], None, 1, 0),
            "io_setup": call("io_setup", 1, ctypes.byref(context)),
            "fcntl(F_SETLK)": errno_of(lambda: fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB))}


@needs_filter
def test_no_kernel_object_that_holds_memory_after_it(tmp_path):
    as_root = os.geteuid() == 0
    own_ipc = namespaces.CLONE_NEWIPC | (0 if as_root else namespaces.CLONE_NEWUSER)

    def body(filtered):
        if filtered:
            syscall_filter.syscall_filter(box(config(tmp_path)))
        with (tmp_path / "locked").open("wb") as handle:
            return _kernel_objects(handle)

    # Without the layer, as root each call makes its object; without root none is
    # refused for want of privilege (fanotify aside; a user namespace without a
    # uid map answers EOVERFLOW to mq_open): EPERM is the filter's alone.
    unfiltered = in_child(lambda: body(False), unshare=own_ipc)[1]
    if as_root:
        assert unfiltered == dict.fromkeys(KERNEL_OBJECTS, 0)
    assert [name for name, code in unfiltered.items() if code == errno.EPERM] == ([] if as_root else ["fanotify_init"])
    assert in_child(lambda: body(True), unshare=own_ipc)[1] == dict.fromkeys(KERNEL_OBJECTS, errno.EPERM)


def test_where_it_cannot_be_loaded_the_report_says_why(tmp_path, monkeypatch):
    off = syscall_filter.syscall_filter(box(config(tmp_path, disable=frozenset({"seccomp"}))))
    if sys.platform.startswith("linux"):
        assert off.status is Status.NOT_AVAILABLE and off.problems == ("syscall filter: disabled for this run",)

    def refuse(no_new_code=False):
        raise OSError(errno.ENOSYS, "no libseccomp binding (pip install pyseccomp)")

    monkeypatch.setattr(seccomp_filter, "install", refuse)
    monkeypatch.setattr(sys, "platform", "linux")
    failed = syscall_filter.syscall_filter(box(config(tmp_path)))
    assert failed.status is Status.FAILED
    assert failed.problems == ("syscall filter: no libseccomp binding (pip install pyseccomp)",)
