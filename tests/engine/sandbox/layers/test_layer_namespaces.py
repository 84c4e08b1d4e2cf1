"""Layer "namespaces" (autograder/sandbox/confine/layers/namespaces.py): entered
before the worker is forked, so that the worker is PID 1 of its own PID
namespace, with an empty network and its own mount and IPC namespaces."""
import os

from autograder.sandbox.confine import namespaces
from autograder.sandbox.confine.layers import namespaces as layer
from autograder.sandbox.confine.layers.result import Status
from support.layer_support import config, in_child, linux_only, plain, root_only

ALL = namespaces.CLONE_NEWNS | namespaces.CLONE_NEWPID | namespaces.CLONE_NEWNET | namespaces.CLONE_NEWIPC


def _entered_then_forked(config_):
    """(In a child) Enter, fork the next child, and say what it sees."""
    def body():
        ours = {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in ("net", "ipc", "mnt")}
        result = layer.enter(config_)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            seen = [os.getpid() == 1] + [os.readlink(f"/proc/self/ns/{kind}") != ours[kind]
                                         for kind in ("net", "ipc", "mnt")]
            seen.append(os.listdir("/sys/class/net") if os.path.isdir("/sys/class/net") else None)
            os.write(write, repr(seen).encode())
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read) as answer:
            return plain(result), answer.read()
    return in_child(body)[1]


@linux_only
@root_only
def test_as_root_the_worker_is_pid_1_of_new_pid_network_ipc_and_mount_namespaces(tmp_path):
    result, seen = _entered_then_forked(config(tmp_path, uid=1, gid=1))
    assert result["status"] == "applied" and result["facts"]["flags"] == ALL and result["problems"] == []
    assert result["words"] == "PID, mount, network, IPC"
    assert seen.startswith("[True, True, True, True")


@linux_only
def test_without_root_a_user_namespace_comes_first(tmp_path):
    result, seen = _entered_then_forked(config(tmp_path))
    if result["status"] == "failed":  # a kernel or distribution that refuses them: the report says why
        assert result["problems"] and result["problems"][0].startswith("user namespace: ")
        return
    assert result["facts"]["flags"] == ALL | namespaces.CLONE_NEWUSER and result["words"].startswith("user, PID")
    assert seen.startswith("[True, True, True, True")


@linux_only
@root_only
def test_the_zygote_s_worker_enters_the_rest_itself(tmp_path):
    """As root the zygote asks for the PID namespace only; its worker (PID 1) enters the others."""
    def body():
        namespaces.unshare(namespaces.CLONE_NEWPID)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(write, repr(plain(layer.enter_rest())).encode())
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read) as answer:
            return answer.read()
    assert "'flags': %d" % ALL in in_child(body)[1]


def test_switched_off_or_refused_the_report_says_why(tmp_path):
    off = layer.enter(config(tmp_path, disable=frozenset({"namespaces"})))
    assert off.status is Status.NOT_AVAILABLE and off.problems == ("namespaces: disabled for this run",)
    assert off.fact("flags") == 0
    refused = layer.held(0, ["user namespace: Operation not permitted (unprivileged user namespaces are ...)"])
    assert refused.status is Status.FAILED and refused.fact("flags") == 0 and len(refused.problems) == 1
    partial = layer.held(namespaces.CLONE_NEWPID, ["namespaces: Operation not permitted"])
    assert partial.held and partial.words == "PID" and partial.problems == ("namespaces: Operation not permitted",)
