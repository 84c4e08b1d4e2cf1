"""What holding an answer to its declared shape costs the judge, next to reading it.

    python benchmarks/bench_answer_shapes.py [--rounds 3]

For answers to a named run as large as the reply bounds let through (``wire.MAX_NODES``
values), the judge's CPU time (this thread's) to read the answer (``wire.parse_frame``
and ``wire.decode_result``) and to check its shape (``answer_shapes.check`` against the
run's declared shape); the median of ``--rounds`` and the ratio, in one run.
"""
import argparse
import json
import pathlib
import statistics
import sys
import time
import timeit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from autograder.assignment import scenarios  # noqa: E402
from autograder.intake import answer_shapes  # noqa: E402
from autograder.sandbox import wire  # noqa: E402

COUNT = wire.MAX_NODES - 1_000  # room for the rest of the answer


def training_run(iterations, **parts):
    """A scaler_training answer of ``iterations`` (its lists full), with ``parts`` replaced."""
    run = {key: [1.0] * iterations for key in ("scales", "step_returns", "scales_before", "scales_between",
                                                "scaled_ratio")}
    run.update(calls=list(range(iterations)), trackers=[0] * iterations, seen_grads=[[None]] * iterations,
               stopped=None, step_calls=iterations, parameters=[torch.zeros(2)], optimizer_state=[{}],
               growth_tracker=0, echo=None)
    run.update(parts)
    return run


ITERATIONS = COUNT // 11  # ten values an iteration, eleven with a scale record
ANSWERS = {  # name -> (scenario, spec, answer)
    "optimizer state": ("scaler_training", {"iterations": 1},
                        training_run(1, optimizer_state=[{f"k{index}": 1.0 for index in range(COUNT)}])),
    "per-iteration lists": ("scaler_training", {"iterations": ITERATIONS}, training_run(ITERATIONS)),
    "scale records": ("scaler_training", {"iterations": ITERATIONS},
                      training_run(ITERATIONS, scales=[{"type": "list"}] * ITERATIONS)),
}


def cpu_seconds(work, rounds):
    return statistics.median(timeit.repeat(work, timer=time.thread_time, number=1, repeat=rounds))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"answers of about {wire.MAX_NODES} values; median CPU seconds of {args.rounds} rounds")
    print(f"{'answer':<22}{'read':>10}{'shape':>10}{'shape/read':>12}")
    for name, (scenario, spec, value) in ANSWERS.items():
        payload = json.dumps({"id": "x", "ok": True, "result": {"value": wire.encode_value(value)}}).encode()
        shape = scenarios.ANSWER_SHAPES[scenario](spec)
        decoded = wire.decode_result(wire.parse_frame(payload)["result"])[0]
        read = cpu_seconds(lambda: wire.decode_result(wire.parse_frame(payload)["result"]), args.rounds)
        checked = cpu_seconds(lambda: answer_shapes.check(decoded, shape), args.rounds)
        print(f"{name:<22}{read:>10.3f}{checked:>10.3f}{checked / max(read, 1e-6):>11.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
