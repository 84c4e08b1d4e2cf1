"""A class's history graded: ``grade-many --history`` on STUDENTS repositories of COMMITS commits each.

    python benchmarks/bench_history.py [--students 100] [--commits 20] [--jobs 2] [--keep DIR]

Builds a class of git repositories in a temporary folder: every student starts from the
template's stubs (one commit, the same for all) and then writes the assignment's TODOs in
order, one commit each, with now and then an attempt that does not yet raise the score
(a different file, the same grade) and a README edit at the end; each student's files carry
a line of their own, so no two students hand in the same file but the template. Then times,
in one run and under the same load:

* ``grade-many --deadline D --history`` (the class at the deadline and every commit before
  it, warm-up and report included) -- the figure the issue's budget is about;
* ``grade-many --deadline D`` (the class alone): what the history adds to a run;
* the first command again, with nothing new to grade (the history is incremental);

and prints them with the machine's load average while they ran (the CPUs are shared: read
the ratios, and the load beside the seconds). Exit 1 if a history is missing a commit.
"""
import argparse
import contextlib
import datetime
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools"), str(ROOT / "tests")]

from autograder import active_assignment  # noqa: E402
from make_stubs import make_stub  # noqa: E402
from support.git_class import git, init  # noqa: E402  (the tests' repositories with fixed dates)

ASSIGNMENT = active_assignment.current()
MODULES = ASSIGNMENT.modules
START = datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=8)))
DEADLINE = "2026-12-15T23:59+08:00"
BUDGET_S = 600.0
def _steps(index, commits):
    """What each commit after the template writes: ``(module, solved TODOs of it, attempt)``."""
    todos = [(module, todo) for module in MODULES for todo in sorted(ASSIGNMENT.todos.get(module, {}))]
    steps, solved = [], {module: set() for module in MODULES}
    for number, (module, todo) in enumerate(todos):
        if (index + number) % 3 == 0:   # an attempt first: another file, not yet a higher score
            steps.append((module, set(solved[module]), f"attempt at TODO {todo}"))
        solved[module].add(todo)
        steps.append((module, set(solved[module]), ""))
    steps = steps[:commits - 1]
    while len(steps) < commits - 1:
        steps.append((None, None, "README"))
    return steps


def make_class(root, students, commits):
    """``students`` repositories under ``root`` with ``commits`` commits each, up to the day before the deadline."""
    solutions = {m: (ASSIGNMENT.solutions_dir / f"{m}.py").read_text(encoding="utf-8") for m in MODULES}
    stubs = {m: (ASSIGNMENT.exercises_dir / f"{m}.py").read_text(encoding="utf-8") for m in MODULES}
    span = datetime.timedelta(days=13)
    for index in range(students):
        repo = init(root / f"s{index:03d}")
        (repo / "exercises").mkdir()
        for module, text in stubs.items():
            (repo / "exercises" / f"{module}.py").write_text(text, encoding="utf-8")
        (repo / "README.md").write_text("template\n", encoding="utf-8")
        git(repo, "add", "--all")
        git(repo, "commit", "--quiet", "-m", "template", when=START.isoformat())
        for number, (module, solved, note) in enumerate(_steps(index, commits), start=1):
            when = START + span * number / commits + datetime.timedelta(minutes=index)
            if module is None:
                with open(repo / "README.md", "a", encoding="utf-8") as handle:
                    handle.write(f"note {number}\n")
            else:
                todos = set(ASSIGNMENT.todos.get(module, {})) - solved
                text = f"# s{index:03d}{' ' + note if note else ''}\n" + make_stub(solutions[module], todos)
                (repo / "exercises" / f"{module}.py").write_text(text, encoding="utf-8")
            git(repo, "add", "--all")
            git(repo, "commit", "--quiet", "-m", note or f"step {number}", when=when.isoformat())


class Load:
    """The machine's 1-minute load average, sampled while a command runs."""

    def __init__(self):
        self.samples, self._stop, self.cpu = [], threading.Event(), 0.0
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.wait(5.0):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self):
        self.samples.append(os.getloadavg()[0])
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def __str__(self):
        return (f"mean {sum(self.samples) / len(self.samples):.1f}, max {max(self.samples):.1f}; "
                f"{self.cpu:.0f} CPU-s, at least {self.cpu / 2:.0f} s on two idle cores")


def _cpu_of_children():
    """CPU seconds (user and system) of every process this one has waited for, and theirs: a
    command's whole tree, whatever else the machine runs meanwhile."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--keep", metavar="DIR", help="keep the class and outputs in DIR")
    args = parser.parse_args(argv)
    with _scratch(args.keep) as scratch:
        return _measure(args, scratch)


@contextlib.contextmanager
def _scratch(keep):
    """The benchmark's folder: ``keep`` (kept), else a temporary one removed afterwards."""
    folder = pathlib.Path(keep or tempfile.mkdtemp(prefix="bench-history-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield folder
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def _measure(args, scratch):
    """Build the class in ``scratch``, time the three runs, print the figures; the exit code."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
               AUTOGRADER_GRADER_GUARD="0")
    root = scratch / "class"
    shutil.rmtree(root, ignore_errors=True)
    built = time.perf_counter()
    make_class(root, args.students, args.commits)
    print(f"class: {args.students} students x {args.commits} commits, built in {time.perf_counter() - built:.0f} s; "
          f"{os.cpu_count()} CPU(s), --jobs {args.jobs}; load average before: {os.getloadavg()[0]:.1f}")

    def run(name, *options):
        output = scratch / name
        with Load() as load:
            started, before = time.perf_counter(), _cpu_of_children()
            subprocess.run([sys.executable, "-m", "autograder", "grade-many", str(root), "--output-dir",
                            str(output), "--seed", str(args.seed), "--jobs", str(args.jobs), "--deadline",
                            DEADLINE, "--no-progress", "--no-similarity", *options],
                           cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
            seconds = time.perf_counter() - started
        load.cpu = _cpu_of_children() - before
        return seconds, load, json.loads((output / "run.json").read_text(encoding="utf-8"))

    shutil.rmtree(scratch / "history", ignore_errors=True)
    full_s, full_load, manifest = run("history", "--history")
    history = manifest["history"]
    alone_s, alone_load, _ = run("alone")
    again_s, again_load, again = run("history", "--history")
    commits = history["commits"]
    print(f"grade-many --history: {full_s:.1f} s (load {full_load}): {commits} commits, "
          f"{history['graded_modules']} module files graded in {history['graded_jobs']} jobs, "
          f"{full_s / max(1, commits):.3f} s per commit")
    print(f"grade-many, the class alone: {alone_s:.1f} s (load {alone_load}), "
          f"{alone_s / args.students:.2f} s per student")
    print(f"grade-many --history again, nothing new: {again_s:.1f} s (load {again_load}), "
          f"{again['history']['graded_jobs']} jobs")
    added = max(0.0, full_s - alone_s)
    print(f"ratio: a commit of the history costs {added / max(1, commits) / (alone_s / args.students):.2f} "
          f"of a student's grade in the class alone; the rerun takes {again_s / full_s:.2f} of the first run")
    verdict = "yes" if full_s < BUDGET_S else "NO"
    print(f"under {BUDGET_S / 60:.0f} minutes with --jobs {args.jobs}: {verdict} ({full_s:.0f} s)")
    missing = [student for student in manifest["students"]
               if len((scratch / "history" / student / "history.csv").read_text(encoding="utf-8").splitlines())
               != args.commits + 1]
    if missing:
        print(f"HISTORY INCOMPLETE for {len(missing)} student(s): {', '.join(missing[:5])}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
