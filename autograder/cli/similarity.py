"""``python -m autograder similarity CLASS_DIR --output-dir DIR [--deadline ISO ...]``.

The similarity check of :mod:`autograder.similarity.pairs` on a class folder laid out
as for ``grade-many`` (one folder per student), without grading: for a
sharded run (the grade-class workflow's merge job) or to look again with
another deadline. Writes ``DIR/similarity/``; when ``DIR`` is a grade-many
output folder (it has ``run.json``), its ``report.md`` is rebuilt to show it.
Student code is only read, never run.
"""
import pathlib
import sys
import tempfile

from autograder import active_assignment
from autograder.reports.safe_text import terminal_line


def add_parser(subparsers):
    from autograder.cli.grade_many import add_deadline_arguments

    parser = subparsers.add_parser(
        "similarity", help="pairwise similarity of the student modules (copydetect), per module",
        description=f"Compare {', '.join(active_assignment.current().files())} across the student "
                    "folders of CLASS_DIR (template code excluded), each with the reference solution, and a "
                    "module with a framework's own file where the assignment names one. Writes "
                    "DIR/similarity/ (similarity.json, index.html, side-by-side pages).")
    parser.add_argument("root", metavar="CLASS_DIR", help="folder with one sub-folder per student")
    parser.add_argument("--output-dir", "-o", required=True, metavar="DIR")
    parser.add_argument("--top", type=int, default=10, metavar="N",
                        help="pairs kept per module besides the flagged ones (default 10)")
    add_deadline_arguments(parser)
    parser.set_defaults(func=run, only=None, also_latest=False)
    return parser


def run(args):
    from autograder.batch.grade_class import run_command

    return run_command("similarity", _run, args)


def _submissions(root, students, spec, workdir):
    """``{student: folder}`` as grade-many would grade them (at the deadline when given)."""
    from autograder.batch.plan import locate_submission
    from autograder.batch.deadline import take_snapshot

    found = {}
    for index, student in enumerate(students):
        folder = root / student
        if spec is not None:
            snapshot = take_snapshot(folder, student, spec, pathlib.Path(workdir) / f"{index:05d}")
            if snapshot.status:
                continue
            folder = snapshot.tree or folder
        submission, _, _ = locate_submission(folder)
        if submission is not None:
            found[student] = submission
    return found


def _run(args):
    from autograder.similarity import pairs as similarity
    from autograder.batch.grade_class import UsageError, discover
    from autograder.cli.grade_many import deadline_spec
    from autograder.batch.manifest import read_manifest

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    root, output_dir = pathlib.Path(args.root), pathlib.Path(args.output_dir)
    students = [s for s in discover(root) if (root / s).resolve() != output_dir.resolve()]
    spec = deadline_spec(args)
    with tempfile.TemporaryDirectory(prefix="amp-similarity-") as workdir:
        submissions = _submissions(root, students, spec, workdir)
        result = similarity.run(submissions, output_dir, top=args.top)
    if result.get("skipped"):
        print(f"similarity: {result['skipped']}", file=sys.stderr)
    else:
        _print_summary(result)
    manifest = read_manifest(output_dir)
    if manifest is not None:
        from autograder.class_reports import class_report
        from autograder.class_reports import write as class_write

        class_write.write_all(output_dir, manifest)
        print(f"wrote {output_dir / class_report.REPORT_NAME}")
    print(f"wrote {output_dir / similarity.OUTPUT_FOLDER / similarity.RESULT_NAME}")
    return 0


def _print_summary(result):
    for module, data in result.get("modules", {}).items():
        flagged = [pair for pair in data["pairs"] if pair["flagged"]]
        print(f"{module}: {data['submissions']} submission(s), {len(flagged)} flagged pair(s)")
        for pair in data["pairs"][:3]:
            names = " / ".join(str(name) for name in pair.get("members") or [pair["a"], pair["b"]])
            print(terminal_line(f"  {pair['score']:.2f}  {'identical: ' if pair.get('identical') else ''}{names}"
                                + ("  FLAGGED" if pair["flagged"] else ""), limit=300))
    torch = result.get("torch_reference")
    if not torch:
        pass
    elif torch.get("skipped"):
        print(f"{torch['label']}: {torch['skipped']}")
    else:
        hits = [row for row in torch.get("matches", []) if row["flagged"]]
        print(f"{torch['label']}: {len(hits)} {torch['module']}.py flagged")
        for row in hits:
            print(terminal_line(f"  {row['score']:.2f}  {row['student']}", limit=300))
