"""Inside Gradescope: run_autograder's Python half.

    python -m autograder.cli.gradescope_run run [--submission DIR] [--results FILE] [--seed N]

Finds the modules in the uploaded submission and grades them like ``grade``
does; whatever happens, a results file is written.
"""
import argparse
import pathlib
import sys
import time

from autograder import active_assignment
from autograder.exports.gradescope import find_modules_folder


def _fallback_results(path, message):
    from autograder.reports.gradescope import write_results
    from autograder.judging.results import GradeReport, TestResult

    test = TestResult(name="grader: submission", module="grader", max_score=0.0, score=0.0, passed=False,
                      output=message, visibility="visible")
    write_results(GradeReport(tests=[test], seed=0, notes=[message]), path)


def run_in_gradescope(submission, results, seed=None):
    """Find the modules in ``submission`` and grade them like ``grade`` does."""
    from autograder.__main__ import main

    folder = find_modules_folder(submission)
    if folder is None:
        expected = ", ".join(f"{m}.py" for m in active_assignment.current().modules)
        message = (f"No exercise module was found in your submission. Upload {expected} (or your "
                   f"repository with its exercises/ folder).")
        print(message)
        _fallback_results(results, message)
        return 0
    print(f"grading {folder}")
    argv = ["grade", "--submission", str(folder), "--results", str(results)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    started = time.monotonic()
    code = main(argv)
    print(f"grade finished in {time.monotonic() - started:.1f} s with exit code {code}")
    if not pathlib.Path(results).is_file():
        _fallback_results(results, "The autograder failed before writing results; please tell the "
                                   "course staff.")
    return 0


def _standalone(argv):
    parser = argparse.ArgumentParser(prog="python -m autograder.cli.gradescope_run")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="(inside Gradescope) grade /autograder/submission")
    run.add_argument("--submission", default="/autograder/submission")
    run.add_argument("--results", default="/autograder/results/results.json")
    run.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    return run_in_gradescope(args.submission, args.results, args.seed)


if __name__ == "__main__":
    sys.exit(_standalone(sys.argv[1:]))
