"""How far a grade is above the floor, the time to import torch: a full ``grade``,
``grade --module``, and a re-grade under ``watch`` after a save.

    python benchmarks/bench_grade.py [--runs 5] [--submission solutions] [--module MODULE]

Runs are interleaved (floor, grade, --module, floor, ...) so that every command
sees the same machine load, and each figure is printed as a ratio to the floor
measured in this run. The watch figure is the wall time from rewriting a module
(new content, as an editor's save) to the redrawn table, for ``--runs`` saves in
one ``watch`` session. Figures from one run on a shared machine: compare the
ratios, not the seconds.
"""
import argparse
import os
import pathlib
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import active_assignment  # noqa: E402

ASSIGNMENT = active_assignment.current()
WATCH_PROMPT = "save a module to grade again"   # the last line watch prints after each table


def timed(command, cwd):
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def _read_until(process, selector, text, timeout):
    """Read the watch's output until a line holds ``text``; returns the time it was seen."""
    deadline = time.monotonic() + timeout
    buffer = b""
    while time.monotonic() < deadline:
        for _key, _mask in selector.select(timeout=0.5):
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("watch ended early:\n" + buffer.decode(errors="replace")[-2000:])
            buffer += chunk
            if text.encode() in buffer:
                return time.perf_counter()
    raise RuntimeError("watch did not redraw in time:\n" + buffer.decode(errors="replace")[-2000:])


def watch_regrades(submission, runs, scratch):
    """Seconds from each save to the redrawn table, in one watch session."""
    folder = pathlib.Path(scratch) / "watched"
    shutil.copytree(submission, folder)
    module = sorted(folder.glob("*.py"))[0]
    command = [sys.executable, "-m", "autograder", "watch", "--submission", str(folder), "--quiet",
               "--results", str(pathlib.Path(scratch) / "watch.json"), "--seed", "2024", "--lang", "en"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=dict(os.environ, AUTOGRADER_LANG="en"))
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    times = []
    try:
        _read_until(process, selector, WATCH_PROMPT, 300)
        original = module.read_text(encoding="utf-8")
        for run in range(runs):
            time.sleep(0.3)  # a student types between saves
            saved = time.perf_counter()
            module.write_text(original + f"\n# save {run}\n", encoding="utf-8")
            times.append(_read_until(process, selector, WATCH_PROMPT, 300) - saved)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (median reported)")
    parser.add_argument("--submission", default=str(ASSIGNMENT.solutions_dir))
    parser.add_argument("--module", default=None,
                        help="the module of the --module figure (default: the assignment's first)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    args.module = args.module or ASSIGNMENT.modules[0]
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as scratch:
        grade = [sys.executable, "-m", "autograder", "grade", "--submission", args.submission,
                 "--results", str(pathlib.Path(scratch) / "results.json"), "--seed", str(args.seed), "--quiet"]
        commands = {"python -c 'import torch'": [sys.executable, "-c", "import torch"],
                    "python -m autograder grade": grade,
                    f"grade --module {args.module}": grade + ["--module", args.module]}
        times = {name: [] for name in commands}
        for _ in range(args.runs):  # interleaved, so all see the same machine load
            for name, command in commands.items():
                times[name].append(timed(command, ROOT))
        times["watch: save to redrawn table"] = watch_regrades(args.submission, args.runs, scratch)
    floor = statistics.median(times["python -c 'import torch'"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:32s} median {median:6.2f} s  {median / floor:5.2f}x the floor  "
              f"({', '.join(f'{value:.2f}' for value in values)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
