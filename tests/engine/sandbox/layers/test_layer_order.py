"""The box's layers run in the documented order (docs/sandbox.md, "The layers"),
the loop stops at a layer that refuses, and the verdict -- confined or not, the
isolation report's lines, its problems -- is drawn from the layers' results
alone (autograder/sandbox/isolation.py), fed here as made-up results."""
import re

import pytest

from autograder.sandbox import isolation
from autograder.sandbox.confine import confinement, namespaces
from autograder.sandbox.confine.box_config import BoxLimits
from autograder.sandbox.confine.layers.result import applied, failed, not_available, refused
from support.helpers import ROOT
from support.layer_support import child_pipe, config, in_child, linux_only, plain

DOC = (ROOT / "docs" / "sandbox.md").read_text(encoding="utf-8")
ALL = namespaces.CLONE_NEWNS | namespaces.CLONE_NEWPID | namespaces.CLONE_NEWNET | namespaces.CLONE_NEWIPC
LIMITS = BoxLimits(memory_bytes=3 * 2**30, cpu_seconds=300, max_processes=64, max_file_bytes=16 * 2**20,
                   scratch_bytes=64 * 2**20, max_open_files=64)


def documented_order():
    table = DOC.split("## The layers", 1)[1].split("\n## ", 1)[0]
    return [match.group(1) for match in re.finditer(r"^\| \d+ \| ([^|]+?) \|", table, re.M)]


def test_the_layers_run_in_the_documented_order():
    assert [layer.name for layer in confinement.LAYERS] == documented_order()
    # the order that security rests on, spelled out
    names = [layer.name for layer in confinement.LAYERS]
    assert names.index("private mounts") < names.index("minimal root") < names.index("own uid")
    assert names.index("code seal") < names.index("Landlock") < names.index("syscall filter") == len(names) - 1
    assert confinement.BEFORE_FORK == ("cgroup", "namespaces")


@linux_only
def test_every_layer_reports_under_its_own_name(tmp_path):
    """Each worker layer, applied where it has nothing to do or is switched off
    (in a fork: descriptors and limits change the process), names itself."""
    quiet = config(tmp_path, disable=frozenset({"landlock", "seccomp", "minimal_root"}))

    def body():
        box = confinement.Box(quiet, [not_available("cgroup", "test"), applied("namespaces", "", flags=0)],
                              keep_fds=[child_pipe()])
        return [layer.apply(box).layer for layer in confinement.LAYERS[2:]]

    assert in_child(body)[1] == [layer.name for layer in confinement.LAYERS[2:]]


def test_the_loop_applies_the_worker_layers_in_order_and_stops_at_a_refusal(tmp_path, monkeypatch):
    seen = []

    def layer(name, status):
        def apply(box):
            seen.append((name, [result.layer for result in box.results]))
            return status(name, "why")
        return confinement.Layer(name, apply)

    monkeypatch.setattr(confinement, "LAYERS", (
        confinement.Layer("cgroup", None), confinement.Layer("namespaces", None),
        layer("first", applied), layer("second", refused), layer("never", applied)))
    made = [not_available("cgroup", "test"), applied("namespaces", "", flags=0)]
    box = confinement.confine(config(tmp_path), made)
    assert seen == [("first", ["cgroup", "namespaces"]), ("second", ["cgroup", "namespaces", "first"])]
    assert [result.layer for result in box.results] == ["cgroup", "namespaces", "first", "second"]
    with pytest.raises(ValueError, match="maker's layers"):
        confinement.confine(config(tmp_path), made[1:])


def full_root_box(**changes):
    """Made-up results of a box as root on a machine that has every layer."""
    results = {
        "cgroup": applied("cgroup", "cgroup v2: at most 3584 MiB", memory="cgroup v2: at most 3584 MiB",
                          cpu="cgroup v2: an equal CPU share"),
        "namespaces": applied("namespaces", "PID, mount, network, IPC", flags=ALL),
        "cpu affinity": not_available("cpu affinity", "no CPUs asked for"),
        "descriptors": applied("descriptors", "only its channel"),
        "private mounts": applied("private mounts", "no mount propagates"),
        "minimal root": applied("minimal root", "minimal (pivot_root): 9 read-only folders and files, scratch, "
                                "/proc of its own", bound=9, proc=True, scratch=True),
        "read-only tree": not_available("read-only tree", "the minimal root holds"),
        "own uid": applied("own uid", "uid 1934567890 of its own", uid=1934567890),
        "capabilities": not_available("capabilities", "none left"),
        "rlimits": applied("rlimits", "", limits=LIMITS, nice=0),
        "code seal": not_available("code seal", "nothing to seal"),
        "Landlock": applied("Landlock", "Landlock ABI 7: file system", abi=7),
        "syscall filter": applied("syscall filter", "seccomp: no new sockets"),
    }
    results.update(changes)
    return [results[layer.name] for layer in confinement.LAYERS if layer.name in results]


def test_a_box_with_every_layer_is_confined_and_says_what_held():
    report = isolation.box_report(full_root_box())
    assert report["confined"] is True and report["problems"] == []
    assert report["root"].startswith("minimal (pivot_root): 9") and report["uid"] == "uid 1934567890 of its own"
    assert report["fs"] == "Landlock ABI 7: file system" and report["syscalls"] == "seccomp: no new sockets"
    assert report["network"] == "none (empty network namespace)" and report["signals"] == "own process namespace"
    assert report["memory"] == "cgroup v2: at most 3584 MiB" and report["cpu"] == "cgroup v2: an equal CPU share"
    assert report["scratch"] == "tmpfs, 64 MiB" and report["process_namespace"] is True
    assert isolation.summary(report).startswith("confined (")


def test_the_verdict_follows_the_results_not_the_machine():
    no_landlock = isolation.box_report(full_root_box(
        Landlock=not_available("Landlock", "x", problems=["Landlock: not available in this kernel"])))
    assert no_landlock["confined"] is False and no_landlock["fs"] == "minimal root, read-only"
    assert no_landlock["problems"] == ["Landlock: not available in this kernel"]
    # the filter stands in for the minimal root: no pathname socket can be made
    tree = isolation.box_report(full_root_box(
        **{"minimal root": failed("minimal root", "x", problems=["minimal root: EPERM"]),
           "read-only tree": applied("read-only tree", "", proc=True, scratch=True)}))
    assert tree["confined"] is True and tree["root"] == "the machine's, read-only"
    assert isolation.missing_layers(tree) == ["minimal root"]
    neither = isolation.box_report(full_root_box(
        **{"minimal root": failed("minimal root", "x"), "syscall filter": failed("syscall filter", "x"),
           "read-only tree": applied("read-only tree", "", proc=True, scratch=True)}))
    assert neither["confined"] is False and neither["syscalls"] == "not filtered"
    assert "NOT bounded" not in neither["memory"]  # the cgroup bounds everything
    no_pid = isolation.box_report(full_root_box(
        namespaces=applied("namespaces", "", flags=ALL & ~namespaces.CLONE_NEWPID)))
    assert no_pid["confined"] is False and no_pid["signals"] == "Landlock scope"
    assert isolation.box_report(full_root_box(
        namespaces=applied("namespaces", "", flags=namespaces.CLONE_NEWNS), Landlock=failed("Landlock", "x"),
    ))["signals"] == "uid of its own"


def test_problems_come_in_the_order_the_layers_ran():
    report = isolation.box_report(full_root_box(
        cgroup=failed("cgroup", "x", problems=["cgroups: EBUSY"]),
        **{"private mounts": failed("private mounts", "x", problems=["mounts: EINVAL"]),
           "syscall filter": failed("syscall filter", "x", problems=["syscall filter: EINVAL"])}))
    assert report["problems"] == ["cgroups: EBUSY", "mounts: EINVAL", "syscall filter: EINVAL"]


def test_without_a_cgroup_the_report_says_what_bounds_memory_and_what_does_not():
    bare = full_root_box(cgroup=not_available("cgroup", "not root"),
                         rlimits=applied("rlimits", "", limits=LIMITS, nice=10))
    report = isolation.box_report(bare)
    assert report["memory"].startswith("each process at most 3072 MiB of address space, at most 64 processes")
    assert "memfd, System V and POSIX IPC" in report["memory"] and "NOT bounded" not in report["memory"]
    assert report["cpu"] == "300 s of CPU per process, lower priority (nice 10); no share of its own"
    unfiltered = isolation.box_report(bare[:-1] + [failed("syscall filter", "x")])
    assert "NOT bounded (no syscall filter): memfd" in unfiltered["memory"]


def test_a_refusal_ends_the_report_with_what_held_until_then():
    report = isolation.box_report(full_root_box(
        **{"own uid": refused("own uid", "x", problems=["could not drop root privileges: EPERM"])})[:8])
    assert report["refused"] is True and report["confined"] is False and "uid" not in report
    assert report["problems"] == ["could not drop root privileges: EPERM"] and "fs" not in report
    user = full_root_box(**{"own uid": not_available("own uid", "x", uid=0),
                            "capabilities": refused("capabilities", "x", problems=["uid 0 without a user namespace"])})
    report = isolation.box_report(user[:9])
    assert report["refused"] is True and report["uid"] == "the grading user's uid 0"


def test_a_seal_is_named_with_the_filter_and_flagged_without_what_keeps_it():
    sealed = applied("code seal", "a guard's kernels (6 functions)", what="a guard's kernels", count=6)
    report = isolation.box_report(full_root_box(**{"code seal": sealed}))
    assert report["sealed"] == "a guard's kernels"
    assert report["syscalls"] == "seccomp: no new sockets; sealed: a guard's kernels (6 functions)"
    assert report["problems"] == []
    loose = isolation.box_report(full_root_box(**{"code seal": sealed, "Landlock": failed("Landlock", "x")}))
    assert loose["problems"] == ["code seal: no Landlock here, so the sealed code could be written back"]


@linux_only
def test_a_real_box_reports_through_the_same_verdict(tmp_path):
    """The loop's results, from a fork where every layer is switched off or has
    nothing to do, give the report the verdict draws."""
    quiet = config(tmp_path, disable=frozenset({"landlock", "seccomp", "minimal_root"}))

    def body():
        box = confinement.confine(quiet, [not_available("cgroup", "test"),
                                          applied("namespaces", "", flags=namespaces.CLONE_NEWUSER)],
                                  keep_fds=[child_pipe()])
        return [plain(result) for result in box.results], isolation.box_report(box.results)

    results, report = in_child(body, unshare=namespaces.CLONE_NEWUSER)[1]
    assert [result["layer"] for result in results] == [layer.name for layer in confinement.LAYERS]
    assert report["confined"] is False and "Landlock: disabled for this run" in report["problems"]
