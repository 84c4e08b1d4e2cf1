"""Batch grading vs one ``grade`` process per student, per submission.

    python benchmarks/bench_grade_many.py [--students 40] [--single 4] [--warmup 1] [--jobs N] [--rounds 3]

Builds a synthetic class of the active assignment in a temporary folder (copies of
its solutions, its stubs, and wrong variants: one TODO left unwritten, a syntax error,
a missing or stubbed module; in repository and bare layouts), then times

* ``python -m autograder grade`` once per student, sequentially, for ``--single``
  of them (what a TA would script without grade-many), after ``--warmup``
  untimed grades, and
* ``python -m autograder grade-many`` over the whole class (warm-up, report and
  charts included),

checks that every student graded both ways got the same total (same seed), and
prints both per-submission figures and their ratio. Exit 1 if a total differs.
Figures come from one run on a shared machine: read the ratio, not the seconds.
The single grades and the batch are timed ``--rounds`` times in turn (three by
default), each round giving its own ratio, and the median of those is printed: a
machine whose speed drifts moves single rounds, much less their median.
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from autograder import active_assignment  # noqa: E402
from make_stubs import make_stub  # noqa: E402

ASSIGNMENT = active_assignment.current()
MODULES = ASSIGNMENT.modules


def _todos(module):
    return sorted(ASSIGNMENT.todos.get(module, {}))


# name -> function(module -> solution text) -> {module: text or None (omit)}
def _variants():
    first, middle, last = MODULES[0], MODULES[len(MODULES) // 2], MODULES[-1]

    def solution(texts):
        return dict(texts)

    def stub(_texts):
        return {m: (ASSIGNMENT.exercises_dir / f"{m}.py").read_text(encoding="utf-8") for m in MODULES}

    def unwritten(module, pick):
        """One TODO of ``module`` left as the stub has it: the rest of the module runs."""
        def build(texts):
            todos = _todos(module)
            return dict(texts, **{module: make_stub(texts[module], {pick(todos)}) if todos else stub(texts)[module]})
        return build

    def syntax_error(texts):
        return dict(texts, **{middle: texts[middle] + "\ndef broken(:\n"})

    def missing_module(texts):
        return dict(texts, **{first: None})

    def stub_module(texts):
        return dict(texts, **{middle: stub(texts)[middle]})

    return [("solution", solution), ("stub", stub), ("first-todo-unwritten", unwritten(first, min)),
            ("last-todo-unwritten", unwritten(last, max)), ("syntax-error", syntax_error),
            ("missing-module", missing_module), ("stub-module", stub_module)]


def make_class(root, count):
    """``count`` student folders under ``root``; returns ``[(student, submission_dir)]``."""
    texts = {m: (ASSIGNMENT.solutions_dir / f"{m}.py").read_text(encoding="utf-8") for m in MODULES}
    variants = _variants()
    students = []
    for index in range(count):
        name, build = variants[index % len(variants)]
        student = f"s{index:03d}-{name}"
        repo_layout = index % 3 != 2  # every third student hands in a bare exercises folder
        folder = root / student / ("exercises" if repo_layout else "")
        folder.mkdir(parents=True)
        if repo_layout:
            (root / student / "README.md").write_text(f"{student}\n", encoding="utf-8")
        for module, text in build(texts).items():
            if text is not None:
                (folder / f"{module}.py").write_text(text, encoding="utf-8")
        students.append((student, folder))
    return students


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--single", type=int, default=4, help="students also graded one process each")
    parser.add_argument("--warmup", type=int, default=1, help="untimed single grades before the timed ones")
    parser.add_argument("--jobs", type=int, default=None, help="grade-many --jobs (default: CPU count)")
    parser.add_argument("--also-jobs1", action="store_true", help="also time grade-many --jobs 1")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of (single grades, then grade-many), each its own ratio; the median is reported")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--keep", metavar="DIR", help="keep the class and outputs in DIR")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    jobs = args.jobs or cpus
    scratch = pathlib.Path(args.keep or tempfile.mkdtemp(prefix="bench-grade-many-"))
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        root = scratch / "class"
        if root.exists():
            shutil.rmtree(root)
        students = make_class(root, args.students)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))

        # one `grade` process per student, sequentially; spread over the variants
        step = max(1, len(students) // max(1, args.single))
        chosen = students[::step][:args.single]

        def grade(student, folder):
            results = scratch / "single" / f"{student}.json"
            results.parent.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "autograder", "grade", "--submission", str(folder),
                            "--results", str(results), "--seed", str(args.seed), "--quiet"],
                           cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
            return time.perf_counter() - started, json.loads(results.read_text(encoding="utf-8"))["score"]

        def batch(job_count, name):
            output = scratch / name
            if output.exists():
                shutil.rmtree(output)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "autograder", "grade-many", str(root), "--output-dir",
                            str(output), "--seed", str(args.seed), "--jobs", str(job_count), "--no-progress"],
                           cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
            return time.perf_counter() - started, output

        # Untimed first: the first process after a pause reads torch from a cold cache,
        # a cost a TA grading a whole class pays once, not once per student.
        for student, folder in chosen[:args.warmup]:
            grade(student, folder)
        # Each round times the single grades and then the batch back to back, so that its
        # ratio compares the two under the same machine load (a shared machine drifts).
        ratios, mismatches = {}, []
        for round_index in range(args.rounds):
            single_totals, single_times = {}, []
            for student, folder in chosen:
                seconds, single_totals[student] = grade(student, folder)
                single_times.append(seconds)
            batch_s, output = batch(jobs, "grade-many")
            runs = [(jobs, batch_s)]
            if args.also_jobs1 and jobs != 1:
                runs.append((1, batch(1, "grade-many-jobs1")[0]))

            for student, total in single_totals.items():
                data = json.loads((output / student / "results.json").read_text(encoding="utf-8"))
                if data["score"] != total:
                    mismatches.append(f"{student}: grade {total} vs grade-many {data['score']}")
            if round_index == 0:
                manifest = json.loads((output / "run.json").read_text(encoding="utf-8"))
                statuses = {}
                for entry in manifest["students"].values():
                    statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
                print(f"class: {len(students)} synthetic students "
                      f"({', '.join(f'{n} {s}' for s, n in statuses.items())}), seed {args.seed}, "
                      f"{os.cpu_count()} CPU(s)")
            if args.rounds > 1:
                print(f"round {round_index + 1} of {args.rounds}:")
            per_single = sum(single_times) / len(single_times) if single_times else None
            if per_single is not None:
                print(f"python -m autograder grade, one process per student: {per_single:6.2f} s per submission "
                      f"({len(single_times)} timed: {', '.join(f'{t:.1f}' for t in single_times)})")
            for job_count, seconds in runs:
                per_batch = seconds / len(students)
                print(f"python -m autograder grade-many --jobs {job_count}:            {per_batch:6.2f} s per submission "
                      f"({seconds:.1f} s for {len(students)}, warm-up and report included)")
                if per_single is not None:
                    ratios.setdefault(job_count, []).append(per_single / per_batch)
                    print(f"ratio (per submission, --jobs {job_count}): {per_single / per_batch:.1f}x faster")
        if args.rounds > 1:
            for job_count, values in ratios.items():
                print(f"median ratio over {len(values)} rounds (--jobs {job_count}): {statistics.median(values):.1f}x faster "
                      f"(rounds: {', '.join(f'{v:.1f}' for v in values)})")
        if mismatches:
            print("TOTALS DIFFER:\n  " + "\n  ".join(mismatches))
            return 1
        print(f"totals identical for the {len(chosen)} student(s) graded both ways"
              + (f", in each of the {args.rounds} rounds" if args.rounds > 1 else ""))
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
