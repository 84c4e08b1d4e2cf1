"""How well the local grade (visible suites only, what a student's template runs) stands in for the
real one, measured on the project's single-mistake submissions (tests/support/mutants_*.py).

For each mutant: do the template's public tests (exercises/tests) fail; the module's score in a
visible-only grade, the TODO its diagnosis names first; the module's score with the hidden suites at
several seeds. The summary counts what issue 38 asks to be zero:

* full local marks although the public tests fail;
* full visible marks although the hidden suites take three or more points;
* a score that depends on the seed;

and how often the diagnosis names the mutant's own TODO first (local grade and full grade).

    python tools/measure_mutants.py [--seeds 11 202 3003] [--only NAME ...] [--json FILE]

It grades in this process with one shared sandbox zygote, about 3 s a mutant and seed.
"""
import argparse
import importlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from autograder import active_assignment  # noqa: E402
from support.helpers import make_submission  # noqa: E402

ASSIGNMENT = active_assignment.current()
# tests/support/mutants_<module>.py of each module, in the assignment's order
CASES = [(module, case) for module in ASSIGNMENT.modules
         for case in importlib.import_module(f"support.mutants_{module}").CASES]
COSTLY = 3  # hidden points a mistake may not cost while every visible test passes


def public_tests_fail(folder, module):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           str(ASSIGNMENT.exercises_dir / "tests" / f"test_{module}.py")],
                          cwd=ROOT, env=dict(os.environ, AMP_EXERCISES_DIR=str(folder)), capture_output=True,
                          text=True, timeout=600)
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stdout[-2000:] + done.stderr[-2000:])
    return done.returncode == 1


def measure(module, case, seeds, boxes, work):
    from autograder.judging.engine import grade_submission

    folder = make_submission(work / case.name, {module: case.source(module)})
    row = {"module": module, "name": case.name, "todo": case.todo, "public_fail": public_tests_fail(folder, module)}
    limits = case.sandbox_limits()  # an endless loop's small limits
    local = grade_submission(folder, seed=seeds[0], include_hidden=False, modules=[module], boxes=boxes, lang="zh",
                             limits=limits)
    row["local"], row["local_max"] = local.by_module()[module]
    row["local_todo"] = local.diagnosis.get(module, {}).get("todo")
    row["full"], row["full_todo"] = [], None
    for seed in seeds:
        full = grade_submission(folder, seed=seed, include_hidden=True, modules=[module], boxes=boxes, lang="zh",
                                limits=limits)
        score, row["full_max"] = full.by_module()[module]
        row["full"].append(score)
        if row["full_todo"] is None:
            row["full_todo"] = full.diagnosis.get(module, {}).get("todo")
            row["failed"] = sorted(t.test_id for t in full.tests if t.module == module and not t.passed)
    return row


def summarize(rows):
    def names(predicate):
        return [row["name"] for row in rows if predicate(row)]

    labelled = [row for row in rows if row["todo"] is not None]
    full_local = lambda row: row["local"] == row["local_max"]  # noqa: E731
    hidden_lost = lambda row: (row["full_max"] - min(row["full"])) - (row["local_max"] - row["local"])  # noqa: E731
    return {
        "mutants": len(rows),
        "full local marks": names(full_local),
        "full local marks, public tests fail": names(lambda row: full_local(row) and row["public_fail"]),
        f"full visible marks, >= {COSTLY} hidden points lost": names(
            lambda row: full_local(row) and hidden_lost(row) >= COSTLY),
        "score depends on the seed": names(lambda row: len(set(row["full"])) > 1),
        "local diagnosis names another TODO": [row["name"] for row in labelled
                                               if row["local"] < row["local_max"] and row["local_todo"] != row["todo"]],
        "full diagnosis names another TODO": [row["name"] for row in labelled if row["full_todo"] != row["todo"]],
        "labelled": len(labelled),
        "labelled, local grade not full": sum(row["local"] < row["local_max"] for row in labelled),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[11, 202, 3003])
    parser.add_argument("--only", nargs="+", help="mutant names (default: all)")
    parser.add_argument("--json", help="write every row and the summary to this file")
    args = parser.parse_args(argv)
    from autograder.sandbox.boxes import start_boxes

    cases = [(module, case) for module, case in CASES if not args.only or case.name in args.only]
    rows, started = [], time.monotonic()
    boxes = start_boxes()
    try:
        with tempfile.TemporaryDirectory(prefix="autograder-mutants-") as work:
            for module, case in cases:
                row = measure(module, case, args.seeds, boxes, pathlib.Path(work))
                rows.append(row)
                print(f"{row['name']:42s} T{row['todo'] or '-':<3} public {'FAIL' if row['public_fail'] else 'pass'}"
                      f"  local {row['local']:g}/{row['local_max']:g} -> T{row['local_todo']}"
                      f"  full {'/'.join(f'{s:g}' for s in row['full'])} of {row['full_max']:g} -> T{row['full_todo']}",
                      flush=True)
    finally:
        boxes.close()
    summary = summarize(rows)
    print(f"\n{len(rows)} mutants in {time.monotonic() - started:.0f} s")
    for key, value in summary.items():
        print(f"{key}: {len(value) if isinstance(value, list) else value}"
              + (f"  {value}" if isinstance(value, list) and key != "full local marks" and value else ""))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"rows": rows, "summary": summary}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
