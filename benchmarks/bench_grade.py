"""How far one ``grade`` is above the floor: the time to import torch.

    python benchmarks/bench_grade.py [--runs 3] [--submission solutions]

Prints the median wall time of ``python -m autograder grade`` on the reference
solutions (hidden tests included where installed) and of ``python -c "import torch"``,
and their ratio. Figures from one run on a shared machine: compare ratios, not seconds.
"""
import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def timed(command, cwd):
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each command (median reported)")
    parser.add_argument("--submission", default=str(ROOT / "solutions"))
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as scratch:
        grade = [sys.executable, "-m", "autograder", "grade", "--submission", args.submission,
                 "--results", str(pathlib.Path(scratch) / "results.json"), "--seed", str(args.seed), "--quiet"]
        floor = [sys.executable, "-c", "import torch"]
        grades, floors = [], []
        for _ in range(args.runs):  # interleaved, so both see the same machine load
            floors.append(timed(floor, ROOT))
            grades.append(timed(grade, ROOT))
    grade_s, floor_s = statistics.median(grades), statistics.median(floors)
    print(f"python -c 'import torch'        median {floor_s:6.2f} s  ({', '.join(f'{t:.2f}' for t in floors)})")
    print(f"python -m autograder grade      median {grade_s:6.2f} s  ({', '.join(f'{t:.2f}' for t in grades)})")
    print(f"ratio grade / import torch: {grade_s / floor_s:.2f}x "
          f"(the grader's own work: {grade_s - floor_s:.2f} s above the floor)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
