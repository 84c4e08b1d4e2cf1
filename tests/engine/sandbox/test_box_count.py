"""What a box's keeper counts for the call clock (limits.box_count): the CPU time of
every process the box ever ran where its cgroup keeps that count, else its live
processes, read through a /proc the keeper opened before the box's root replaced its own."""
import os
import signal
import time

import pytest

from autograder.sandbox.confine import cgroups, limits
from support.helpers import parent_with_child
from support.layer_support import in_child

linux_only = pytest.mark.skipif(not os.path.isdir("/proc"), reason="Linux /proc")


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/fs/cgroup"), reason="cgroups need root")
def test_a_box_cgroup_counts_the_cpu_of_processes_the_kernel_reaped():
    """In a fork that joins a box cgroup and ignores SIGCHLD: its own child burns
    0.3 s of CPU and ends, reaped by the kernel, counted by no parent."""
    def body():
        cgroup, problem = cgroups.box_cgroup(f"amp-test-count-{os.getpid()}", 4 * 2**30, 64)
        if cgroup is None or cgroup.accounting is None:
            return problem or "no CPU accounting"
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)
            burner = os.fork()
            if burner == 0:
                end = time.process_time() + 0.3
                while time.process_time() < end:
                    pass
                os._exit(0)
            while _alive(burner):
                time.sleep(0.01)
            return limits.box_count(os.getpid(), cgroup), limits.tree_usage(os.getpid())[0]
        finally:
            cgroup.leave_and_remove()

    _, answer = in_child(body)
    if isinstance(answer, str):
        pytest.skip(answer)
    count, seen_alive = answer
    assert count["whole"] and count["cpu"] >= 0.3
    assert seen_alive < 0.2  # what a sum of the live processes would have charged


@pytest.mark.parametrize("layout", ["v2", "v1"])
def test_the_cpu_count_is_read_in_either_cgroup_layout(tmp_path, monkeypatch, layout):
    """A stand-in cgroup tree: v2's cpu.stat (microseconds), v1's cpuacct.usage in a
    hierarchy of its own (nanoseconds)."""
    monkeypatch.setattr(cgroups, "ROOT", str(tmp_path))
    if layout == "v2":
        (tmp_path / "cgroup.subtree_control").write_text("memory pids\n")
    else:
        for hierarchy in ("memory", "pids", "cpu", "cpuacct"):
            (tmp_path / hierarchy).mkdir()
    cgroup = cgroups.BoxCgroup(f"{cgroups.PREFIX}count-test", 2**30, 16)
    expected = {"v2": tmp_path / cgroup.name / "cpu.stat",
                "v1": tmp_path / "cpuacct" / cgroup.name / "cpuacct.usage"}[layout]
    assert cgroup.accounting == str(expected)
    expected.write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n" if layout == "v2"
                        else "1500000000\n")
    cgroup.watch()
    try:
        assert cgroup.cpu_seconds() == pytest.approx(1.5)
    finally:
        cgroup.leave_and_remove()
    assert cgroup.cpu_seconds() is None  # gone with the box


@linux_only
def test_without_a_cgroup_the_live_processes_are_counted_through_the_proc_given():
    with parent_with_child("import time; time.sleep(60)") as (parent, child):
        proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
        try:
            count = limits.box_count(parent.pid, proc=proc)
            assert count["whole"] is False and count["others"] == 1 and count["cpu"] > 0
            assert limits.box_count(child)["others"] == 0
            assert limits.box_count(999999999) == {"cpu": 0.0, "running": False, "whole": False, "others": 0}
        finally:
            os.close(proc)
