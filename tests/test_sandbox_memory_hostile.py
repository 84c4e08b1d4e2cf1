"""Hostile submissions that hold memory where an address-space limit does not look
(issue 17): memfd files, /dev/shm, and many open pipes. Without root no cgroup
counts them, so the box must refuse them outright.

Harmless by construction: each hoarder asks for at most 256 MiB, and the test
removes whatever /dev/shm file of its marker exists afterwards.
"""
import pathlib

import pytest

from test_sandbox_hostile import MARK, REPORTING_STEP, TIGHT, _full_marks, _report_texts, confinement_here  # noqa: F401

pytestmark = pytest.mark.hostile

HOARDER = f'''
held = 0
try:
    for index in range(32):
        fd = os.memfd_create("{MARK}-%d" % index)
        os.ftruncate(fd, 8 * 2**20)
        os.pwrite(fd, b"x" * 2**20, 0)
        held += 8
except OSError:
    pass
if held:
    FOUND.append("memfd %d MiB" % held)
held = 0
try:
    for index in range(32):
        with open("/dev/shm/{MARK}-%d" % index, "wb") as handle:
            handle.write(b"x" * 8 * 2**20)
        held += 8
except OSError:
    pass
if held:
    FOUND.append("/dev/shm %d MiB" % held)
pipes = []
try:
    for _ in range(1000):
        pipes.append(os.pipe())
except OSError:
    pass
if len(pipes) > 100:
    FOUND.append("%d pipes" % len(pipes))
for read_end, write_end in pipes:
    os.close(read_end)
    os.close(write_end)
'''


def test_memory_outside_the_address_space_limit_is_refused(grade_dir):
    try:
        report = grade_dir({"amp_training_step": REPORTING_STEP.format(probe=HOARDER, use="pass")},
                           seed=41, limits=TIGHT)
    finally:
        for leftover in pathlib.Path("/dev/shm").glob(f"{MARK}-*"):
            leftover.unlink()
    texts = _report_texts(report, "amp_training_step")
    assert "FOUND=[]" in texts, texts[:2000]
    assert _full_marks(report, "amp_update", "loss_scaler")
    memory = report.isolation["memory"]
    assert "cgroup" in memory or ("memfd refused" in memory and "no /dev/shm" in memory), memory
