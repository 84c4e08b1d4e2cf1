"""The zygote's heap folded into huge pages (sandbox/zygote.py): only private
anonymous memory is asked for, on 2 MiB boundaries, and what is folded stays
exactly what it was."""
import subprocess
import sys

import pytest

from autograder.sandbox import zygote
from support.helpers import ROOT

MAPS = """\
55d0c0000000-55d0c0001000 r--p 00000000 08:01 1234 /usr/bin/python3.11
55d0c1000000-55d0c1a00000 rw-p 00000000 00:00 0 [heap]
7f0000100000-7f0000700000 rw-p 00000000 00:00 0
7f0000800000-7f0000900000 rw-p 00000000 00:00 0
7f0001000000-7f0001400000 rw-s 00000000 00:01 77 /dev/shm/x
7f0002000000-7f0002400000 rw-p 00000000 08:01 99 /lib/libtorch_cpu.so
7f0003000000-7f0003400000 r--p 00000000 00:00 0
7ffd00000000-7ffd00800000 rw-p 00000000 00:00 0 [stack]
"""


def test_only_private_writable_anonymous_memory_on_huge_page_boundaries():
    mib = 1 << 20
    assert zygote.huge_page_pieces(MAPS) == [
        (0x55d0c1000000, 10 * mib),   # the heap, already aligned
        (0x7f0000200000, 4 * mib),    # 1..7 MiB trimmed to 2..6
    ]                                 # 8..9 MiB holds no whole huge page; shared, file, read-only, stack: never


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux memory maps")
def test_folded_memory_reads_the_same_and_a_fork_still_sees_it():
    script = r"""
import os, sys, hashlib
sys.path.insert(0, sys.argv[1])
from autograder.sandbox import zygote
data = bytearray(os.urandom(1 << 20) * 48)        # 48 MiB of anonymous memory
before = hashlib.sha256(data).hexdigest()
folded = zygote.fold_heap()
huge = 0
with open("/proc/self/smaps_rollup") as rollup:
    for line in rollup:
        if line.startswith("AnonHugePages:"):
            huge = int(line.split()[1]) << 10
assert hashlib.sha256(data).hexdigest() == before
pid = os.fork()
if pid == 0:
    os._exit(0 if hashlib.sha256(data).hexdigest() == before else 1)
_, status = os.waitpid(pid, 0)
print(folded, huge, os.waitstatus_to_exitcode(status))
"""
    done = subprocess.run([sys.executable, "-c", script, str(ROOT)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    folded, huge, child = map(int, done.stdout.split())
    assert child == 0
    if folded == 0:
        pytest.skip("this kernel folds nothing (no MADV_COLLAPSE, or no huge page free)")
    assert huge >= 32 << 20  # most of the 48 MiB now lies on huge pages
