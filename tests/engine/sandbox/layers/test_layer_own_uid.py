"""Layer "own uid" (autograder/sandbox/confine/layers/privileges.py): as root, the
student's code runs as a uid of its own with no supplementary groups; where the
uid cannot be changed, the box refuses to run student code."""
import os

from autograder.sandbox import uids
from autograder.sandbox.confine.layers import privileges
from autograder.sandbox.confine.layers.result import Status
from support.layer_support import box, config, in_child, linux_only, plain, root_only


@linux_only
@root_only
def test_as_root_a_uid_of_its_own_without_groups(tmp_path):
    uid = uids.allocate(1)[0]
    boxed = config(tmp_path, uid=uid, gid=uid)

    def body():
        os.setgroups([0, 4, 27])  # as a runner in the adm and sudo groups
        result = privileges.own_uid(box(boxed))
        return plain(result), os.getresuid(), os.getresgid(), os.getgroups()

    result, resuid, resgid, groups = in_child(body)[1]
    assert resuid == (uid, uid, uid) and resgid == (uid, uid, uid) and groups == []
    assert result["status"] == "applied" and result["words"] == f"uid {uid} of its own"
    assert result["facts"] == {"uid": uid}


@linux_only
@root_only
def test_a_uid_that_cannot_be_taken_refuses_the_box(tmp_path):
    first, second = uids.allocate(2)
    boxed = config(tmp_path, uid=second, gid=second)

    def body():
        os.setresuid(first, first, first)  # no longer allowed to change it
        return plain(privileges.own_uid(box(boxed)))

    result = in_child(body)[1]
    assert result["status"] == Status.REFUSED.value
    assert result["problems"] == [result["words"]] and result["words"].startswith("could not drop root privileges: ")


def test_without_root_the_grading_user_s_uid_is_reported(tmp_path):
    result = privileges.own_uid(box(config(tmp_path)))
    assert result.status is Status.NOT_AVAILABLE and result.fact("uid") == os.geteuid() and result.problems == ()
