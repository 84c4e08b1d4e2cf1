"""How well the local grade (visible suites only, what a student's template runs) stands in for the
real one, measured on a chapter's single-mistake submissions.

For each mutant: do the template's public tests (exercises/tests) fail; the module's score in a
visible-only grade, the TODO its diagnosis names first; the module's score with the hidden suites at
several seeds. The summary counts what issue 38 asks to be zero:

* full local marks although the public tests fail;
* full visible marks although the hidden suites take three or more points;
* a score that depends on the seed;

and how often the diagnosis names the mutant's own TODO first (local grade and full grade).

A chapter's mistakes are files ``mutants_<module>.py`` beside its reference (its solutions/
folder; this repository's chapter keeps them in tests/support/) or named with --mutants. Each
holds ``CASES``: ``(name, TODO holding the mistake or None, [(old, new), ...])`` tuples, each
(old, new) replaced exactly once in the reference, or :class:`support.helpers.Mutant`.

    python tools/measure_mutants.py [--chapter PACKAGE|FOLDER] [--mutants FILE ...]
                                    [--seeds 11 202 3003] [--only NAME ...] [--json FILE]

It grades in this process with one shared sandbox zygote, about 3 s a mutant and seed.
"""
import argparse
import json
import pathlib
import runpy
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from autograder import active_assignment  # noqa: E402

COSTLY = 3  # hidden points a mistake may not cost while every visible test passes
# Where a chapter's mistakes are when --mutants names none: beside its reference, else the
# repository's test helpers.
MUTANT_HOMES = ("solutions", ROOT / "tests" / "support")


def mutant_files(chapter, named=None):
    """``{module: path}`` of the chapter's mistake files (``named``, else the first home holding any)."""
    if named:
        files = {}
        for path in map(pathlib.Path, named):
            module = path.stem.removeprefix("mutants_")
            if not path.stem.startswith("mutants_") or module not in chapter.modules:
                raise SystemExit(f"{path}: name it mutants_<module>.py, <module> one of {', '.join(chapter.modules)}")
            files[module] = path
        return files
    for home in MUTANT_HOMES:
        folder = chapter.solutions_dir if home == "solutions" else home
        files = {module: folder / f"mutants_{module}.py" for module in chapter.modules
                 if (folder / f"mutants_{module}.py").is_file()}
        if files:
            return files
    return {}


def cases(chapter, named=None):
    """``[(module, Mutant)]`` of the chapter's mistakes, in its modules' order."""
    from support.helpers import Mutant

    files = mutant_files(chapter, named)
    return [(module, case if isinstance(case, Mutant) else Mutant(*case)) for module in chapter.modules
            if module in files for case in runpy.run_path(str(files[module]))["CASES"]]


def public_tests_fail(chapter, folder, module):
    """Do the chapter's public tests of ``module`` fail on the modules in ``folder``? They run as a
    student runs them: copied beside the modules, in an exercises/ folder of their own (None: the
    chapter has no public test of ``module``)."""
    tests = chapter.exercises_dir / "tests"
    names = sorted(path.name for path in tests.glob("test_*.py") if module in path.stem)
    if not names:
        return None
    student = folder.parent / f"{folder.name}-public"
    shutil.copytree(tests, student / "exercises" / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.glob("*.py"):
        shutil.copyfile(path, student / "exercises" / path.name)
    (student / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           *(f"exercises/tests/{name}" for name in names)],
                          cwd=student, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stdout[-2000:] + done.stderr[-2000:])
    return done.returncode == 1


def measure(chapter, module, case, seeds, boxes, work):
    from autograder.judging.engine import grade_submission
    from support.helpers import make_submission

    folder = make_submission(work / case.name, {module: case.source(module)})
    row = {"module": module, "name": case.name, "todo": case.todo,
           "public_fail": public_tests_fail(chapter, folder, module)}
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
    parser.add_argument("--chapter", help="the chapter's package or folder (default: the active assignment)")
    parser.add_argument("--mutants", nargs="+", metavar="FILE", help="mutants_<module>.py files (default: the "
                        "chapter's, beside its reference)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[11, 202, 3003])
    parser.add_argument("--only", nargs="+", help="mutant names (default: all)")
    parser.add_argument("--json", help="write every row and the summary to this file")
    args = parser.parse_args(argv)
    # Before anything reads the active assignment (the tests' helpers do as they are imported).
    chapter = active_assignment.use(args.chapter) if args.chapter else active_assignment.current()
    from autograder.sandbox.boxes import start_boxes

    chosen = [(module, case) for module, case in cases(chapter, args.mutants)
              if not args.only or case.name in args.only]
    if not chosen:
        print(f"no mutants of {chapter.package}: write {chapter.solutions_dir}/mutants_<module>.py or name files "
              "with --mutants", file=sys.stderr)
        return 2
    rows, started = [], time.monotonic()
    boxes = start_boxes()
    try:
        with tempfile.TemporaryDirectory(prefix="autograder-mutants-") as work:
            for module, case in chosen:
                row = measure(chapter, module, case, args.seeds, boxes, pathlib.Path(work))
                rows.append(row)
                print(f"{row['name']:42s} T{row['todo'] or '-':<3} public "
                      f"{'-' if row['public_fail'] is None else 'FAIL' if row['public_fail'] else 'pass'}"
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
