"""Layer "cpu affinity" (autograder/sandbox/confine/layers/process.py): the box
runs on the CPUs its grading process asked for; anything else leaves it where
it was (speed only, never confinement)."""
import os

import pytest

from autograder.sandbox.confine.layers import process
from autograder.sandbox.confine.layers.result import Status
from support.layer_support import box, config, in_child, plain

ALLOWED = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
pytestmark = pytest.mark.skipif(not ALLOWED, reason="no CPU affinity here (macOS, Windows)")


def test_the_box_runs_on_the_cpus_asked_for(tmp_path):
    wanted = ALLOWED[-1]

    def body():
        return plain(process.cpu_affinity(box(config(tmp_path, cpus=(wanted, 10**6))))), sorted(os.sched_getaffinity(0))

    result, runs_on = in_child(body)[1]
    assert runs_on == [wanted] and result["status"] == "applied" and result["facts"]["cpus"] == (wanted,)


@pytest.mark.parametrize("cpus", [None, (), (10**6,), (-1,)], ids=["none", "empty", "no-such-cpu", "negative"])
def test_cpus_that_cannot_be_used_leave_the_box_where_it_was(tmp_path, cpus):
    def body():
        return plain(process.cpu_affinity(box(config(tmp_path, cpus=cpus)))), sorted(os.sched_getaffinity(0))

    result, runs_on = in_child(body)[1]
    assert runs_on == ALLOWED and result["status"] == Status.NOT_AVAILABLE.value and result["problems"] == []
