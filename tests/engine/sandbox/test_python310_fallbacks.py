"""What the sandbox does where Python 3.10 lacks 3.11's: ``binascii.a2b_base64(strict_mode=)``
(the wire's fallback refuses what strict mode refuses, for every length a tensor's data may
have, and decodes answers as 3.11+ does) and a traceback's columns (``code.co_positions``: the
worker reports a student's exception with its lines only, where asking for them crashed it)."""
import base64
import binascii
import random
import sys

import pytest
import torch

from autograder.sandbox import wire, worker

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
NOISE = "=\n \t\x00-_.é!"


def outcome(decode, data):
    try:
        return decode(data)
    except (ValueError, binascii.Error):
        return "refused"


def samples(count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        if rng.random() < 0.5:
            data = base64.b64encode(rng.randbytes(rng.randrange(13))).decode()
            for _ in range(rng.randrange(3)):
                if data:
                    at = rng.randrange(len(data))
                    data = data[:at] + rng.choice(NOISE + ALPHABET[:4]) + data[at + 1:]
        else:
            data = "".join(rng.choice(ALPHABET[:3] + ALPHABET[-3:] + NOISE) for _ in range(4 * rng.randrange(4)))
        yield data


@pytest.mark.skipif(sys.version_info < (3, 11), reason="compares with strict mode, which 3.11 brought")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_fallback_refuses_what_strict_mode_refuses(seed):
    checked = 0
    for data in samples(20_000, seed):
        if len(data) % 4:
            continue  # _decode_tensor refuses a length that is not 4 * ceil(bytes / 3) first
        assert outcome(wire._strict_base64_310, data) == outcome(wire._strict_base64_311, data), repr(data)
        checked += 1
    assert checked > 5_000
    for data in ("=AAA", "AA=A", "A===", "AAA\n", "AB=C", "AAAAAA=A", "====", "AA==AAAA", "QUJD\u00e9AAA"):
        assert outcome(wire._strict_base64_310, data) == "refused", repr(data)


def test_decoding_through_the_fallback(monkeypatch):
    monkeypatch.setattr(wire, "strict_base64", wire._strict_base64_310)
    for tensor in (torch.randn(3, 5), torch.arange(7, dtype=torch.int64), torch.tensor([True, False]), torch.empty(0)):
        back = wire.decode_value(wire.encode_value(tensor))
        assert back.dtype == tensor.dtype and torch.equal(back, tensor)
    node = wire.encode_value(torch.zeros(3, dtype=torch.float32))
    node["data"] = node["data"][:-1] + "\n"  # skipped by binascii's default mode, so the length would pass
    with pytest.raises(wire.WireError, match="malformed tensor data"):
        wire.decode_value(node)


def test_the_choice_follows_the_python():
    chosen = wire._strict_base64_311 if sys.version_info >= (3, 11) else wire._strict_base64_310
    assert wire.strict_base64 is chosen


def test_a_students_exception_is_reported_without_columns(monkeypatch, tmp_path):
    monkeypatch.setattr(worker, "_COLUMNS", False)
    student = tmp_path / "mine.py"
    student.write_text("def f(scale):\n    if scale <= 0:\n        raise ValueError('scale must be positive')\n",
                       encoding="utf-8")
    namespace = {}
    exec(compile(student.read_text(encoding="utf-8"), str(student), "exec"), namespace)
    try:
        namespace["f"](0)
    except ValueError as exc:
        error = worker._error(exc, str(tmp_path))
    assert error["type"] == "ValueError" and error["line"] == 3
    assert "mine.py" in error["traceback"] and "scale must be positive" in error["traceback"]
