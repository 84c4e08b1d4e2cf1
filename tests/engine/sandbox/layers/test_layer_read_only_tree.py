"""Layer "read-only tree" (autograder/sandbox/confine/layers/root.py): where no
minimal root could be built, the machine's tree read-only, the grader's folders
covered, a scratch tmpfs the only place to write."""
import os

from autograder.sandbox.confine import namespaces
from autograder.sandbox.confine.layers import root
from autograder.sandbox.confine.layers.result import Status, applied, failed
from support.layer_support import box, config, errno_of, in_child, linux_only, namespaces_held, plain, root_only


@linux_only
@root_only
def test_the_machine_s_tree_read_only_with_the_grader_covered(tmp_path):
    hidden = tmp_path / "grader"
    hidden.mkdir()
    (hidden / "oracle.py").write_text("SECRET = 1\n", encoding="utf-8")
    boxed = config(tmp_path, hide=(str(hidden),))

    def body():
        made = box(boxed, namespaces_held(namespaces.CLONE_NEWNS), failed("minimal root", "test"))
        made.results.append(root.private_mounts(made))
        assert made.held("private mounts")  # never a mount of the test's on the machine
        result = root.read_only_tree(made)
        with open(os.path.join(boxed.scratch, "note"), "w") as note:
            note.write("scratch is writable")
        return plain(result), os.listdir(hidden), errno_of(lambda: open(tmp_path / "outside", "w").close())

    result, hidden_now, outside = in_child(body, unshare=namespaces.CLONE_NEWNS)[1]
    assert result["status"] == "applied" and result["words"] == "the machine's, read-only"
    assert hidden_now == [] and outside == 30  # EROFS
    assert result["facts"] == {"proc": False, "scratch": True} and result["problems"] == []
    assert not (tmp_path / "scratch" / "note").exists()  # it was the box's tmpfs


def test_only_where_the_minimal_root_failed(tmp_path):
    held = root.read_only_tree(box(config(tmp_path), namespaces_held(namespaces.CLONE_NEWNS),
                                   applied("minimal root", "minimal", scratch=True)))
    assert held.status is Status.NOT_AVAILABLE and held.words == "the minimal root holds"
    quiet = root.read_only_tree(box(config(tmp_path), namespaces_held(0), failed("minimal root", "x")))
    assert quiet.status is Status.NOT_AVAILABLE and quiet.problems == ()
