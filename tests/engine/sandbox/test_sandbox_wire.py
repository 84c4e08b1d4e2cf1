"""The plain-data protocol: what comes back from a worker is rebuilt from validated
bytes, never unpickled; lying tensor subclasses lose their behaviour."""
import math
import socket

import pytest
import torch

from autograder.sandbox import wire


def roundtrip(value):
    return wire.decode_value(wire.encode_value(value))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.bool])
def test_tensors_roundtrip_exactly(dtype):
    tensor = (torch.randn(3, 4) * 100).to(dtype)
    back = roundtrip(tensor)
    assert type(back) is torch.Tensor and back.dtype == dtype and torch.equal(back, tensor)


def test_non_contiguous_and_zero_dim_tensors():
    tensor = torch.arange(12.0).reshape(3, 4).t()
    assert torch.equal(roundtrip(tensor), tensor)
    assert roundtrip(torch.tensor(2.5)).shape == ()
    # views whose memory is not the values in order: the bytes sent are the values'
    offset, every_other = torch.arange(10.0)[3:], torch.arange(10, dtype=torch.int64)[::2]
    expanded, column = torch.tensor([[1.5], [2.5]]).expand(2, 4), torch.arange(6.0).reshape(2, 3)[:, 1:]
    for view in (offset, every_other, expanded, column, torch.empty(0, 3), torch.empty(2, 0, dtype=torch.float16)):
        back = roundtrip(view)
        assert back.dtype == view.dtype and back.shape == view.shape and torch.equal(back, view)


def test_structures_and_special_floats():
    value = {"a": [1, None, True, "x", (2.0, math.inf)], "b": {"c": -math.inf}}
    back = roundtrip(value)
    assert back["a"][:4] == [1, None, True, "x"] and back["a"][4] == (2.0, math.inf)
    assert math.isnan(roundtrip(math.nan))


def test_subclass_is_stripped():
    class Liar(torch.Tensor):
        def __eq__(self, other):
            return True

    back = roundtrip(torch.zeros(3).as_subclass(Liar))
    assert type(back) is torch.Tensor and not torch.equal(back, torch.ones(3))


def test_unknown_objects_become_opaque():
    back = roundtrip(object())
    assert isinstance(back, wire.Opaque) and back.type_name == "object"


@pytest.mark.parametrize("node", [
    {"$tensor": "float32", "shape": [4], "data": "AAAA"},              # too few bytes
    {"$tensor": "complex64", "shape": [1], "data": ""},               # unknown dtype
    {"$tensor": "float32", "shape": [-1], "data": ""},                # negative size
    {"$float": "1e999"}, {"plain": "dict"}, {"$tensor": "float32", "shape": "x", "data": ""},
])
def test_malformed_values_are_refused(node):
    with pytest.raises(wire.WireError):
        wire.decode_value(node)


def test_frames_refuse_nan_and_oversize():
    left, right = socket.socketpair()
    with left, right:
        left.sendall(b"\x00\x00\x00\x03NaN")
        with pytest.raises(wire.WireError):
            wire.recv_frame(right)
        left.sendall((wire.MAX_FRAME_BYTES + 1).to_bytes(4, "big"))
        with pytest.raises(wire.WireError):
            wire.recv_frame(right)


def test_a_trickling_answer_runs_into_the_call_deadline():
    """One deadline for the whole frame: a byte now and then cannot stretch it."""
    import threading
    import time

    left, right = socket.socketpair()
    stop = threading.Event()

    def trickle():
        left.sendall((1000).to_bytes(4, "big"))
        while not stop.is_set():
            try:
                left.sendall(b" ")
            except OSError:
                return
            time.sleep(0.1)

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    started = time.monotonic()
    try:
        with pytest.raises(socket.timeout):
            wire.recv_frame(right, deadline=time.monotonic() + 0.6)
        assert time.monotonic() - started < 2.0
    finally:
        stop.set()
        left.close()
        right.close()


@pytest.fixture(params=["poll", "select"])
def waiting(request, monkeypatch):
    """Both ways of waiting for a socket: poll, and select where there is none (Windows)."""
    import select

    if request.param == "select":
        monkeypatch.delattr(select, "poll")
    return request.param


def test_a_frame_larger_than_the_socket_buffer_drains_as_the_peer_reads(waiting):
    """A request far above the socket's buffer goes out in pieces while the other
    side reads, within the deadline, and arrives whole; the same socket then serves
    frames without a deadline (blocking) and with one again."""
    import threading
    import time

    left, right = socket.socketpair()
    big = {"op": "call", "args": ["x" * (8 * 2**20)]}
    got = []

    def read_slowly():
        time.sleep(0.2)  # the sender fills the buffer and has to wait for room
        got.append(wire.recv_frame(right, deadline=time.monotonic() + 30))
        got.append(wire.recv_frame(right))
        got.append(wire.recv_frame(right, deadline=time.monotonic() + 30))

    reader = threading.Thread(target=read_slowly)
    reader.start()
    with left, right:
        wire.send_frame(left, big, deadline=time.monotonic() + 30)
        wire.send_frame(left, {"n": 1})
        wire.send_frame(left, {"n": 2}, deadline=time.monotonic() + 30)
        reader.join(30)
    assert got == [big, {"n": 1}, {"n": 2}]


@pytest.mark.slow
def test_a_peer_that_never_reads_runs_the_sender_into_its_deadline(waiting):
    import time

    left, right = socket.socketpair()
    with left, right:
        started = time.monotonic()
        with pytest.raises(socket.timeout):
            wire.send_frame(left, {"data": "x" * (8 * 2**20)}, deadline=time.monotonic() + 0.5)
        assert time.monotonic() - started < 2.0


def test_nothing_sent_runs_the_reader_into_its_deadline(waiting):
    import time

    left, right = socket.socketpair()
    with left, right:
        started = time.monotonic()
        with pytest.raises(socket.timeout):
            wire.recv_frame(right, deadline=time.monotonic() + 0.3)
        assert 0.25 < time.monotonic() - started < 2.0


@pytest.mark.parametrize("payload, message", [
    (b'{"id": 1, "v": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    (b'{"id": 1, "v": NaN}', "constant"),
    (b"[1, 2]", "not an object"),
])
def test_malformed_answers_are_wire_errors(payload, message):
    left, right = socket.socketpair()
    with left, right:
        left.sendall(len(payload).to_bytes(4, "big") + payload)
        with pytest.raises(wire.WireError, match=message):
            wire.recv_frame(right, max_bytes=wire.MAX_REPLY_BYTES)


def test_decoding_is_bounded_by_a_budget():
    wide = [[] for _ in range(wire.MAX_NODES + 5)]
    with pytest.raises(wire.WireError, match="too many values"):
        wire.decode_value(wide)
    huge = {"$tensor": "float32", "shape": [2**20, 2**20], "data": ""}
    with pytest.raises(wire.WireError):
        wire.decode_value(huge)
    deep = []
    for _ in range(wire.MAX_DEPTH + 3):
        deep = [deep]
    with pytest.raises(wire.WireError, match="nested"):
        wire.decode_value(deep)
    assert wire.decode_value([[1.0, None]]) == [[1.0, None]]


def test_answers_larger_than_the_reply_bound_are_refused():
    left, right = socket.socketpair()
    with left, right:
        left.sendall((wire.MAX_REPLY_BYTES + 1).to_bytes(4, "big"))
        with pytest.raises(wire.WireError, match="too large"):
            wire.recv_frame(right, max_bytes=wire.MAX_REPLY_BYTES)
