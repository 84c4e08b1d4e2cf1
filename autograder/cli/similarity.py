"""``python -m autograder similarity CLASS_DIR --output-dir DIR [--report-lang zh] [--deadline ISO ...]``.

The similarity check of :mod:`autograder.similarity.pairs` on a class folder laid out
as for ``grade-many`` (one folder per student), without grading: for a
sharded run (the grade-class workflow's merge job) or to look again with
another deadline. Writes ``DIR/similarity/`` in the class page's language
(``--report-lang``, else what ``DIR/run.json`` recorded, else English); when
``DIR`` is a grade-many output folder (it has ``run.json``), its ``report.md``
is rebuilt to show it. Student code is only read, never run.
"""
import pathlib
import sys
import tempfile

from autograder import active_assignment
from autograder.cli import common
from autograder.i18n import text as t
from autograder.similarity import display


def add_parser(subparsers):
    lang = common.help_lang()
    parser = subparsers.add_parser(
        "similarity", help=t("pairwise similarity of the student modules (copydetect), per module", lang),
        description=t("Compare {files} across the student folders of CLASS_DIR (template code and what honest "
                      "solutions write alike excluded), each with the reference solution, and a module with a "
                      "framework's own file where the assignment names one. Writes DIR/similarity/ "
                      "(similarity.json, index.html, side-by-side pages).", lang,
                      files=", ".join(active_assignment.current().files())))
    parser.add_argument("root", metavar="CLASS_DIR", help=t("folder with one sub-folder per student", lang))
    parser.add_argument("--output-dir", "-o", required=True, metavar="DIR")
    parser.add_argument("--top", type=int, default=10, metavar="N",
                        help=t("closest other pairs kept per module besides the flagged groups (default 10)",
                               lang))
    common.add_report_lang(parser)
    common.add_deadline_arguments(parser)
    parser.set_defaults(func=run, only=None, also_latest=False)
    return parser


def run(args):
    from autograder.batch.grade_class import run_command

    return run_command("similarity", _run, args)


def _run(args):
    from autograder.similarity import pairs as similarity
    from autograder.batch.class_run import class_submissions, deadline_spec, recorded_extensions
    from autograder.batch.grade_class import UsageError, discover
    from autograder.batch.manifest import read_manifest

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    root, output_dir = pathlib.Path(args.root), pathlib.Path(args.output_dir)
    students = [s for s in discover(root) if (root / s).resolve() != output_dir.resolve()]
    spec = deadline_spec(args)
    manifest = read_manifest(output_dir)
    if spec is not None and manifest is not None:   # the students with an extension: at their own deadline
        spec.extensions = recorded_extensions(manifest)
    lang = args.report_lang or (manifest or {}).get("report_lang") or "en"
    with tempfile.TemporaryDirectory(prefix="autograder-similarity-") as workdir:
        submissions = class_submissions(root, students, spec, workdir)
        result = similarity.run(submissions, output_dir, top=args.top, lang=lang)
    if result.get("skipped"):
        print(f"similarity: {result['skipped']}", file=sys.stderr)
    else:
        for line in display.summary_lines(result):
            print(line)
    if manifest is not None:
        from autograder.class_reports import class_report
        from autograder.class_reports import write as class_write

        class_write.write_all(output_dir, manifest)
        print(f"wrote {output_dir / class_report.REPORT_NAME}")
    print(f"wrote {output_dir / similarity.OUTPUT_FOLDER / 'index.html'}")
    print(f"wrote {output_dir / similarity.OUTPUT_FOLDER / similarity.RESULT_NAME}")
    return 0
