"""Layer "code seal" (autograder/sandbox/confine/layers/seal.py): the functions a
module's guard names end the box with EXIT_SEALED once sealed; sealed only where
the syscall filter that keeps them sealed will follow."""
import ctypes
import os
import sys

import pytest

from autograder.sandbox.confine import code_seal, syscall_filter
from autograder.sandbox.confine.box_config import SealRequest
from autograder.sandbox.confine.layers import seal
from autograder.sandbox.confine.layers.result import Status
from support.layer_support import box, config, in_child, plain

needs_sealing = pytest.mark.skipif(
    not sys.platform.startswith("linux") or code_seal.architecture() not in code_seal._EXIT_STUB
    or not syscall_filter.available(), reason="sealing is for Linux on x86-64 and aarch64, with libseccomp")


@needs_sealing
def test_a_sealed_function_ends_the_box_and_the_report_names_it(tmp_path):
    libc = ctypes.CDLL(None)
    request = SealRequest("libc's getppid", (ctypes.cast(libc.getppid, ctypes.c_void_p).value,))

    def body():
        result = seal.seal(box(config(tmp_path, sealed=request)))
        pid = os.fork()
        if pid == 0:
            ctypes.CDLL(None).getppid()
            os._exit(0)
        return plain(result), os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), os.getpid() > 0

    result, exit_code, other_code_runs = in_child(body)[1]
    assert exit_code == code_seal.EXIT_SEALED and other_code_runs
    assert result["status"] == "applied" and result["words"] == "libc's getppid (1 functions)"
    assert result["facts"] == {"what": "libc's getppid", "count": 1}


@needs_sealing
def test_code_that_cannot_be_sealed_is_a_failure_with_its_reason(tmp_path):
    result = seal.seal(box(config(tmp_path, sealed=SealRequest("nothing real", (1,)))))
    assert result.status is Status.FAILED
    assert result.problems == ("code seal (nothing real): 0x1 is not in read-only executable memory; "
                               "only the guard in the box's own interpreter stands",)


def test_nothing_is_sealed_without_a_request_or_without_the_filter_that_keeps_it(tmp_path):
    assert seal.seal(box(config(tmp_path))).status is Status.NOT_AVAILABLE
    unfiltered = seal.seal(box(config(tmp_path, sealed=SealRequest("x", (1,)), disable=frozenset({"seccomp"}))))
    assert unfiltered.status is Status.NOT_AVAILABLE and unfiltered.problems == ()
