"""Layer "rlimits" (autograder/sandbox/confine/layers/rlimits.py): each process of
the box bounded on its own, and without a cgroup's CPU share a lower priority."""
import os
import resource

import pytest

from autograder.sandbox.confine import limits
from autograder.sandbox.confine.layers import rlimits
from autograder.sandbox.confine.layers.result import applied
from support.layer_support import box, config, in_child, linux_only, plain

LIMITS = ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE", "RLIMIT_NOFILE",
          "RLIMIT_AS", "RLIMIT_NPROC")


def _applied(tmp_path, *earlier):
    def body():
        before = {"nice": os.nice(0), "mapped": limits.current_address_space(),
                  "open": len(os.listdir("/proc/self/fd"))}
        result = rlimits.rlimits(box(config(tmp_path), *earlier))
        return plain(result), before, {name: resource.getrlimit(getattr(resource, name))[0] for name in LIMITS}, \
            os.nice(0)
    return in_child(body)[1]


@linux_only
def test_each_process_is_bounded_and_yields_without_a_cgroup(tmp_path):
    result, before, soft, nice = _applied(tmp_path)
    lim = config(tmp_path).limits
    assert soft["RLIMIT_CPU"] == lim.cpu_seconds and soft["RLIMIT_FSIZE"] == lim.max_file_bytes
    assert soft["RLIMIT_CORE"] == 0 and soft["RLIMIT_MSGQUEUE"] == 0
    assert soft["RLIMIT_SIGPENDING"] == limits.PENDING_SIGNALS
    assert 0 <= soft["RLIMIT_AS"] - before["mapped"] - lim.memory_bytes < 2**26  # on top of what it maps
    assert 0 <= soft["RLIMIT_NOFILE"] - before["open"] - lim.max_open_files <= 2
    assert soft["RLIMIT_NPROC"] >= lim.max_processes
    assert nice == min(before["nice"] + rlimits.NICE, 19)
    assert result["status"] == "applied" and result["facts"]["limits"] == lim and result["facts"]["nice"] == 10


@linux_only
def test_with_a_cgroup_s_cpu_share_the_priority_stays(tmp_path):
    share = applied("cgroup", "cgroup v2", memory="cgroup v2", cpu="cgroup v2: an equal CPU share")
    result, before, _soft, nice = _applied(tmp_path, share)
    assert nice == before["nice"] and result["facts"]["nice"] == 0


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_a_uid_of_its_own_counts_its_processes_from_zero(tmp_path):
    def body():
        rlimits.rlimits(box(config(tmp_path, uid=1, gid=1)))
        return resource.getrlimit(resource.RLIMIT_NPROC)[0]
    assert in_child(body)[1] == config(tmp_path).limits.max_processes
