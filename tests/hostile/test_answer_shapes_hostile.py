"""Hostile submissions that answer for their own box: every module rewrites each answer
its worker sends (the wire's ``send_frame``, found in the worker's frames) into a
well-formed frame with the right request id and a wrong shape -- a list where a run
returns a dict, a key missing, a string where a tensor goes, a run's lists cut short,
nested dicts, tensors of another dtype, a huge list, no record of what the guard refused.

Each test fails as the student's, saying why (an answer that could not be read, or what
the value got wrong), never "the grader could not check"; the grade completes with a
complete report (graded in this process: the command line adds nothing to what is checked here)."""
import sys
import time

import pytest

from autograder.sandbox.client import Limits
from support.helpers import solution_source

pytestmark = [pytest.mark.hostile, pytest.mark.slow]  # its one test grades ~2 s

# Prepended to each module: the worker's own socket writer, rewritten from inside the box.
FORGER = '''
import sys as _sys, zlib as _zlib


def _worker_wire():
    """The wire module the worker serving this import uses, found in its own frames."""
    frame = _sys._getframe()
    while frame is not None:
        found = frame.f_globals.get("wire")
        if hasattr(found, "send_frame") and hasattr(found, "recv_frame"):
            return found
        frame = frame.f_back
    return None


_wire = _worker_wire()
_LAST = {}


def _tensors(node, found):
    if isinstance(node, dict):
        if "$tensor" in node:
            found.append(node)
        for item in node.values():
            _tensors(item, found)
    elif isinstance(node, list):
        for item in node:
            _tensors(item, found)
    return found


def _wrong_shape(value, choice):
    """A scenario's answer (plain JSON) that its declared shape refuses, whatever the run."""
    top = value.get("$dict") if isinstance(value, dict) else None
    if top is None:  # a list where a dict is expected, or the reverse
        return {"$dict": {"value": value}}
    if choice == 0:
        return list(top.values())
    if choice == 1:
        top = dict(top)
        top.pop(sorted(top)[0])
        return {"$dict": top}
    tensors = _tensors(top, [])
    if choice == 2 and tensors:
        tensors[-1].clear()  # the last: the first may stand where a run returns whatever it got
        tensors[-1]["$dict"] = {"not": "a tensor"}
        return value
    for key in ("scales", "reports", "returns"):  # a run's lists cut short
        if isinstance(top.get(key), list) and top[key]:
            top[key] = top[key][:-1]
            return value
    return {"$dict": {**top, "unexpected": {"$dict": {"deep": [[[{"$tuple": [1, "x"]}]]]}}}}


_WEIRD = [
    {"$dict": {"gradients": {"$dict": {"a": [1, [2, [3]]]}}, "grad_norm": "inf", "next_scale": [1.0, 2.0]}},
    [{"$opaque": "generator"}, {"$tuple": []}, None],
    {"$tensor": "int64", "shape": [2], "data": "AQAAAAAAAAACAAAAAAAAAA=="},
    "a string",
    [0.5] * 50_000,
    {"$tuple": [{"$tensor": "bool", "shape": [3], "data": "AQAB"}, "x"]},
    {"$dict": {"should_step": {"$tensor": "float32", "shape": [2], "data": "AACAPwAAAEA="},
               "reason": ["finite_gradient"], "clip_coefficient": {"$tensor": "float32", "shape": [2],
                                                                   "data": "AACAPwAAAEA="},
               "next_scale": {"$tensor": "float32", "shape": [2], "data": "AACAPwAAAEA="},
               "grad_norm": {"$tensor": "float16", "shape": [], "data": "ADw="},
               "gradients": [{"$tensor": "int32", "shape": [2, 1], "data": "AQAAAAIAAAA="}]}},
]


def _forged(message):
    request = _LAST.get("request") or {}
    if not message.get("ok") or not isinstance(message.get("result"), dict):
        return message
    choice = _zlib.crc32(repr(sorted(request.items())).encode()) + _LAST.setdefault("count", 0)
    _LAST["count"] += 1
    result = message["result"]
    if request.get("op") == "scenario":
        if "delegation" in message and choice % 5 == 4:
            del message["delegation"]  # an honest answer that hides what the guard saw
        else:
            result["value"] = _wrong_shape(result["value"], choice % 4)
    elif request.get("op") == "call":
        result["value"] = _WEIRD[choice % len(_WEIRD)]
        if "args_after" in result:
            result["args_after"] = [{"$dict": {}}, "x", [], 7][choice % 4]
    return message


if _wire is not None:
    _send, _receive = _wire.send_frame, _wire.recv_frame

    def _recv_frame(*args, **kwargs):
        _LAST["request"] = request = _receive(*args, **kwargs)
        return request

    def _send_frame(sock, message, deadline=None):
        return _send(sock, _forged(message), deadline)

    _wire.send_frame, _wire.recv_frame = _send_frame, _recv_frame

'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux sandbox's worker")
def test_answers_of_the_wrong_shape_fail_only_the_students_tests(grade_dir):
    modules = ("amp_update", "loss_scaler", "amp_training_step")
    started = time.monotonic()
    report = grade_dir({module: FORGER + solution_source(module) for module in modules}, seed=27,
                       limits=Limits(call_timeout=4.0, module_budget=60.0))
    elapsed = time.monotonic() - started
    results = report.to_gradescope()  # what results.json holds
    tests = {module: [t for t in results["tests"] if module in t["tags"]] for module in modules}
    everything = "\n".join(t["output"] for module in modules for t in tests[module])
    assert "could not check" not in everything and "tell the course staff" not in everything, everything[:3000]
    for module in modules:
        assert tests[module] and all(t["status"] == "failed" for t in tests[module]), \
            [t["name"] for t in tests[module] if t["status"] != "failed"]
        # the shapes refused the runs' answers; the direct calls' values were judged as values
        outputs = "\n".join(t["output"] for t in tests[module])
        assert "could not be read (an answer of the wrong form" in outputs, (module, outputs[:2000])
    scaler = "\n".join(t["output"] for t in tests["loss_scaler"])
    assert "no record of what the guard refused" in scaler, scaler[:2000]
    amp = "\n".join(t["output"] for t in tests["amp_update"])
    assert "should return a dict" in amp or "should be a list" in amp, amp[:2000]
    assert elapsed < 300, f"the grade took {elapsed:.0f} s"
