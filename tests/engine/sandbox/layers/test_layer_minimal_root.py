"""Layer "minimal root" (autograder/sandbox/confine/layers/root.py): the box's
root is a tree built for it -- what it reads, read-only; its module; its scratch --
with no socket file, no /tmp and no grader in sight."""
import os
import pathlib
import string
import sys

from autograder.sandbox.confine import minimal_root, namespaces
from autograder.sandbox.confine.layers import root
from autograder.sandbox.confine.layers.result import Status
from support.helpers import ROOT
from support.layer_support import MODULE, box, config, errno_of, in_child, linux_only, namespaces_held, plain, root_only

REPO = str(ROOT)
# The interpreter's folders are bound into the box, and a checkout's venv may live
# under /tmp or /home: the top folders on the interpreter's way may show, no other.
ON_THE_WAY = {pathlib.Path(path).resolve().parts[1] for path in (sys.prefix, sys.base_prefix, sys.executable)}
HIDDEN_TOPS = [top for top in ("tmp", "run", "home", "var") if top not in ON_THE_WAY]


@linux_only
@root_only
def test_the_box_sees_only_its_own_tree(tmp_path):
    emptied = os.path.realpath(string.__file__)  # as a module guard's sources are shown
    boxed = config(tmp_path, forbidden=(REPO,), emptied=(emptied,))

    def body():
        made = box(boxed, namespaces_held(namespaces.CLONE_NEWNS))
        made.results.append(root.private_mounts(made))
        assert made.held("private mounts")  # never a mount of the test's on the machine
        result = root.minimal(made)
        made.results.append(result)
        with open(os.path.join(made.submission, f"{MODULE}.py")) as module:
            source = module.read()
        with open(os.path.join(made.scratch, "note"), "w") as note:
            note.write("scratch is writable")
        with open(emptied) as sealed_source:
            seen_empty = sealed_source.read() == ""
        return (plain(result), sorted(os.listdir("/")), source, seen_empty,
                [os.path.exists(path) for path in [f"/{top}" for top in HIDDEN_TOPS] + [REPO + "/autograder", str(tmp_path)]],
                errno_of(lambda: open("/usr/placed-by-a-box", "w")), made.submission, made.scratch)

    result, top, source, seen_empty, present, usr_write, submission, scratch = \
        in_child(body, unshare=namespaces.CLONE_NEWNS)[1]
    assert result["status"] == "applied", result
    assert "box" in top and "usr" in top and not set(HIDDEN_TOPS) & set(top)
    assert source == "ANSWER = 42\n" and seen_empty
    assert present == [False] * (len(HIDDEN_TOPS) + 2) and usr_write == 30  # EROFS
    assert (submission, scratch) == (minimal_root.SUBMISSION, minimal_root.SCRATCH)
    assert result["facts"]["bound"] >= 3 and result["facts"]["scratch"] is True
    assert result["words"].startswith(f"minimal (pivot_root): {result['facts']['bound']} read-only folders")


def test_switched_off_it_says_so_and_without_mounts_it_stays_quiet(tmp_path):
    off = root.minimal(box(config(tmp_path, disable=frozenset({"minimal_root"})),
                           namespaces_held(namespaces.CLONE_NEWNS)))
    assert off.status is Status.NOT_AVAILABLE and off.problems == ("minimal root: disabled for this run",)
    quiet = root.minimal(box(config(tmp_path), namespaces_held(0)))
    assert quiet.status is Status.NOT_AVAILABLE and quiet.problems == ()


@linux_only
def test_a_root_the_kernel_refuses_leaves_the_whole_tree_and_says_so(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(1, "pivot_root: Operation not permitted")

    monkeypatch.setattr(minimal_root, "enter", refuse)
    result = root.minimal(box(config(tmp_path), namespaces_held(namespaces.CLONE_NEWNS)))
    assert result.status is Status.FAILED
    assert result.problems == ("minimal root: [Errno 1] pivot_root: Operation not permitted "
                               "(the whole file system stays visible, read-only)",)
