"""What an endless loop costs a full grade, with and without the short limit after a timeout.

    python benchmarks/bench_endless_loop.py [--runs 1] [--cases loop_todo1,loop_every,storm] [--only-module]

Each case is the active assignment's reference solution with one mistake in its first
module: an endless loop in its first TODO, one in every TODO, or a print inside an
endless loop in the first TODO. Each is graded by ``python -m autograder grade`` (hidden
tests included where installed) twice, interleaved so that both see the same machine load:
as it is, and with every call after a timeout given the full limit again
(``AUTOGRADER_AFTER_TIMEOUT=20``, what a grade did before the short limit). The figure is
the ratio of the two wall times measured in this run; the solution's own grade is the floor.
``--only-module`` grades the module with the mistake alone (``grade --module``): the
others are the solution's in every grade, so a rehearsal can leave them out.
"""
import argparse
import os
import pathlib
import re
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
MODULE = ASSIGNMENT.modules[0]
# A solution's TODO opens with a fence line (tools/make_stubs.py): the mistake goes right after it.
FENCE = re.compile(r"^(?P<indent>[ \t]*)# >>> TODO \d+:.*\n", re.MULTILINE)
CASES = {
    "loop_todo1": ("first", "while True:\n    pass\n"),
    "loop_every": ("every", "while True:\n    pass\n"),
    "storm": ("first", "while True:\n    print('still here', flush=True)\n"),
}


def _insert(source, where, code):
    def put(match):
        return match.group(0) + "".join(match["indent"] + line + "\n" for line in code.splitlines())
    return FENCE.sub(put, source, count=1 if where == "first" else 0)


def submission(folder, case):
    shutil.copytree(ASSIGNMENT.solutions_dir, folder)
    source = (folder / f"{MODULE}.py").read_text(encoding="utf-8")
    if case is not None:
        changed = _insert(source, *CASES[case])
        assert changed != source, (case, "no TODO fence in", MODULE)
        source = changed
    (folder / f"{MODULE}.py").write_text(source, encoding="utf-8")
    return folder


def graded(folder, scratch, env=None, options=()):
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autograder", "grade", "--submission", str(folder), "--quiet",
                    "--seed", "5", "--results", str(pathlib.Path(scratch) / "results.json"), *options], cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, **(env or {})))
    return time.perf_counter() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--only-module", action="store_true", help=f"grade only {MODULE}, the one with the mistake")
    args = parser.parse_args(argv)
    options = ("--module", MODULE) if args.only_module else ()
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as scratch:
        floor = submission(pathlib.Path(scratch) / "solution", None)
        for case in args.cases.split(","):
            folder = submission(pathlib.Path(scratch) / case, case)
            now, before, solution = [], [], []
            for _ in range(args.runs):
                solution.append(graded(floor, scratch, options=options))
                before.append(graded(folder, scratch, {"AUTOGRADER_AFTER_TIMEOUT": "20"}, options))
                now.append(graded(folder, scratch, options=options))
            median = statistics.median
            print(f"{case}: {median(now):.1f} s with the short limit, {median(before):.1f} s with the full limit "
                  f"after a timeout (ratio {median(before) / median(now):.1f}x); the solution: "
                  f"{median(solution):.1f} s; load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
