"""What an endless loop costs a full grade, with and without the short limit after a timeout.

    python benchmarks/bench_endless_loop.py [--runs 1] [--cases loop_todo1,loop_every,storm]

Each case is the reference solution with one mistake in amp_update.py: an endless loop
in TODO 1 (unscale_gradients), an endless loop at the start of every function, or a print
inside an endless loop in TODO 1. Each is graded by ``python -m autograder grade`` (hidden
tests included where installed) twice, interleaved so that both see the same machine load:
as it is, and with every call after a timeout given the full limit again
(``AUTOGRADER_AFTER_TIMEOUT=20``, what a grade did before the short limit). The figure is
the ratio of the two wall times measured in this run; the solution's own grade is the floor.
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TODO_1 = "    gradients = [None if gradient is None else gradient / scale for gradient in scaled_gradients]\n"
CASES = {
    "loop_todo1": [(TODO_1, "    while True:\n        pass\n")],
    "loop_every": [('    if scale <= 0:\n        raise ValueError("scale must be positive")\n', "    while True:\n        pass\n"),
                   ("    squared_sum = torch.zeros((), dtype=torch.float32)\n", "    while True:\n        pass\n"),
                   ('    if max_norm <= 0:\n        raise ValueError("max_norm must be positive")\n',
                    "    while True:\n        pass\n")],
    "storm": [(TODO_1, "    while True:\n        print('gradients', scaled_gradients)\n")],
}


def submission(folder, case):
    shutil.copytree(ROOT / "solutions", folder)
    source = (folder / "amp_update.py").read_text(encoding="utf-8")
    for old, new in CASES.get(case, []):
        assert source.count(old) == 1, (case, old)
        source = source.replace(old, new)
    (folder / "amp_update.py").write_text(source, encoding="utf-8")
    return folder


def graded(folder, scratch, env=None):
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autograder", "grade", "--submission", str(folder), "--quiet",
                    "--seed", "5", "--results", str(pathlib.Path(scratch) / "results.json")], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, **(env or {})))
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as scratch:
        floor = submission(pathlib.Path(scratch) / "solution", None)
        for case in args.cases.split(","):
            folder = submission(pathlib.Path(scratch) / case, case)
            now, before, solution = [], [], []
            for _ in range(args.runs):
                solution.append(graded(floor, scratch))
                before.append(graded(folder, scratch, {"AUTOGRADER_AFTER_TIMEOUT": "20"}))
                now.append(graded(folder, scratch))
            median = statistics.median
            print(f"{case}: {median(now):.1f} s with the short limit, {median(before):.1f} s with the full limit "
                  f"after a timeout (ratio {median(before) / median(now):.1f}x); the solution: "
                  f"{median(solution):.1f} s; load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
