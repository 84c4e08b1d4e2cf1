"""Sealed machine code (autograder/sandbox/confine/code_seal.py): found by name in a
library's dynamic symbols, replaced on pages no file backs, and reaching it ends
the process with EXIT_SEALED; nothing the process does to those pages brings the
original back."""
import ctypes
import json
import os
import sys

import pytest

from autograder.sandbox.confine import code_seal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux")
                                or code_seal.architecture() not in code_seal._EXIT_STUB,
                                reason="sealing is for Linux on x86-64 and aarch64")

KERNELS = rb"_amp_(?:update_scale|foreach_non_finite_check_and_unscale)_cpu_"


def _library():
    import torch

    return os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")


def _addresses():
    return code_seal.locate(_library(), rb"_ZN2at6native\d+" + KERNELS + rb"E",
                            KERNELS + rb"stub_DECLARE_DISPATCH_type")


def _in_child(body):
    """Run ``body()`` in a fork; returns (exit code, what it wrote as JSON)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            os.write(write, json.dumps(body()).encode())
        finally:
            os._exit(0)
    os.close(write)
    status = os.waitpid(pid, 0)[1]
    with os.fdopen(read, "rb") as answer:
        data = answer.read()
    return os.waitstatus_to_exitcode(status), json.loads(data) if data else None


@pytest.mark.slow
def test_the_kernels_are_found_by_name_and_through_their_dispatch_tables():
    found = code_seal.dynamic_symbols(_library(), KERNELS)
    kinds = {kind for _name, kind, _size in found}
    assert kinds == {"function", "object"}, found
    addresses = _addresses()
    assert len(addresses) >= 3  # two entry points and at least one kernel behind them
    code = code_seal.executable_ranges()
    assert all(any(low <= address < high for low, high, _open in code) for address in addresses)


@pytest.mark.parametrize("call", ["update", "unscale"])
def test_a_sealed_kernel_ends_the_process_and_other_code_still_runs(call):
    import torch

    addresses = _addresses()

    def body():
        code_seal.seal(addresses)
        values = torch.arange(1000.0)
        if float((values * 2).sum()) != 999000.0:
            return "other code broke"
        if call == "update":
            torch._amp_update_scale_(torch.ones(1), torch.zeros(1, dtype=torch.int32), torch.zeros(1), 2.0, 0.5, 1)
        else:
            torch._amp_foreach_non_finite_check_and_unscale_([values], torch.zeros(1), torch.ones(1))
        return "the kernel ran"

    assert _in_child(body) == (code_seal.EXIT_SEALED, None)
    torch._amp_update_scale_(torch.ones(1), torch.zeros(1, dtype=torch.int32), torch.zeros(1), 2.0, 0.5, 1)


def test_dropping_a_sealed_page_does_not_bring_the_original_back():
    """The copy is anonymous: madvise(MADV_DONTNEED) leaves zeros, never the file's code."""
    address = _addresses()[0]
    stub = code_seal._EXIT_STUB[code_seal.architecture()]
    original = ctypes.string_at(address, len(stub))

    def body():
        code_seal.seal([address])
        sealed = ctypes.string_at(address, len(stub))
        page = address // os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PAGE_SIZE")
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise(ctypes.c_void_p(page), ctypes.c_size_t(os.sysconf("SC_PAGE_SIZE")), 4)  # MADV_DONTNEED
        return [sealed.hex(), ctypes.string_at(address, len(stub)).hex()]

    code, (sealed, dropped) = _in_child(body)
    assert code == 0 and sealed == stub.hex()
    assert dropped != original.hex()


def test_only_code_is_sealed():
    data = ctypes.create_string_buffer(64)
    with pytest.raises(OSError, match="not in read-only executable memory"):
        code_seal.seal([ctypes.addressof(data)])
    with pytest.raises(OSError, match="none of the functions"):
        code_seal.seal([])
