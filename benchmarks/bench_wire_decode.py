"""What the costliest answers the reply bounds let through cost the judge to read.

    python benchmarks/bench_wire_decode.py [--rounds 3]

For each kind of answer, as large as ``wire.MAX_REPLY_BYTES`` allows, the judge's
CPU time (this thread's) to read it with the reader (``wire.parse_frame`` and
``wire.decode_result``) and with a plain ``json.loads`` -- the collector on,
numbers converted whatever their length -- followed by the same decoding, as the
reader was before; the median of ``--rounds`` and the ratio, in one run.
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from autograder.sandbox import wire  # noqa: E402

ELEMENTS = {
    "empty lists": b"[]",
    "empty dicts": b'{"$dict": {}}',
    "19-digit integers": b"-1234567890123456789",
    "4000-digit integers": b"1" * 4000,
    "lone surrogates": b'"\\ud800\\udfff"',
    "one-byte tensors": b'{"$tensor": "bool", "shape": [1], "data": "AQ=="}',
}


def answer(element):
    head, tail = b'{"id": "x", "ok": true, "result": {"value": [', b"]}}"
    count = (wire.MAX_REPLY_BYTES - len(head) - len(tail)) // (len(element) + 1)
    return head + b",".join([element] * count) + tail


def _read(payload, parse):
    try:
        wire.decode_result(parse(payload)["result"])
    except (wire.WireError, ValueError, RecursionError):
        pass  # refused: what it cost to get there is the point


def _plain(payload):
    return json.loads(payload.decode("utf-8"))


def cpu_seconds(payload, parse, rounds):
    times = []
    for _ in range(rounds):
        started = time.thread_time()
        _read(payload, parse)
        times.append(time.thread_time() - started)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"answers of {wire.MAX_REPLY_BYTES} bytes; median CPU seconds of {args.rounds} rounds")
    print(f"{'answer':<22}{'reader':>10}{'plain json':>12}{'ratio':>8}")
    for name, element in ELEMENTS.items():
        payload = answer(element)
        ours = cpu_seconds(payload, wire.parse_frame, args.rounds)
        plain = cpu_seconds(payload, _plain, args.rounds)
        print(f"{name:<22}{ours:>10.3f}{plain:>12.3f}{plain / max(ours, 1e-6):>7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
