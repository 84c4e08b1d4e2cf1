"""The box's seccomp filter (autograder/sandbox/confine/syscall_filter.py): compiled
once in the zygote, loaded in each box, it refuses exactly what libseccomp's own
load of the same rules refuses."""
import ctypes
import errno
import json
import os
import socket
import sys
import tempfile

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
    try:
        for end in socket.socketpair():
            end.close()
        answers["socketpair"] = 0
    except OSError as exc:
        answers["socketpair"] = exc.errno
    answers["memfd_create"] = errno_of(libc.memfd_create(b"probe", 0))
    segment = libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE, removed at once (IPC_RMID) where made
    answers["shmget"] = errno_of(segment)
    if segment >= 0:
        libc.shmctl(segment, 0, None)
    queue = libc.msgget(0, 0o1600)
    answers["msgget"] = errno_of(queue)
    if queue >= 0:
        libc.msgctl(queue, 0, None)
    with tempfile.TemporaryFile() as handle:
        lock = (ctypes.c_short * 16)(1, 0)  # struct flock: F_WRLCK, SEEK_SET, start 0, len 0 (the whole file)
        answers["fcntl(F_SETLK)"] = errno_of(libc.fcntl(handle.fileno(), 6, lock))
        answers["fcntl(F_GETFD)"] = errno_of(libc.fcntl(handle.fileno(), 1))
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    executable = libc.mmap(None, 4096, 1 | 4, 0x22, -1, 0)  # PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS
    answers["mmap(PROT_EXEC)"] = 0 if executable not in (None, ctypes.c_void_p(-1).value) else ctypes.get_errno()
    readable = libc.mmap(None, 4096, 1 | 2, 0x22, -1, 0)
    answers["mmap(PROT_READ)"] = 0 if readable not in (None, ctypes.c_void_p(-1).value) else ctypes.get_errno()
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
    """Load a filter in a fresh child, then probe there."""
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
    monkeypatch.setattr(syscall_filter, "_COMPILED", {})  # this process's copy is put back after
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
    # kernel objects that hold memory outside the address space (issue 37)
    assert compiled["socketpair"] == compiled["shmget"] == compiled["msgget"] == compiled["fcntl(F_SETLK)"] \
        == errno.EPERM
    assert compiled["fcntl(F_GETFD)"] == 0 and compiled["fork"] == 7
    assert compiled["mmap(PROT_EXEC)"] == compiled["mmap(PROT_READ)"] == 0  # only a sealed box loses the first
    assert compiled.get("clone3", errno.ENOSYS) == errno.ENOSYS
    unfiltered = _in_child(lambda: None)  # the probe itself can tell
    assert unfiltered["socket"] == unfiltered["shmget"] == unfiltered["fcntl(F_SETLK)"] == 0


def test_the_no_new_code_filter_refuses_executable_memory_only(compiled_here):
    program = syscall_filter.compiled(no_new_code=True)

    def by_libseccomp():
        rules, _text = syscall_filter._rules(no_new_code=True)
        rules.load()

    sealed = _in_child(lambda: syscall_filter.load_program(program))
    assert sealed == _in_child(by_libseccomp)
    assert sealed["mmap(PROT_EXEC)"] == sealed["shmget"] == errno.EPERM
    assert sealed["mmap(PROT_READ)"] == 0 and sealed["fork"] == 7


def test_install_loads_the_compiled_filter_without_building_it_again(compiled_here, monkeypatch):
    def rebuilt():
        raise AssertionError("the filter was built again")

    monkeypatch.setattr(syscall_filter, "_rules", rebuilt)
    answers = _in_child(syscall_filter.install)
    assert answers is not None, "install() failed"
    assert answers["socket"] == errno.EPERM and answers["fork"] == 7
