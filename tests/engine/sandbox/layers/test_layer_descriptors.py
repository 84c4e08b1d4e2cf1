"""Layer "descriptors" (autograder/sandbox/confine/layers/process.py): nothing the
worker inherited stays open but its channel, its log and its report pipe."""
import os

from autograder.sandbox.confine.layers import process
from support.layer_support import box, child_pipe, config, in_child, plain


def test_only_the_descriptors_the_box_keeps_stay_open(tmp_path):
    def body():
        inherited = [os.open(os.devnull, os.O_RDONLY) for _ in range(3)] + list(os.pipe())
        kept = os.open(tmp_path / "log", os.O_WRONLY | os.O_CREAT, 0o600)
        result = process.descriptors(box(config(tmp_path), keep_fds=(kept, child_pipe())))
        still = sorted(int(name) for name in os.listdir("/proc/self/fd"))
        return plain(result), inherited, kept, child_pipe(), still

    result, inherited, kept, pipe, still = in_child(body)[1]
    assert kept in still and pipe in still and not set(inherited) & set(still)
    assert len(set(still) - {0, 1, 2, kept, pipe}) <= 1  # the listing's own descriptor
    assert result["status"] == "applied" and result["facts"]["closed"] >= len(inherited)
