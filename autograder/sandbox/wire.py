"""Plain-data codec between the judge and a sandbox worker.

Only JSON travels, framed by a 4-byte length. Tensors become
``{"$tensor": dtype, "shape": [...], "data": base64}``, non-finite floats
``{"$float": "inf"}``, tuples ``{"$tuple": [...]}``; anything else the worker
cannot express becomes ``{"$opaque": type name}``. The judge decodes with
:func:`decode_value`, which validates every field and builds fresh, plain
``torch.Tensor`` objects: no pickle, no subclass, nothing the student made
survives the trip. A frame, an answer and an error report are read by
:func:`parse_frame`, :func:`decode_result` and :func:`decode_error`: whatever
in them does not follow the protocol is a :class:`WireError` (the sender's),
bounded in what it costs, and text in them comes out writable by every report
(:mod:`autograder.intake.submitted_text`). Any other exception they raise is a
bug of ours (the grader's failure); :func:`codec_failures` sends the codec's
own probe values through it to show one without anything a box sent.
"""
import binascii
import ctypes
import gc
import json
import math
import re
import select
import socket
import struct
import sys
import time

import torch

from autograder import locations
from autograder.intake import answer_shapes
from autograder.intake.submitted_text import clean, writable

MAX_FRAME_BYTES = 64 * 2**20      # requests the judge sends (inputs it built itself)
MAX_REPLY_BYTES = 4 * 2**20       # answers from student code: far above any honest one
MAX_DEPTH = 24
MAX_NODES = 100_000               # values in one answer
MAX_TENSOR_BYTES = 32 * 2**20     # tensor data in one answer
MAX_INT_CHARS = 20                # what encode_value sends: |n| < 2**63, sign included
MAX_REFUSALS = 20                 # entries of a guard's record in one answer

DTYPES = {
    "float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
    "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool,
}
_NAMES = {dtype: name for name, dtype in DTYPES.items()}
_ITEMSIZE = {name: dtype.itemsize for name, dtype in DTYPES.items()}


class WireError(ValueError):
    """A frame or value that does not follow the protocol."""


class Opaque:
    """Stands in for a value the worker could not send as plain data."""

    def __init__(self, type_name):
        self.type_name = clean(type_name, 100)

    def __repr__(self):
        return f"<{self.type_name} object>"

    def __eq__(self, other):
        return isinstance(other, Opaque) and other.type_name == self.type_name


def _tensor_bytes(tensor):
    """The raw bytes of a CPU tensor, copied straight from its contiguous memory:
    no numpy needed (students' installs have none, and a list of one int per byte
    costs a hundred times as much)."""
    flat = tensor.reshape(-1).contiguous()
    size = flat.numel() * flat.element_size()
    return ctypes.string_at(flat.data_ptr(), size) if size else b""


def _encode_tensor(value):
    tensor = value.detach()
    if type(tensor) is not torch.Tensor:
        tensor = tensor.as_subclass(torch.Tensor)
    if tensor.layout != torch.strided or tensor.dtype not in _NAMES:
        return {"$opaque": f"tensor({tensor.dtype}, {tensor.layout})"}
    tensor = tensor.cpu()
    return {"$tensor": _NAMES[tensor.dtype], "shape": list(tensor.shape),
            "data": binascii.b2a_base64(_tensor_bytes(tensor), newline=False).decode("ascii")}


def encode_value(value, depth=0):
    """Turn a value into JSON-able plain data (runs in the worker)."""
    if depth > 20:
        return {"$opaque": "too deeply nested"}
    kind = type(value)  # the usual exact types first; subclasses take the general path below
    if kind is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if kind is list:
        return [encode_value(item, depth + 1) for item in value]
    if kind is torch.Tensor:
        return _encode_tensor(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value)
    if isinstance(value, tuple):
        return {"$tuple": [encode_value(item, depth + 1) for item in value]}
    if isinstance(value, list):
        return [encode_value(item, depth + 1) for item in value]
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            return {"$dict": {key: encode_value(item, depth + 1) for key, item in value.items()}}
        return {"$opaque": "dict with non-string keys"}
    return {"$opaque": type(value).__name__}


# What binascii's strict mode (Python 3.11+) accepts at the lengths a tensor's data may have
# (a multiple of four): the alphabet only, padding only at the end, never more than it
# completes. Python 3.10 has no strict mode and would skip any other character, so there the
# pattern is checked first (tests/engine/sandbox/test_python310_fallbacks.py compares the two).
_STRICT_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _strict_base64_310(data):
    """``a2b_base64(data, strict_mode=True)`` for Python 3.10, where the keyword does not exist."""
    if not (isinstance(data, str) and data.isascii() and _STRICT_BASE64.fullmatch(data)):
        raise binascii.Error("not strict base64")
    return binascii.a2b_base64(data)


def _strict_base64_311(data):
    return binascii.a2b_base64(data, strict_mode=True)  # novm: chosen on 3.11+ only


strict_base64 = _strict_base64_311 if sys.version_info >= (3, 11) else _strict_base64_310


def _decode_tensor(node):
    name = node.get("$tensor")
    dtype = DTYPES.get(name) if isinstance(name, str) else None
    shape = node.get("shape")
    if dtype is None or not isinstance(shape, list) or len(shape) > 8 \
            or not all(type(n) is int and 0 <= n < 2**31 for n in shape):
        raise WireError("malformed tensor")
    data = node.get("data", "")
    if not isinstance(data, str):
        raise WireError("malformed tensor")
    count = math.prod(shape)
    itemsize = _ITEMSIZE[name]
    if len(data) != 4 * math.ceil(count * itemsize / 3):  # checked before decoding anything
        raise WireError("tensor data does not match its shape")
    try:
        raw = strict_base64(data)
    except (ValueError, binascii.Error):
        raise WireError("malformed tensor data") from None
    if len(raw) != count * itemsize:
        raise WireError("tensor data does not match its shape")
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    # the bytearray is this tensor's own memory: nothing else refers to it
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)


class DecodeBudget:
    """What one answer may still cost the judge: values and tensor bytes."""

    def __init__(self, nodes=MAX_NODES, tensor_bytes=MAX_TENSOR_BYTES):
        self.nodes = nodes
        self.tensor_bytes = tensor_bytes

    def take(self, nodes=1, tensor_bytes=0):
        self.nodes -= nodes
        self.tensor_bytes -= tensor_bytes
        if self.nodes < 0:
            raise WireError("the answer holds too many values")
        if self.tensor_bytes < 0:
            raise WireError("the answer holds too much tensor data")


def decode_value(node, depth=0, budget=None):
    """Rebuild a value from plain data (runs in the judge; input is untrusted)."""
    budget = DecodeBudget() if budget is None else budget
    budget.take()
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    if isinstance(node, str):  # text the box chose: every output must be able to write it
        return writable(node)
    if node is None or isinstance(node, (bool, int, float)):
        return node
    if isinstance(node, list):
        return [decode_value(item, depth + 1, budget) for item in node]
    if isinstance(node, dict):
        if "$tensor" in node:
            data = node.get("data", "")
            # a tensor counts as ten values: building one costs the judge as much
            budget.take(nodes=9, tensor_bytes=len(data) * 3 // 4 if isinstance(data, str) else 0)
            return _decode_tensor(node)
        if "$float" in node:
            text = node["$float"]
            if text not in ("inf", "-inf", "nan"):
                raise WireError("malformed float")
            return float(text)
        if "$tuple" in node and isinstance(node["$tuple"], list):
            return tuple(decode_value(item, depth + 1, budget) for item in node["$tuple"])
        if "$dict" in node and isinstance(node["$dict"], dict):
            return {writable(key): decode_value(item, depth + 1, budget) for key, item in node["$dict"].items()}
        if isinstance(node.get("$opaque"), str):
            return Opaque(node["$opaque"])
    raise WireError("unknown value")


def decode_result(result):
    """``(value, args_after, kwargs_after)`` of a worker's ``result`` (one budget for all)."""
    if not isinstance(result, dict):
        raise WireError("the answer is not an object")
    budget = DecodeBudget()
    return tuple(decode_value(result.get(key, default), budget=budget)
                 for key, default in (("value", None), ("args_after", []), ("kwargs_after", {"$dict": {}})))


def check_parts(outcome, shapes):
    """``outcome`` (a call's), once each of its parts has its shape (``shapes``: part name ->
    :mod:`autograder.intake.answer_shapes` shape, None: any); raises WireError otherwise."""
    for part, shape in (shapes or {}).items() if outcome.ok else ():
        try:
            answer_shapes.check(getattr(outcome, part), shape, part)
        except answer_shapes.ShapeError as exc:
            raise WireError(f"an answer of the wrong form: {exc}") from None
    return outcome


def inputs_shapes(args, kwargs):
    """What a call's arguments come back as: a list of as many, a dict of the same names
    (what they hold is the checks' to judge)."""
    return {"args_after": answer_shapes.ListOf(answer_shapes.ANY, length=len(args)),
            "kwargs_after": answer_shapes.MapOf(answer_shapes.ANY, keys=kwargs)}


def decode_delegation(record, required):
    """A guard's record of what it refused (``delegation``), as the judge keeps it:
    strings made writable and cut. A box whose module has a guard (``required``)
    sends it with every answer, empty or not: an answer without a list of at most
    MAX_REFUSALS strings there would drop a refusal unseen, and is the box's
    protocol error. Elsewhere it means nothing: strings are kept, the rest dropped."""
    if required and (type(record) is not list or len(record) > MAX_REFUSALS
                     or not all(type(item) is str for item in record)):
        raise WireError("the answer holds no record of what the guard refused")
    items = record[:MAX_REFUSALS] if isinstance(record, list) else []
    return [clean(item, 200) for item in items if isinstance(item, str) and item]


def _count(value, below):
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < below else 0


def decode_error(error):
    """A worker's error report as the judge keeps it: text made writable and cut,
    positions as small integers (0: unknown), anything else dropped."""
    error = error if isinstance(error, dict) else {}
    text = {key: clean(error[key], limit) if isinstance(error.get(key), str) else ""
            for key, limit in (("type", 100), ("message", 1500), ("traceback", 3000), ("code", 300))}
    return dict(text, line=_count(error.get("line"), 10**7), offset=_count(error.get("offset"), 10**4))


def _remaining(deadline):
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("deadline passed")
    return left


def _refuse_constant(name):
    raise WireError(f"non-standard JSON constant {name}")


def _bounded_int(text):
    """An integer of the protocol's size: Python converts digits in quadratic time
    (a frame of 4,000-digit numbers would cost the judge a fifth of a second)."""
    if len(text) > MAX_INT_CHARS:
        raise WireError(f"a number of {len(text)} digits (at most {MAX_INT_CHARS - 1})")
    return int(text)


# Made once: json.dumps/json.loads with options build a new coder on every call.
_ENCODER = json.JSONEncoder(allow_nan=False, separators=(",", ":"))
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_int=_bounded_int)
_LENGTH = struct.Struct(">I")


def _set_mode(sock, deadline):
    """Blocking without a deadline; otherwise non-blocking, waiting in :func:`_wait`.
    Only a change of mode costs a system call: a socket keeps its mode from frame
    to frame, where a timeout set per read would cost one, and a poll, every time."""
    mode = None if deadline is None else 0.0
    if sock.gettimeout() != mode:
        sock.settimeout(mode)


def _wait(sock, writing, deadline):
    """Until ``sock`` can be read (written), at most until ``deadline``."""
    if hasattr(select, "poll"):  # no limit on the descriptor's number
        poller = select.poll()
        poller.register(sock, select.POLLOUT if writing else select.POLLIN)
        ready = poller.poll(_remaining(deadline) * 1000)
    else:  # Windows
        readable, writable, _ = select.select([] if writing else [sock], [sock] if writing else [], [],
                                              _remaining(deadline))
        ready = readable or writable
    if not ready:
        raise socket.timeout("timed out")


def send_frame(sock, message, deadline=None):
    payload = _ENCODER.encode(message).encode("utf-8")
    data = _LENGTH.pack(len(payload)) + payload
    _set_mode(sock, deadline)
    if deadline is None:
        sock.sendall(data)
        return
    view = memoryview(data)
    while view:
        _remaining(deadline)  # one deadline for the whole frame, however slowly it drains
        try:
            view = view[sock.send(view):]
        except BlockingIOError:
            _wait(sock, True, deadline)


def _recv_exact(sock, size, deadline):
    chunks, remaining = [], size
    while remaining:
        if deadline is not None:
            _remaining(deadline)  # one deadline for the whole frame: no trickling
        try:
            chunk = sock.recv(min(remaining, 1 << 20))
        except BlockingIOError:
            _wait(sock, False, deadline)
            continue
        if not chunk:
            raise EOFError("connection closed")
        chunks.append(chunk)
        remaining -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def parse_frame(payload):
    """The object a frame's bytes hold; raises WireError where the bytes are not a
    frame (the sender's protocol error). Any other exception is a bug of this
    decoder's, whatever the bytes: the grader's failure, not the sender's."""
    collecting = gc.isenabled()
    gc.disable()  # a frame of a million empty lists would start a thousand collections
    try:
        message = _DECODER.decode(payload.decode("utf-8"))
    except WireError:
        raise
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WireError(f"malformed frame: {exc}") from None
    except RecursionError:
        raise WireError("frame nested too deeply") from None
    except (ValueError, MemoryError) as exc:  # a limit of the decoder; anything else is a bug of ours
        raise WireError(f"malformed frame ({type(exc).__name__})") from None
    finally:
        if collecting:
            gc.enable()
    if not isinstance(message, dict):
        raise WireError("frame is not an object")
    return message


def recv_frame(sock, deadline=None, max_bytes=MAX_FRAME_BYTES):
    """Read one frame before ``deadline`` (a ``time.monotonic()`` value); raises
    EOFError, socket.timeout or WireError."""
    _set_mode(sock, deadline)
    (size,) = _LENGTH.unpack(_recv_exact(sock, 4, deadline))
    if size > max_bytes:
        raise WireError(f"frame too large ({size} bytes, at most {max_bytes})")
    return parse_frame(_recv_exact(sock, size, deadline))


def _probe_values():
    """Values a box may send back, one of each kind the codec treats apart."""
    tensors = [torch.arange(6, dtype=torch.float64).reshape(2, 3).to(dtype) for dtype in DTYPES.values()]
    special = torch.tensor([1.0, math.inf, -math.inf, math.nan])
    tensors += [torch.tensor(2.5), torch.zeros(0, 3), torch.ones(3, 2).t(), torch.ones(2, requires_grad=True),
                torch.nn.Parameter(torch.ones(2)), special, special.half(), special.bfloat16()]
    plain = [None, True, 0, -7, 2**70, 1.5, math.inf, -math.inf, math.nan, "text \u00e9\u4e2d", [], [1, [2.0]],
             (1, "a"), {"key": [None]}, {1: 2}, object()]
    return tensors + plain + [[tensors[0], (tensors[1], {"grads": [None, tensors[2]]})]]


def codec_failures():
    """What the codec raises in this process when its own probe values go through it as a
    box's answer goes: encoded, framed, parsed and decoded. A list of ``(type name,
    where, message)``, empty when it works; nothing a box sent is involved."""
    failures = []
    for value in _probe_values():
        try:
            frame = parse_frame(_ENCODER.encode({"ok": True, "result": {"value": encode_value(value)}}).encode())
            decode_result(frame["result"])
        except Exception as exc:  # noqa: BLE001 - the failure looked for
            failures.append((type(exc).__name__, locations.grader_frame(exc), str(exc)[:300]))
    return failures


def decoding_failures(nodes):
    """What decoding ``nodes`` (values the judge encoded itself) raises in this process:
    a list of ``(type name, where, message)``."""
    failures = []
    for node in nodes:
        try:
            decode_value(node)
        except Exception as exc:  # noqa: BLE001 - the failure looked for
            failures.append((type(exc).__name__, locations.grader_frame(exc), str(exc)[:300]))
    return failures
