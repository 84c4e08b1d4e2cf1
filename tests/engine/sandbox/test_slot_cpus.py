"""A batch's grading processes (slots) each run on a CPU of their own, and so do the
boxes each asks for: a call and its answer wake each other on one CPU. Where a box
runs is never a matter of confinement: a CPU the box may not use, or a value that
is not a CPU, changes nothing and the box works all the same."""
import json
import os
import time
import types

import pytest

from autograder.batch import slots
from autograder.sandbox.client import Limits, Sandbox
from support import toy

ALLOWED = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_affinity = pytest.mark.skipif(not ALLOWED, reason="no CPU affinity here (macOS, Windows)")
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs two CPUs this process may use")

REPORTS_AFFINITY = '''
import os


def cpus():
    return sorted(os.sched_getaffinity(0))
'''


def test_slot_cpu_spreads_slots_over_the_cpus():
    assert slots.slot_cpu([0, 1], []) == 0
    assert slots.slot_cpu([0, 1], [0]) == 1
    assert slots.slot_cpu([0, 1], [0, 1]) == 0          # more slots than CPUs: shared, evenly
    assert slots.slot_cpu([0, 1], [1, 0, 0]) == 1
    assert slots.slot_cpu([2, 5], [2]) == 5             # only the CPUs this process may use
    assert slots.slot_cpu([0, 1], [None, 0]) == 1       # a slot started without one counts for none
    assert slots.slot_cpu([3], []) is None              # one CPU: nothing to choose
    assert slots.slot_cpu([], []) is None               # no affinity here (macOS)


@pytest.fixture
def affinity_sandbox(tmp_path, toy_boxes):
    """``make(cpus)``: a Sandbox whose module answers with the CPUs its box may use
    (the session's toy zygote, asked for boxes on ``cpus``; as it was afterwards)."""
    spec = toy.box_spec(tmp_path, REPORTS_AFFINITY)
    made, before = [], toy_boxes.cpus

    def make(cpus):
        toy_boxes.cpus = cpus
        made.append(Sandbox(toy.MODULE, spec, toy_boxes, Limits()))
        return made[-1]

    try:
        yield make
    finally:
        toy_boxes.cpus = before
        for sandbox in made:
            sandbox.close()


@pytest.mark.slow
@needs_two_cpus
def test_a_box_runs_on_the_cpus_its_grading_process_asked_for(affinity_sandbox):
    for cpu in ALLOWED[:2]:
        outcome = affinity_sandbox([cpu]).call("cpus")
        assert outcome.ok, outcome.error
        assert outcome.value == [cpu]
    anywhere = affinity_sandbox(None).call("cpus")
    assert anywhere.ok and anywhere.value == ALLOWED


@pytest.mark.slow
@needs_affinity
@pytest.mark.parametrize("cpus", [[10**6], ["0"], [True], [-1]], ids=["no-such-cpu", "text", "bool", "negative"])
def test_cpus_that_cannot_be_used_leave_the_box_where_it_was(affinity_sandbox, cpus):
    outcome = affinity_sandbox(cpus).call("cpus")
    assert outcome.ok, outcome.error
    assert outcome.value == ALLOWED


@needs_two_cpus
def test_each_slot_and_its_boxes_run_on_a_cpu_of_their_own(tmp_path, monkeypatch):
    """Two slots of one batch: each reports the CPUs it runs on and those its
    boxes are asked to use (the grading itself is replaced here)."""
    import autograder.sandbox.boxes as box_factories

    class Channels:
        def new_channel(self):
            import socket

            ours, theirs = socket.socketpair()
            theirs.close()
            return ours

    def report(order, boxes):
        with open(order["results"], "w", encoding="utf-8") as out:
            json.dump({"runs_on": sorted(os.sched_getaffinity(0)), "boxes": boxes.cpus}, out)
        return True

    monkeypatch.setattr(slots, "_grade_one", report)  # what the forked slot runs
    monkeypatch.setattr(box_factories, "boxes_from_channel", lambda channel: types.SimpleNamespace(cpus=None))
    pool = slots.JudgeSlots(Channels())
    jobs = []
    for index in range(2):
        job = types.SimpleNamespace(submission=tmp_path, seed=1, include_hidden=False, layout="bare", uid=None,
                                    lang="en", log=tmp_path / f"log{index}", results=tmp_path / f"out{index}.json",
                                    _verdict=lambda reason, ok: ("ok", reason))
        pool.start(job)  # both busy: the second gets a slot of its own
        jobs.append(job)
    try:
        deadline = time.monotonic() + 30
        while not all(job.results.exists() and job.results.stat().st_size for job in jobs):
            assert time.monotonic() < deadline, "the slots did not answer"
            time.sleep(0.02)
        seen = [json.loads(job.results.read_text(encoding="utf-8")) for job in jobs]
    finally:
        pool.close()
    assert [entry["runs_on"] for entry in seen] == [[ALLOWED[0]], [ALLOWED[1]]]
    assert [entry["boxes"] for entry in seen] == [[ALLOWED[0]], [ALLOWED[1]]]
    assert not pool.slots
