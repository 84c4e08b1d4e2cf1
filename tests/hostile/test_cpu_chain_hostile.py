"""A chain of short-lived processes (issue 46): the box's first process ignores
SIGCHLD, so the kernel reaps every process it starts itself and adds their CPU time
to no parent; each link burns 50 ms of CPU, forks the next and exits. No live process
ever holds more than 50 ms, so a clock that sums the live processes sees almost
nothing. The call clock (autograder/sandbox/call_clock.py) charges the box's cgroup
count as root (every process it ever ran) and, without one, the call's wall time
plus, whenever a count finds a process besides the worker, the wall time since the
last count: either way the chain is charged.

Harmless: every chain stops after a bounded number of links and at a wall-clock
deadline of its own, whatever the clock does, and its processes carry a marker
the test sweeps for. The limits are small, so each call ends within seconds.
"""
import contextlib
import os
import pathlib
import secrets
import sys
import time

import pytest

from support import toy
from support.helpers import solution_source
from support.hostile import full_marks_in_every_module, graded_beside_honest, sweep

pytestmark = [pytest.mark.hostile, pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux sandbox")]
MARK = f"ampchain{secrets.token_hex(3)}"  # 14 characters: a process's name holds 15
RUNNING, DONE = MARK + "r", MARK + "d"
LINK_S = 0.05

# The chain: ``_chain(links, linger)`` starts it in the background and returns a
# descriptor that reads its end once the last link has ended (``_wait``); that last
# link lingers (asleep, named DONE) for ``linger`` seconds. STOP_AT: a time.time()
# past which no link burns, lingers or is waited for, the test's own bound.
CHAIN = '''
import ctypes, os, select, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps every child itself
STOP_AT = @STOP_AT@

def _name(name):
    ctypes.CDLL(None).prctl(15, name, 0, 0, 0)

def _burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass

def _chain(links, linger=0.0):
    ended, holding = os.pipe()  # each link holds ``holding`` until it ends
    if os.fork() != 0:
        os.close(holding)
        return ended
    try:
        os.close(ended)
        _name(b"@RUNNING@")
        for _ in range(links):
            if time.time() > STOP_AT:
                break
            _burn(@LINK_S@)
            os.write(1, b".")  # one byte per link in the module's log: how many ran
            if os.fork() != 0:
                os._exit(0)  # this link ends; the next one goes on
        _name(b"@DONE@")
        time.sleep(max(0.0, min(linger, STOP_AT - time.time())))
    finally:
        os._exit(0)

def _wait(ended):
    select.select([ended], [], [], max(0.0, STOP_AT - time.time()))
    os.close(ended)
'''


def chain_source(stop_after_s):
    return (CHAIN.replace("@STOP_AT@", repr(time.time() + stop_after_s)).replace("@RUNNING@", RUNNING)
            .replace("@DONE@", DONE).replace("@LINK_S@", repr(LINK_S)))


def _named(name):
    for entry in pathlib.Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == name:
                return True
        except OSError:
            continue
    return False


@contextlib.contextmanager
def chained_box(tmp_path, boxes, source, call_timeout):
    """A Sandbox of the toy module ``source`` (the chain's code first), the toy
    active; once closed, no process of the chain may still run."""
    from autograder.sandbox.client import Limits, Sandbox

    with toy.active():
        spec = toy.box_spec(tmp_path, chain_source(60.0) + source)
        sandbox = Sandbox(toy.MODULE, spec, boxes, Limits(call_timeout=call_timeout, module_budget=60.0))
        try:
            yield sandbox
        finally:
            sandbox.close()
            time.sleep(0.5)
            survivors = sweep(MARK)
    assert survivors == [], "a process of the chain outlived its box"


def test_the_keeper_counts_the_box_it_keeps(tmp_path, toy_boxes):
    """Without root a keeper shares the worker's mount namespace, so the worker's new
    root became the keeper's too, and its /proc the box's own, where the worker's pid
    is another: every count came back zero (and each call was charged its wall time,
    whatever the clock said). The count is read through the machine's /proc."""
    source = '''
def add(a, b):
    _burn(0.3)
    os.close(_chain(0, linger=20.0))
    return a + b
'''
    with chained_box(tmp_path, toy_boxes, source, call_timeout=5.0) as sandbox:
        assert sandbox.call("add", 1, 2).value == 3
        cpu, _, whole, others = sandbox._box.usage()
        assert cpu >= 0.3 and others == 1
        assert whole == (os.geteuid() == 0)  # as root the box's cgroup counts (this machine has one)


def test_a_chain_during_a_call_is_charged_and_the_call_ends_at_its_limit(tmp_path, toy_boxes):
    """The call waits for its chain (200 links, 10 s of CPU): it is charged every link
    that ran, and ends at its limit (or, on a machine so busy that the box gets less
    than its limit's CPU before it, at the wall-clock backstop)."""
    source = '''
def add(a, b):
    _wait(_chain(200))
    return a + b
'''
    with chained_box(tmp_path, toy_boxes, source, call_timeout=2.0) as sandbox:
        outcome = sandbox.call("add", 1, 2)
        assert not outcome.ok and outcome.error.kind == "timeout", outcome
        links = pathlib.Path(sandbox.printed.path).read_bytes().count(b".")
        assert links >= 1, "the chain did not run"
        # its limit, or every link that ran (each prints once it has burnt; one or two may
        # end between the last count and the kill)
        assert sandbox.spent >= min(2.0, (links - 2) * LINK_S), (sandbox.spent, links)


def test_a_chain_between_calls_is_charged_to_the_next_call(tmp_path, toy_boxes):
    """The first call starts 40 links (2 s of CPU) and returns at once; the next one,
    made once they have all run, is charged them and ends before it begins."""
    source = '''
def add(a, b):
    if a == 1:
        os.close(_chain(40, linger=30.0))
    return a + b
'''
    with chained_box(tmp_path, toy_boxes, source, call_timeout=1.0) as sandbox:
        assert sandbox.call("add", 1, 2).value == 3
        deadline = time.monotonic() + 50
        while not _named(DONE) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _named(DONE), "the chain did not finish its links"
        outcome = sandbox.call("add", 2, 3)
        assert not outcome.ok and outcome.error.kind == "timeout", outcome
        assert sandbox.spent >= 40 * LINK_S
        assert not _named(DONE), "the box that ran the chain still runs"
        assert sandbox.call("add", 2, 3).value == 5  # a fresh box, nothing left to charge


def test_a_module_that_chains_in_every_call_costs_its_own_tests_only(tmp_path):
    """amp_update right in every function, each call first holding a CPU with a chain of
    100 links (5 s of CPU: more than a call may spend) and waiting for its end, beside
    honest students in ``grade-many --jobs 2``.
    Its CPU time is bounded by its limits (the links it ran, one byte each in its
    log), its tests fail, its other modules and its neighbours keep every mark."""
    call_timeout, budget = 2.0, 4.0  # an honest call stays far within 2 s of wall time on a busy machine
    chained = chain_source(90.0) + solution_source("amp_update") + '''
def _holding(function):
    def held(*args, **kwargs):
        _wait(_chain(100))
        return function(*args, **kwargs)
    return held

unscale_gradients = _holding(unscale_gradients)
global_grad_norm = _holding(global_grad_norm)
plan_mixed_precision_update = _holding(plan_mixed_precision_update)
'''
    results, survivors = graded_beside_honest(tmp_path, "b-chain", {"amp_update": chained}, MARK, call_timeout,
                                              budget)
    assert survivors == [], "a chain outlived its box"
    for name in ("a-honest", "c-honest"):
        assert full_marks_in_every_module(results[name]), results[name]["extra_data"]["modules"]
    chain = results["b-chain"]["extra_data"]
    assert chain["modules"]["amp_update"]["score"] == 0
    assert chain["modules"]["loss_scaler"]["score"] == chain["modules"]["loss_scaler"]["max_score"]
    links = chain["printed"]["amp_update"]["bytes"]
    # the budget, and what its five or so calls overshoot it by: a count's interval each
    assert links * LINK_S <= budget + 2.5, f"{links} links ran: {links * LINK_S:.1f} s of CPU"
    if os.geteuid() != 0:  # no cgroup: the budget is wall time, and the module ends within it
        honest = max(results[name]["execution_time"] for name in ("a-honest", "c-honest"))
        assert results["b-chain"]["execution_time"] - honest <= 2 * (budget + call_timeout), (
            results["b-chain"]["execution_time"], honest)
