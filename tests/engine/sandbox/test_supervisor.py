"""As root the zygote keeps its boxes itself (autograder/sandbox/supervisor.py):
no keeper process, the worker PID 1 of its namespace and inside its cgroup,
everything it starts gone with it, the zygote's own PID namespace unchanged."""
import os
import time

import pytest

from autograder.sandbox import uids
from support import toy
from support.helpers import outliving, running

pytestmark = pytest.mark.skipif(not uids.running_as_root() or not hasattr(os, "pidfd_open"),
                                reason="the zygote keeps boxes itself as root only")

FORKER = '''
import os, time

def fork_and_tell():
    child = os.fork()
    if child == 0:
        time.sleep(300)
        os._exit(0)
    return [os.getpid(), os.getppid(), child]
'''


def _stat(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
        return stat.read().rsplit(")", 1)[1].split()


@pytest.mark.slow
def test_the_worker_is_the_zygotes_child_and_takes_everything_with_it(tmp_path):
    from autograder.sandbox.boxes import start_boxes
    from autograder.sandbox.client import Limits, Sandbox

    with toy.active():  # any assignment's boxes: these are the zygote's
        boxes = start_boxes()
    try:
        sandbox = Sandbox(toy.MODULE, toy.box_spec(tmp_path, FORKER), boxes, Limits())
        outcome = sandbox.call("fork_and_tell")
        assert outcome.ok, outcome.error
        inside_pid, inside_parent, _ = outcome.value
        assert (inside_pid, inside_parent) == (1, 0)  # PID 1 of its own namespace
        worker = sandbox._box.pid
        zygote = boxes.process.pid
        assert int(_stat(worker)[1]) == zygote  # no keeper in between
        with open(f"/proc/{worker}/cgroup", encoding="ascii") as cgroup:
            groups = [line.rsplit("/", 1)[-1].strip() for line in cgroup]
        box_groups = sorted({group for group in groups if group.startswith("autograder-box-")})
        assert box_groups, groups
        grandchildren = [int(pid) for pid in os.listdir("/proc") if pid.isdigit()
                         and running(int(pid)) and int(_stat(int(pid))[1]) == worker]
        assert grandchildren, "the student's child is not running"
        own = os.readlink(f"/proc/{zygote}/ns/pid")
        assert os.readlink(f"/proc/{zygote}/ns/pid_for_children") == own  # setns put it back
        assert sandbox.isolation and sandbox.isolation[0].get("confined") is True
        sandbox.close()
        assert not outliving([worker] + grandchildren, 10)
        assert not [group for group in box_groups
                    for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids")
                    if os.path.isdir(os.path.join(root, group))], "the box's cgroup was left behind"
    finally:
        boxes.close()


@pytest.mark.slow
def test_a_judge_that_dies_takes_its_boxes_with_it(tmp_path):
    """The zygote's first channel closing (the judge gone) ends every box it keeps."""
    from autograder.sandbox.boxes import start_boxes
    from autograder.sandbox.client import Limits, Sandbox

    spec = toy.box_spec(tmp_path, FORKER)
    uid = spec["uid"]
    with toy.active():
        boxes = start_boxes()
    sandbox = Sandbox(toy.MODULE, spec, boxes, Limits())
    assert sandbox.call("fork_and_tell").ok
    worker, zygote = sandbox._box.pid, boxes.process.pid
    boxes.channel.close()  # as if the judge died: nothing closes the box
    boxes.channel = None
    assert not outliving([worker, zygote], 15)
    assert not uids.processes_of(uid)
    boxes.process.wait(timeout=5)


@pytest.mark.slow
def test_a_zygote_out_of_descriptors_refuses_that_box_and_keeps_serving(tmp_path):
    """The zygote's next box needs new descriptors (a pipe, a pidfd, the cgroup's
    process list); with none left that one box fails with the reason, nothing of
    it is left behind, and the zygote forks the next box as before."""
    import resource

    from autograder.sandbox.boxes import start_boxes
    from autograder.sandbox.client import Limits, Sandbox

    with toy.active():
        boxes = start_boxes()
    try:
        spec = toy.box_spec(tmp_path)
        first = Sandbox(toy.MODULE, spec, boxes, Limits())
        assert first.call("add", 1, 2).ok  # the zygote is up and idle
        first.close()
        zygote = boxes.process.pid
        time.sleep(0.2)
        with open(f"/proc/{zygote}/task/{zygote}/children", encoding="ascii") as children:
            children_before = set(children.read().split())
        held = len(os.listdir(f"/proc/{zygote}/fd"))
        limit = resource.prlimit(zygote, resource.RLIMIT_NOFILE)
        resource.prlimit(zygote, resource.RLIMIT_NOFILE, (held + 3, limit[1]))  # the request's three only
        try:
            starved = Sandbox(toy.MODULE, spec, boxes, Limits())
            outcome = starved.call("add", 1, 2)
        finally:
            resource.prlimit(zygote, resource.RLIMIT_NOFILE, limit)
        assert not outcome.ok and outcome.error.kind == "sandbox"
        assert "could not start a box" in outcome.error.message, outcome.error.message
        assert boxes.process.poll() is None  # the zygote lives on
        assert len(os.listdir(f"/proc/{zygote}/fd")) == held  # it holds nothing of that box
        with open(f"/proc/{zygote}/task/{zygote}/children", encoding="ascii") as children:
            assert set(children.read().split()) <= children_before
        again = Sandbox(toy.MODULE, spec, boxes, Limits())
        assert again.call("add", 1, 2).ok
        again.close()
        starved.close()
    finally:
        boxes.close()


def test_a_report_written_just_before_the_worker_ends_is_kept():
    """A probe box writes its report and exits at once: the zygote may see its end
    before the report in the same round of its loop. The report still counts."""
    import json
    import socket

    from autograder.sandbox.supervisor import KeptBox

    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(report_w, json.dumps({"confined": True, "probe": "written"}).encode())
        os._exit(0)
    os.close(report_w)
    judge, keeper = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    kept = KeptBox(pid, keeper, report_r, None)
    try:
        outliving([pid], 10)  # ended, its report unread: both are ready now
        assert kept.handle(kept.pidfd)  # the end first
        ready = json.loads(judge.recv(65536).decode())
        assert ready["pid"] == pid and ready["isolation"] == {"confined": True, "probe": "written"}
        assert "exit" in json.loads(judge.recv(65536).decode())
    finally:
        judge.close()
