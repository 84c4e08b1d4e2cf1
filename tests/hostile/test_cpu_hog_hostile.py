"""A CPU hog in a class (issue 17): one student's box runs many busy processes
while honest neighbours are graded beside it by ``grade-many --jobs 2``, with a
short per-call limit: they lose nothing. Two things protect them: calls are charged
in each box's own CPU time (tests/engine/sandbox/test_call_clock.py checks the
charging itself), and as root every box has an equal, capped CPU share (cgroup).
Either one alone keeps the neighbours' marks here, so this test holds the two
together, end to end, not each.

The limit and the budget are small: the hog's first call is charged its box's
CPU time, all nine busy processes of it, at most one CPU second per second (the
cap), and the budget then ends the module; on a busy machine its box gets less
CPU and the call may run to its wall-clock backstop (four times the limit, plus
5 s). At 2 s its first call still outlasts both honest grades (about half a
second each, graded while it runs), and honest modules are charged a fraction
of a second.

Harmless: the hog's processes stop by themselves after 90 s at the latest and
carry a marker the test sweeps for.
"""
import os
import secrets
import sys

import pytest

from support.hostile import full_marks_in_every_module, graded_beside_honest

pytestmark = [pytest.mark.hostile, pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux sandbox")]
MARK = f"amphog{secrets.token_hex(4)}"

HOG = '''
import ctypes, os, time
def _spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
for _ in range(8):
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b"{comm}", 0, 0, 0)
        _spin(90)
        os._exit(0)
def unscale_gradients(scaled_gradients, scale):
    _spin(90)
def global_grad_norm(gradients):
    _spin(90)
def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    _spin(90)
'''


def test_a_cpu_hog_costs_its_neighbours_nothing(tmp_path):
    comm = MARK[:15]
    results, survivors = graded_beside_honest(tmp_path, "b-hog", {"amp_update": HOG.format(comm=comm)}, comm,
                                              call_timeout=2, module_budget=2)
    assert survivors == [], "the hog's processes outlived its box"
    for name in ("a-honest", "c-honest"):
        assert full_marks_in_every_module(results[name]), results[name]["extra_data"]["modules"]
    hog = results["b-hog"]["extra_data"]["modules"]
    assert hog["amp_update"]["score"] == 0
    assert hog["loss_scaler"]["score"] == hog["loss_scaler"]["max_score"]
    cpu = results["a-honest"]["extra_data"]["isolation"]["cpu"]
    if os.geteuid() == 0 and (os.path.isdir("/sys/fs/cgroup/cpu") or "cpu" in _v2_controllers()):
        assert "equal CPU share" in cpu, cpu
    else:
        assert "nice" in cpu, cpu


def _v2_controllers():
    from autograder.sandbox.confine.cgroups import _v2_controllers as controllers

    return controllers()
