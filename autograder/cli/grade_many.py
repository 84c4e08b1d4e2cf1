"""Command line of class grading: ``grade-many`` and ``merge-scores``.

    python -m autograder grade-many ROOT --output-dir DIR [--jobs N] [--seed S]
                                    [--shard K/N] [--only STUDENT ...] [--timeout SECONDS]
                                    [--allow-unconfined] [--no-similarity] [--roster FILE.csv]
                                    [--compare OLD_DIR] [--history [daily]]
                                    [--deadline ISO [--deadline-source committed|pushed]
                                     [--pushes FILE] [--also-latest] [--extensions FILE.csv]
                                     [--late-policy KEY=VALUE,...]]
    python -m autograder merge-scores SHARD_DIR [SHARD_DIR ...] --output-dir DIR

The work is in :mod:`autograder.batch.class_run` (the run: which students,
seed and commit, the outputs), :mod:`autograder.batch.grade_class` (grading),
:mod:`autograder.similarity.pairs` and :mod:`autograder.class_reports.class_report`
(the class report); this module parses the arguments and gives the exit code.
"""
import sys

from autograder.batch import class_run
from autograder.batch.grade_class import DEFAULT_TIMEOUT_S, UsageError, run_command
from autograder.cli import common
from autograder.i18n import LANGUAGES
from autograder.i18n import text as t
from autograder.judge_process import interrupts

# grade in a judge process of its own (autograder/batch/clean_process.py); tests that
# stand in for parts of the judge in this process switch it off
JUDGE_PROCESS = True


def add_parser(subparsers):
    lang = common.help_lang()
    many = subparsers.add_parser(
        "grade-many", help=t("grade one folder per student and write a class report", lang),
        description=t("Grade every student folder in ROOT (a clone of each repository, as "
                      "`gh classroom clone student-repos` lays them out, or just its exercises/). "
                      "Writes DIR/scores.csv, DIR/<student>/results.json, DIR/report.md and charts.", lang))
    many.add_argument("root", metavar="ROOT", help=t("folder with one sub-folder per student", lang))
    many.add_argument("--output-dir", "-o", required=True, metavar="DIR")
    many.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                      help=t("students graded at once (default: the number of CPUs)", lang))
    many.add_argument("--seed", type=int, default=None,
                      help=t("the run's seed, used for every student (default: random, or the seed "
                             "recorded in DIR/run.json when re-grading with --only)", lang))
    many.add_argument("--shard", default=None, metavar="K/N",
                      help=t("grade only the K-th of N deterministic slices of ROOT (1-based)", lang))
    many.add_argument("--only", action="append", default=None, metavar="STUDENT",
                      help=t("re-grade only this student (repeatable); updates DIR's CSV and report", lang))
    many.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                      help=t("wall-clock limit per student (default {seconds:g})", lang, seconds=DEFAULT_TIMEOUT_S))
    many.add_argument("--visible-only", action="store_true", help=t("run only the visible tests", lang))
    many.add_argument("--isolation", choices=("fork", "subprocess"), default=None,
                      help=t("fork a pre-imported worker per student (default on POSIX) or start a "
                             "`grade` subprocess per student (default elsewhere)", lang))
    many.add_argument("--no-progress", action="store_true", help=t("no progress output", lang))
    many.add_argument("--allow-unconfined", action="store_true",
                      help=t("grade even where student code cannot be fully confined on this machine "
                             "(no Landlock, no namespaces); the report says so", lang))
    many.add_argument("--lang", choices=LANGUAGES, default=None,
                      help=t("language of the students' feedback (default: $AUTOGRADER_LANG, else each graded "
                             "repository's [tool.autograder] lang, else the course repository's, else English)", lang))
    common.add_report_lang(many)
    common.add_deadline_arguments(many)
    many.add_argument("--extensions", default=None, metavar="FILE.csv",
                      help=t("with --deadline: per-student deadlines, a CSV file with the header "
                             "`student,deadline` (one row per student folder, each deadline like --deadline)", lang))
    many.add_argument("--late-policy", default=None, metavar="KEY=VALUE,...",
                      help=t("with --deadline: penalty_per_day=0.1,max_days=3 (default: [tool.autograder.late] in "
                             "the course repository's pyproject.toml; 'none': no late policy this run)", lang))
    many.add_argument("--also-latest", action="store_true",
                      help=t("with --deadline: also grade the latest commit where it differs and record its "
                             "score beside the graded one (never counted)", lang))
    many.add_argument("--roster", default=None, metavar="classroom_roster.csv",
                      help=t("GitHub Classroom's roster export (identifier,github_username,github_id,name): "
                             "students named in every output, gradebook.csv for an LMS, who has no repository", lang))
    many.add_argument("--history", nargs="?", const="every", choices=("every", "daily"), default=None,
                      help=t("also grade each student's commits up to now (or the deadline): every commit, or the "
                             "last of each day with 'daily'; a commit graded before is not graded again", lang))
    many.add_argument("--compare", default=None, metavar="OLD_DIR",
                      help=t("an earlier run's output folder: write changes.csv and say what the grader change "
                             "did (graded with OLD_DIR's seed unless --seed is given)", lang))
    many.add_argument("--no-similarity", action="store_true",
                      help=t("skip the similarity check (run on whole classes only: not with --shard or --only)", lang))
    many.set_defaults(func=run_grade_many)

    merge = subparsers.add_parser(
        "merge-scores", help=t("join the output folders of grade-many shards into one report", lang),
        description=t("Join grade-many output folders (e.g. one per --shard K/N) into one "
                      "DIR/scores.csv, DIR/report.md and charts.", lang))
    merge.add_argument("inputs", nargs="+", metavar="SHARD_DIR")
    merge.add_argument("--output-dir", "-o", required=True, metavar="DIR")
    common.add_report_lang(merge)
    merge.set_defaults(func=run_merge_scores)
    return many


def run_grade_many(args):
    try:
        # SIGTERM and SIGHUP end a class run as Ctrl-C does, while it plans too
        with interrupts.as_interrupt():
            return run_command("grade-many", _grade_many, args)
    except KeyboardInterrupt:
        print("grade-many: interrupted", file=sys.stderr)
        return 130


def _grade_many(args):
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    return class_run.grade_many(args, judge_process=JUDGE_PROCESS)


def run_merge_scores(args):
    return run_command("merge-scores", lambda args: class_run.merge_scores(args.inputs, args.output_dir,
                                                                           args.report_lang), args)
