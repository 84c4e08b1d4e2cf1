"""Inside Gradescope: run_autograder's and setup.sh's Python half.

    python -m autograder.cli.gradescope_run run [--submission DIR] [--results FILE] [--seed N] [--lang zh|en]
    python -m autograder.cli.gradescope_run check [--need-filter] [--quiet]

``run`` finds the modules in the uploaded submission and grades them like
``grade`` does; whatever happens, a results file is written. ``check`` (the last
step of setup.sh) fails the image's build when the grader lacks a package, so
that no student is ever graded 0 / 0 for it, and says what the sandbox gets.
"""
import argparse
import pathlib
import sys
import time

from autograder import active_assignment, locations
from autograder.exports.gradescope import find_modules_folder
from autograder.i18n import LANGUAGES, resolve_language, text as t


def _fallback_results(path, message, lang):
    from autograder.reports.gradescope import write_results
    from autograder.judging.results import GradeReport, TestResult

    test = TestResult(name="grader: submission", module="grader", max_score=0.0, score=0.0, passed=False,
                      output=message, visibility="visible")
    write_results(GradeReport(tests=[test], seed=0, notes=[message], lang=lang), path)


def run_in_gradescope(submission, results, seed=None, lang=None):
    """Find the modules in ``submission`` and grade them like ``grade`` does."""
    from autograder.__main__ import main

    lang = resolve_language(lang, root=str(locations.REPO_ROOT))
    folder = find_modules_folder(submission)
    if folder is None:
        expected = ", ".join(f"{m}.py" for m in active_assignment.current().modules)
        message = t("No exercise module was found in your submission. Upload {files} (or your repository "
                    "with its exercises/ folder).", lang, files=expected)
        print(message)
        _fallback_results(results, message, lang)
        return 0
    print(f"grading {folder}")
    argv = ["grade", "--submission", str(folder), "--results", str(results)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    argv += ["--lang", lang]
    started = time.monotonic()
    code = main(argv)
    print(f"grade finished in {time.monotonic() - started:.1f} s with exit code {code}")
    if not pathlib.Path(results).is_file():
        _fallback_results(results, t("The autograder failed before writing results; please tell the course "
                                     "staff.", lang), lang)
    return 0


def check_environment(need_filter=False, quiet=False):
    """0 when this Python has what the grader needs (and, with ``need_filter``, the
    syscall filter too); else 1, with the reason on stderr."""
    from autograder.judge_process.preflight import missing_requirements
    from autograder.sandbox.confine import syscall_filter

    missing = missing_requirements()
    if missing:
        if quiet:
            return 1
        print(f"setup.sh: the grader cannot run: {', '.join(missing)} not installed for {sys.executable} "
              f"(requirements.txt lists them; see the pip output above)", file=sys.stderr)
        return 1
    if syscall_filter.available():
        if not quiet:
            print(f"setup.sh: the grader's requirements are installed for {sys.executable}; "
                  f"the sandbox's syscall filter is available")
        return 0
    if not quiet:
        print(f"setup.sh: WARNING: no syscall filter for student code ({syscall_filter.MISSING}); "
              f"grades will say so (isolation: syscalls not filtered). Install libseccomp2 to have it.",
              file=sys.stderr)
    return 1 if need_filter else 0


def _standalone(argv):
    parser = argparse.ArgumentParser(prog="python -m autograder.cli.gradescope_run")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="(inside Gradescope) grade /autograder/submission")
    run.add_argument("--submission", default="/autograder/submission")
    run.add_argument("--results", default="/autograder/results/results.json")
    run.add_argument("--seed", type=int, default=None)
    run.add_argument("--lang", choices=LANGUAGES, default=None,
                     help="language of the feedback (the export's; default: as `grade` chooses)")
    check = sub.add_parser("check", help="(setup.sh) does this Python have what the grader needs?")
    check.add_argument("--need-filter", action="store_true", help="also fail without the syscall filter")
    check.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "check":
        return check_environment(args.need_filter, args.quiet)
    return run_in_gradescope(args.submission, args.results, args.seed, args.lang)


if __name__ == "__main__":
    sys.exit(_standalone(sys.argv[1:]))
