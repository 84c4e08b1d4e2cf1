"""Layer "syscall filter" (autograder/sandbox/confine/layers/syscall_filter.py):
after it the box makes no new socket nor memfd, and after a seal no new
executable memory; where it cannot be loaded the report says why."""
import errno
import mmap
import os
import socket
import sys

import pytest

from autograder.sandbox.confine import syscall_filter as seccomp_filter
from autograder.sandbox.confine.layers import syscall_filter
from autograder.sandbox.confine.layers.result import Status, applied
from layer_support import box, config, errno_of, in_child, plain

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
