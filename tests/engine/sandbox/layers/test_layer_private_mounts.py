"""Layer "private mounts" (autograder/sandbox/confine/layers/root.py): in the box's
mount namespace, no mount propagates to the machine or from it."""
from autograder.sandbox.confine import namespaces
from autograder.sandbox.confine.layers import root
from autograder.sandbox.confine.layers.result import Status
from support.layer_support import box, config, in_child, linux_only, namespaces_held, plain, root_only


def _shared_mounts():
    with open("/proc/self/mountinfo") as info:
        return [line.split()[4] for line in info if "shared:" in line.split(" - ")[0]]

@linux_only
@root_only
def test_no_mount_of_the_box_is_shared_with_the_machine(tmp_path):
    def body():
        # in this fork's own mount namespace: "/" shared, as systemd leaves it
        namespaces.mount(None, "/", None, namespaces.MS_REC | (1 << 20))  # MS_SHARED
        before = _shared_mounts()
        result = root.private_mounts(box(config(tmp_path), namespaces_held(namespaces.CLONE_NEWNS)))
        return plain(result), before, _shared_mounts()

    result, before, after = in_child(body, unshare=namespaces.CLONE_NEWNS)[1]
    assert "/" in before and after == []
    assert result["status"] == "applied" and result["problems"] == []

def test_without_a_mount_namespace_of_its_own_nothing_is_touched(tmp_path):
    result = root.private_mounts(box(config(tmp_path), namespaces_held(namespaces.CLONE_NEWPID)))
    assert result.status is Status.NOT_AVAILABLE and result.problems == ()

@linux_only
def test_a_refusal_is_a_problem_in_the_report(tmp_path, monkeypatch):
    def refuse():
        raise OSError(22, "mount /: Invalid argument")

    monkeypatch.setattr(namespaces, "make_private", refuse)
    result = root.private_mounts(box(config(tmp_path), namespaces_held(namespaces.CLONE_NEWNS)))
    assert result.status is Status.FAILED and result.problems == ("mounts: [Errno 22] mount /: Invalid argument",)
