"""The box's seccomp filter (autograder/sandbox/confine/syscall_filter.py): compiled
once in the zygote, loaded in each box, it refuses exactly what libseccomp's own
load of the same rules refuses."""
import ctypes
import errno
import json
import os
import socket
import sys

import pytest

from autograder.sandbox.confine import syscall_filter

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not syscall_filter.available(),
                                reason="seccomp through libseccomp (Linux)")

CLONE_NEWUSER, CLONE3 = 0x10000000, {"x86_64": 435, "aarch64": 435}


def _probe():
    """What a few calls answer in this process: 0 or the errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def errno_of(result):
        return 0 if result >= 0 else ctypes.get_errno()

    answers = {}
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
        answers["socket"] = 0
    except OSError as exc:
        answers["socket"] = exc.errno
    pair = socket.socketpair()
    answers["socketpair"] = 0
    for end in pair:
        end.close()
    answers["memfd_create"] = errno_of(libc.memfd_create(b"probe", 0))
    answers["unshare(user)"] = errno_of(libc.unshare(CLONE_NEWUSER))
    number = CLONE3.get(os.uname().machine)
    if number is not None:
        answers["clone3"] = errno_of(libc.syscall(ctypes.c_long(number), None, ctypes.c_size_t(0)))
    child = os.fork()
    if child == 0:
        os._exit(7)
    answers["fork"] = os.WEXITSTATUS(os.waitpid(child, 0)[1])
    return answers


def _in_child(load):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            load()
            os.write(write, json.dumps(_probe()).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as answer:
        return json.loads(answer.read() or b"null")


@pytest.fixture
def compiled_here(monkeypatch):
    monkeypatch.setattr(syscall_filter, "_COMPILED", None)  # this process's copy is put back after
    syscall_filter.prepare()


def test_the_compiled_filter_refuses_what_libseccomp_refuses(compiled_here):
    program = syscall_filter.compiled()
    assert program and len(program) % 8 == 0

    def by_libseccomp():
        rules, _text = syscall_filter._rules()
        rules.load()

    compiled = _in_child(lambda: syscall_filter.load_program(program))
    assert compiled == _in_child(by_libseccomp)
    assert compiled["socket"] == compiled["memfd_create"] == compiled["unshare(user)"] == errno.EPERM
    assert compiled["socketpair"] == 0 and compiled["fork"] == 7
    assert compiled.get("clone3", errno.ENOSYS) == errno.ENOSYS
    assert _in_child(lambda: None)["socket"] == 0  # the probe itself can tell


def test_install_loads_the_compiled_filter_without_building_it_again(compiled_here, monkeypatch):
    def rebuilt():
        raise AssertionError("the filter was built again")

    monkeypatch.setattr(syscall_filter, "_rules", rebuilt)
    answers = _in_child(syscall_filter.install)
    assert answers is not None, "install() failed"
    assert answers["socket"] == errno.EPERM and answers["fork"] == 7
