"""Layer "capabilities" (autograder/sandbox/confine/layers/privileges.py): without
root, the box's user namespace keeps no capability, the bounding set included;
a process that would still be uid 0 outside one refuses to run student code."""
import os

from autograder.sandbox.confine import namespaces
from autograder.sandbox.confine.layers import privileges
from autograder.sandbox.confine.layers.result import Status
from support.layer_support import box, config, in_child, linux_only, namespaces_held, plain


def _capabilities():
    with open("/proc/self/status") as status:
        return {line.split(":")[0]: int(line.split()[1], 16) for line in status if line.startswith("Cap")}


@linux_only
def test_in_a_user_namespace_every_capability_goes(tmp_path):
    def body():
        before = _capabilities()
        result = privileges.capabilities(box(config(tmp_path), namespaces_held(namespaces.CLONE_NEWUSER)))
        return plain(result), before, _capabilities()

    result, before, after = in_child(body, unshare=namespaces.CLONE_NEWUSER)[1]
    assert before["CapEff"] and before["CapBnd"]  # a new user namespace starts with all of them
    assert after["CapEff"] == after["CapPrm"] == after["CapBnd"] == after["CapInh"] == 0
    assert result["status"] == "applied" and result["words"] == "no capabilities"


def test_uid_0_without_a_user_namespace_refuses_and_as_root_the_uid_change_did_it(tmp_path):
    outside = privileges.capabilities(box(config(tmp_path), namespaces_held(namespaces.CLONE_NEWPID)))
    if os.geteuid() == 0:
        assert outside.status is Status.REFUSED
        assert outside.problems == ("uid 0 without a user namespace to drop its capabilities",)
    else:
        assert outside.status is Status.NOT_AVAILABLE and outside.problems == ()
    as_root = privileges.capabilities(box(config(tmp_path, uid=1, gid=1), namespaces_held(0)))
    assert as_root.status is Status.NOT_AVAILABLE and as_root.problems == ()
