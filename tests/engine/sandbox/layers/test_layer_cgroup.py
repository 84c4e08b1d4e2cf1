"""Layer "cgroup" (autograder/sandbox/confine/layers/cgroup.py): as root, one
cgroup per box bounds its memory and processes together, and the report says so."""
import os

from autograder.sandbox.confine import cgroups
from autograder.sandbox.confine.layers import cgroup as layer
from autograder.sandbox.confine.layers.result import Status
from support.layer_support import config, linux_only, root_only


def _read(cgroup, *names):
    for path in cgroup.paths:
        for name in names:
            if os.path.exists(os.path.join(path, name)):
                with open(os.path.join(path, name)) as handle:
                    return handle.read().strip()
    return None


@linux_only
@root_only
def test_a_box_cgroup_bounds_memory_and_processes_and_the_report_says_so(tmp_path):
    as_root = config(tmp_path, uid=1, gid=1)
    cgroup, result = layer.make(as_root, f"{cgroups.PREFIX}{os.getpid()}-layer-test", join=False)
    assert (cgroup is None) == (result.status is Status.FAILED)
    if cgroup is None:
        assert result.problems == (result.words,) and result.words.startswith("cgroups: ")
        return  # a machine whose cgroups cannot be written: the report says why
    try:
        limits = as_root.limits
        assert int(_read(cgroup, "memory.max", "memory.limit_in_bytes")) == limits.memory_bytes + layer.HEADROOM_BYTES
        assert int(_read(cgroup, "pids.max")) == limits.max_processes + layer.EXTRA_TASKS
        assert result.held and result.problems == ()
        assert result.fact("memory") == result.words == (
            f"{cgroup.kind}: at most {limits.memory_bytes // 2**20 + 512} MiB for the whole box (all its processes, "
            f"files and shared memory together), at most {limits.max_processes} processes")
        assert result.fact("cpu") == cgroup.cpu
    finally:
        cgroup.leave_and_remove()
    assert not any(os.path.exists(path) for path in cgroup.paths)


def test_without_root_or_switched_off_there_is_none_and_no_problem(tmp_path):
    cgroup, result = layer.make(config(tmp_path), "never-made")
    assert cgroup is None and result.status is Status.NOT_AVAILABLE and result.problems == ()
    cgroup, result = layer.make(config(tmp_path, uid=1, gid=1, disable=frozenset({"cgroups"})), "never-made")
    assert cgroup is None and result.status is Status.NOT_AVAILABLE and result.words == "disabled for this run"


@linux_only
def test_a_cgroup_the_kernel_refuses_is_a_failure_with_its_reason(tmp_path, monkeypatch):
    refused = "cgroups: Device or resource busy (memory bounded per process only)"
    monkeypatch.setattr(cgroups, "box_cgroup", lambda *args, **kwargs: (None, refused))
    cgroup, result = layer.make(config(tmp_path, uid=1, gid=1), "refused")
    assert cgroup is None and result.status is Status.FAILED and result.problems == (refused,)
