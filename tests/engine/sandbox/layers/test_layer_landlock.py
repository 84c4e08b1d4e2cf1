"""Layer "Landlock" (autograder/sandbox/confine/layers/landlock.py): the box reads
what it may read and its module, writes its scratch only; cut down to the
kernel's ABI, and where there is none the report says why."""
import os
import sys

import pytest

from autograder.sandbox.confine import landlock as kernel_landlock
from autograder.sandbox.confine.layers import landlock
from autograder.sandbox.confine.layers.result import Status, applied
from support.layer_support import box, config, errno_of, in_child, namespaces_held, plain

ABI = kernel_landlock.abi_version() if sys.platform.startswith("linux") else 0
needs_landlock = pytest.mark.skipif(ABI < 1, reason="no Landlock in this kernel")


@needs_landlock
def test_the_box_reads_its_module_and_writes_its_scratch_only(tmp_path):
    (tmp_path / "hidden_tests.py").write_text("ORACLE = 1\n", encoding="utf-8")
    boxed = config(tmp_path)

    def body():
        result = landlock.landlock(box(boxed, namespaces_held(0),
                                       applied("read-only tree", "", proc=False, scratch=True)))
        return (plain(result),
                errno_of(lambda: open(os.path.join(boxed.submission, "student_module.py")).read()),
                errno_of(lambda: open(tmp_path / "hidden_tests.py").read()),
                errno_of(lambda: open(os.path.join(boxed.scratch, "note"), "w").close()),
                errno_of(lambda: open(tmp_path / "outside", "w").close()),
                errno_of(lambda: open("/usr/placed-by-a-box", "w").close()))

    result, module, hidden, scratch, outside, usr = in_child(body)[1]
    assert (module, hidden, scratch, outside) == (0, 13, 0, 13) and usr in (13, 30)  # EACCES; EROFS
    assert result["status"] == "applied" and result["facts"] == {"abi": ABI}
    assert result["words"].startswith(f"Landlock ABI {ABI}: file system")


def test_where_it_cannot_be_had_the_report_says_why(tmp_path, monkeypatch):
    off = landlock.landlock(box(config(tmp_path, disable=frozenset({"landlock"}))))
    assert off.status is Status.NOT_AVAILABLE and off.problems == ("Landlock: disabled for this run",)
    if not sys.platform.startswith("linux"):
        return
    monkeypatch.setattr(kernel_landlock, "abi_version", lambda: 0)
    absent = landlock.landlock(box(config(tmp_path)))
    assert absent.status is Status.NOT_AVAILABLE and absent.problems == ("Landlock: not available in this kernel",)

    def refuse(abi):
        raise kernel_landlock.LandlockError(22, "landlock_create_ruleset failed")

    monkeypatch.setattr(kernel_landlock, "abi_version", lambda: 6)
    monkeypatch.setattr(kernel_landlock, "Ruleset", refuse)
    failed = landlock.landlock(box(config(tmp_path)))
    assert failed.status is Status.FAILED
    assert failed.problems == ("Landlock: [Errno 22] landlock_create_ruleset failed",)
