"""Every frame a box sends is the box's responsibility (autograder.sandbox.client and
wire): random and adversarial answers, read by the judge's own call path from a
box stand-in, come out as the call's protocol error (or an answer, or the call's
own time limit) -- never as an exception in the judge, never as text an output
cannot write, and within a bounded time and CPU of the judge's."""
import base64
import json
import math
import random
import struct
import time

import pytest

from autograder.sandbox import wire
from autograder.sandbox.client import Limits, Sandbox
from support.box_stand_in import StandInBox, framed, reply

SEEDS = (1, 2, 3)
FRAMES_PER_SEED = 150
PER_FRAME_S = 2.0  # wall, generously: the judge decodes at most one frame of 4 MiB per call


def call_box(answer, timeout=2.0, cpu=None, trickle_s=0.0):
    """One call of the judge against a box that writes ``answer(request_id)``;
    returns (outcome, sandbox, wall seconds, the judge's CPU seconds)."""
    sandbox = Sandbox("toy_sum", {"present": True}, boxes=None, limits_=Limits(call_timeout=timeout))
    box = StandInBox(answer, cpu=cpu, trickle_s=trickle_s)
    sandbox._box = box
    wall, cpu_time = time.monotonic(), time.thread_time()
    try:
        outcome = sandbox._request({"op": "call", "function": "f", "args": [], "kwargs": {}}, timeout)
        cpu_time = time.thread_time() - cpu_time
    finally:
        box.close()
    return outcome, sandbox, time.monotonic() - wall, cpu_time


def writable_everywhere(value):
    """Every string of ``value`` can be written as UTF-8 and holds no NUL."""
    if isinstance(value, str):
        value.encode("utf-8")
        return "\x00" not in value
    if isinstance(value, dict):
        return all(writable_everywhere(k) and writable_everywhere(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(writable_everywhere(item) for item in value)
    if isinstance(value, wire.Opaque):
        return writable_everywhere(value.type_name)
    return True


def assert_the_box_answered_for_itself(outcome, sandbox):
    """An answer, the student's exception, or the call's own failure: never the grader's."""
    if outcome.ok:
        assert writable_everywhere(outcome.value)
        return
    error = outcome.error
    assert error.kind in ("protocol", "exception", "timeout", "crash"), error
    for text in (error.type, error.message, error.traceback, error.code):
        assert writable_everywhere(text), error
    assert all(writable_everywhere(item) for item in sandbox.delegation)
    if error.kind == "protocol":
        assert sandbox._box is None  # a box that broke the protocol is ended
        assert sandbox.spent > 0     # and the call charged


# --------------------------------------------------------------------------- adversarial frames

TENSOR = {"$tensor": "float32", "shape": [2], "data": "AACAPwAAAEA="}  # [1.0, 2.0]


def _nested(depth):
    return b"[" * depth + b"]" * depth


ADVERSARIAL = {
    "a 5000-digit integer": lambda i: framed(b'{"id": "%s", "ok": true, "result": {"value": 1%s}}'
                                             % (i.encode(), b"0" * 5000)),
    "a 21-digit integer": lambda i: framed(b'{"id": "%s", "ok": true, "result": {"value": %s}}'
                                           % (i.encode(), b"9" * 21)),
    "digits as the error's line": lambda i: framed(b'{"id": "%s", "ok": false, "error": {"line": %s}}'
                                                   % (i.encode(), b"7" * 5000)),
    "nesting past the interpreter's recursion": lambda i: framed(
        b'{"id": "%s", "ok": true, "result": {"value": %s}}' % (i.encode(), _nested(100_000))),
    "nesting past the decoder's depth": lambda i: reply(i, json.loads(_nested(wire.MAX_DEPTH + 5))),
    "bad UTF-8": lambda i: framed(b'{"id": "%s", "ok": true, "result": {"value": "\xff\xfe\xc0"}}' % i.encode()),
    "a wrong id": lambda i: reply("0" * 16, 1.0),
    "no id": lambda i: framed(b'{"ok": true, "result": {"value": 1.0}}'),
    "an id of another type": lambda i: framed(json.dumps({"id": [i], "ok": True}).encode()),
    "NaN as a JSON constant": lambda i: framed(b'{"id": "%s", "ok": true, "result": {"value": NaN}}' % i.encode()),
    "Infinity in the error": lambda i: framed(b'{"id": "%s", "ok": false, "error": {"line": Infinity}}'
                                              % i.encode()),
    "a frame larger than the bound": lambda i: struct.pack(">I", wire.MAX_REPLY_BYTES + 1),
    "a length of 4 GiB": lambda i: b"\xff\xff\xff\xff",
    "a list as the frame": lambda i: framed(b"[1, 2, 3]"),
    "a string as the result": lambda i: framed(json.dumps({"id": i, "ok": True, "result": "x"}).encode()),
    "a tensor whose data is short": lambda i: reply(i, dict(TENSOR, data="AACAPw==")),
    "a tensor of an unknown dtype": lambda i: reply(i, dict(TENSOR, **{"$tensor": "complex64"})),
    "a tensor with a negative size": lambda i: reply(i, dict(TENSOR, shape=[-2])),
    "a tensor with a float size": lambda i: reply(i, dict(TENSOR, shape=[2.0])),
    "a tensor with a boolean size": lambda i: reply(i, dict(TENSOR, shape=[True, True])),
    "a tensor of 2**62 elements": lambda i: reply(i, dict(TENSOR, shape=[2**31 - 1] * 8, data="")),
    "a tensor with nine dimensions": lambda i: reply(i, dict(TENSOR, shape=[1] * 9)),
    "a tensor whose data is not base64": lambda i: reply(i, dict(TENSOR, data="!!!!!!!!!!!=")),
    "a tensor whose data is a list": lambda i: reply(i, dict(TENSOR, data=[1, 2])),
    "a tensor whose dtype is a list": lambda i: reply(i, dict(TENSOR, **{"$tensor": ["float32"]})),
    "a float that is not one": lambda i: reply(i, {"$float": "1e999"}),
    "a float node that is a list": lambda i: reply(i, {"$float": ["nan"]}),
    "an unknown node": lambda i: reply(i, {"$pickle": "gASV"}),
    "too many values": lambda i: reply(i, [0] * (wire.MAX_NODES + 1)),
    "an error whose fields are lists": lambda i: framed(json.dumps(
        {"id": i, "ok": False, "error": {"type": [[[]]], "message": {"a": 1}, "traceback": 5, "code": None,
                                          "line": "3", "offset": [1]}}).encode()),
    "surrogates, NUL and megabytes in the error": lambda i: framed(json.dumps(
        {"id": i, "ok": False, "error": {"type": "Err\ud800", "message": "m\x00\udcff" * 200_000,
                                          "traceback": "\udfff" * 10, "code": "\x00"}}).encode()),
    "surrogates in values and keys": lambda i: reply(i, {"$dict": {"k\ud800": ["\udc80\x00", {"$opaque": "\ud801"}]}}),
    "surrogates in the guard's record": lambda i: reply(i, 1.0, delegation=["\ud800" * 500, 7, None, "\x00"]),
    "an opaque of another type": lambda i: reply(i, {"$opaque": [[["deep"]]]}),
    "the end of the stream": lambda i: b"",
    "half a frame, then the end": lambda i: framed(b'{"id": "x"}')[:7],
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_an_adversarial_answer_is_the_calls_protocol_error(name):
    outcome, sandbox, wall, _ = call_box(ADVERSARIAL[name])
    assert_the_box_answered_for_itself(outcome, sandbox)
    expected = "crash" if name in ("the end of the stream", "half a frame, then the end") else \
        "exception" if name.startswith(("an error whose", "surrogates, NUL")) else \
        None if name.startswith(("surrogates in values", "surrogates in the guard's")) else "protocol"
    assert (outcome.error.kind if not outcome.ok else None) == expected, outcome
    assert wall < PER_FRAME_S


def test_what_the_protocol_error_says():
    for name, words in (("a 5000-digit integer", "digits"), ("nesting past the interpreter's recursion", "nested"),
                        ("bad UTF-8", "malformed frame"), ("a wrong id", "not for this request"),
                        ("a tensor whose data is short", "tensor"), ("a frame larger than the bound", "too large")):
        outcome, _, _, _ = call_box(ADVERSARIAL[name])
        assert words in outcome.error.message, (name, outcome.error.message)


def test_text_a_box_sends_is_made_writable_where_it_enters():
    outcome, _, _, _ = call_box(ADVERSARIAL["surrogates, NUL and megabytes in the error"])
    error = outcome.error
    assert error.type == "Err\\ud800" and error.code == "\\x00" and error.traceback == "\\udfff" * 10
    # cut to 1500 characters where it entered, then escaped
    assert error.message.startswith("m\\x00\\xff") and error.message.endswith("…") and len(error.message) < 6000
    outcome, _, _, _ = call_box(ADVERSARIAL["surrogates in values and keys"])
    assert outcome.value == {"k\\ud800": ["\\x80\\x00", wire.Opaque("\\ud801")]}
    _, sandbox, _, _ = call_box(ADVERSARIAL["surrogates in the guard's record"])
    assert sandbox.delegation == ["\\ud800" * 200 + "…", "\\x00"]


def test_an_honest_answer_still_decodes():
    outcome, sandbox, _, _ = call_box(lambda i: reply(i, [TENSOR, {"$float": "inf"}, 3, "text ✓", None]))
    assert outcome.ok and outcome.value[1:] == [math.inf, 3, "text ✓", None]
    assert outcome.value[0].tolist() == [1.0, 2.0]
    assert sandbox._box is not None  # an honest box stays open for the next call


def _largest(element):
    """A reply of as many ``element`` as the size bound lets through."""
    def answer(request_id):
        head, tail = b'{"id": "%s", "ok": true, "result": {"value": [' % request_id.encode(), b"]}}"
        count = (wire.MAX_REPLY_BYTES - len(head) - len(tail)) // (len(element) + 1)
        return framed(head + b",".join([element] * count) + tail)
    return answer


@pytest.mark.slow
@pytest.mark.parametrize("element", [b"[]", b'{"$dict": {}}', b"-1234567890123456789", b'"\\ud800"',
                                     b"1." + b"1" * 300, b'{"$tensor": "bool", "shape": [1], "data": "AQ=="}'],
                         ids=["lists", "dicts", "integers", "escapes", "long floats", "tensors"])
def test_the_costliest_answers_the_bound_allows_cost_the_judge_little_and_are_charged(element):
    outcome, sandbox, _, cpu = call_box(_largest(element))
    assert_the_box_answered_for_itself(outcome, sandbox)
    assert cpu < 1.0, f"{cpu:.2f} s of the judge's CPU for one answer"
    assert sandbox.spent >= 0.9 * cpu  # the call pays for what it cost the judge


def test_endless_frames_with_wrong_ids_end_the_call_at_once():
    """Skipping them would hold the judge, decoding, until the wall-clock backstop."""
    def endless(request_id):
        def write(sock):
            frame = reply("f" * 16, [0.5] * 1000)
            while True:
                sock.sendall(frame)
        return write

    outcome, sandbox, wall, cpu = call_box(endless, timeout=1.0, cpu=1.0)
    assert outcome.error.kind == "protocol" and "not for this request" in outcome.error.message
    assert wall < 1.0 and cpu < 0.5


@pytest.mark.slow
def test_an_answer_dribbled_out_meets_the_calls_limit_not_the_backstop():
    """The keeper counts (the backstop is 4 x 1 s + 5 s): a byte every 50 ms ends
    once the call's own second and the grace are spent."""
    outcome, _, wall, _ = call_box(lambda i: reply(i, "x" * 400), timeout=1.0, cpu=1.0, trickle_s=0.05)
    assert outcome.error.kind == "timeout"
    assert wall < 1.0 + 1.0 + 1.0  # limit, FRAME_GRACE_S, slack for a loaded machine


# --------------------------------------------------------------------------- random frames

def _random_text(rng):
    return "".join(chr(rng.choice([rng.randint(0x20, 0x7e), rng.randint(0, 0x1f), rng.randint(0xd800, 0xdfff),
                                   rng.randint(0x80, 0x10ffff)])) for _ in range(rng.randint(0, 8)))


def _broken_node(rng, depth):
    """A node the decoder must refuse, or one with odd but legal contents."""
    return rng.choice([
        rng.randint(-2**70, 2**70), {"$tensor": rng.choice(["half", 7, None]), "shape": [], "data": ""},
        {"$tensor": "float32", "shape": [rng.randint(-3, 3), "x"], "data": "AAAA"},
        {"$tensor": "float32", "shape": [rng.randint(0, 4)], "data": rng.choice(["", "AAAA", "====", None, 5])},
        {"$float": rng.choice(["1e999", "NaN", None, []])}, {"$tuple": "abc"}, {"$dict": [1]},
        {"$opaque": [_random_value(rng, depth + 1)]}, {"x": _random_value(rng, depth + 1)}, {},
    ])


def _random_value(rng, depth=0, broken=0.05):
    """Mostly what an honest worker sends (:func:`wire.encode_value`'s nodes), now and then not."""
    if rng.random() < broken:
        return _broken_node(rng, depth)
    roll = rng.random()
    if depth > 5 or roll < 0.35:
        return rng.choice([None, True, False, rng.randint(-2**62, 2**62), rng.uniform(-1e300, 1e300),
                           _random_text(rng), {"$float": rng.choice(["inf", "-inf", "nan"])}])
    if roll < 0.5:
        count = rng.randint(0, 5)
        dtype = rng.choice(list(wire.DTYPES))
        data = bytes(rng.randrange(256) for _ in range(count * wire.DTYPES[dtype].itemsize))
        return {"$tensor": dtype, "shape": [count], "data": base64.b64encode(data).decode()}
    if roll < 0.7:
        return [_random_value(rng, depth + 1, broken) for _ in range(rng.randint(0, 4))]
    if roll < 0.85:
        return {"$tuple": [_random_value(rng, depth + 1, broken) for _ in range(rng.randint(0, 3))]}
    if roll < 0.95:
        return {"$dict": {_random_text(rng): _random_value(rng, depth + 1, broken) for _ in range(rng.randint(0, 3))}}
    return {"$opaque": _random_text(rng)}


def _random_frame(rng, request_id):
    kind = rng.random()
    if kind < 0.1:  # random bytes with a length that says so
        return framed(bytes(rng.randrange(256) for _ in range(rng.randint(0, 64))))
    frame = {"id": request_id if rng.random() < 0.9 else _random_value(rng), "ok": rng.random() < 0.7,
             "result": {"value": _random_value(rng), "args_after": _random_value(rng)},
             "error": {field: rng.choice([_random_text(rng), _random_value(rng)])
                       for field in ("type", "message", "traceback", "line", "code", "offset")},
             "delegation": [_random_text(rng), _random_value(rng)]}
    payload = json.dumps(frame).encode("utf-8", "surrogatepass")
    if kind < 0.3:  # and then some bytes changed
        payload = bytearray(payload)
        for _ in range(rng.randint(1, 4)):
            payload[rng.randrange(len(payload))] = rng.randrange(256)
        payload = bytes(payload)
    data = framed(payload)
    if kind > 0.95:
        data = data[:rng.randint(0, len(data))]
    return data


@pytest.mark.parametrize("seed", SEEDS)
def test_random_answers_are_protocol_errors_or_answers(seed):
    rng = random.Random(seed)
    kinds, slowest = {}, 0.0
    for number in range(FRAMES_PER_SEED):
        outcome, sandbox, wall, _ = call_box(lambda i: _random_frame(rng, i), timeout=1.0)
        try:
            assert_the_box_answered_for_itself(outcome, sandbox)
        except (AssertionError, UnicodeError) as exc:
            pytest.fail(f"seed {seed}, frame {number}: {exc!r}")
        kind = "ok" if outcome.ok else outcome.error.kind
        kinds[kind] = kinds.get(kind, 0) + 1
        slowest = max(slowest, wall)
    assert slowest < PER_FRAME_S
    # the fuzzer reaches both the decoder's refusals and what lies past them
    assert kinds.get("protocol", 0) > FRAMES_PER_SEED // 4, kinds
    assert kinds.get("ok", 0) > FRAMES_PER_SEED // 10 and kinds.get("exception", 0) > FRAMES_PER_SEED // 10, kinds
