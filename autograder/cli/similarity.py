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
from autograder.reports.safe_text import terminal_line


def add_parser(subparsers):
    from autograder.cli.grade_many import add_deadline_arguments, add_report_lang

    parser = subparsers.add_parser(
        "similarity", help="pairwise similarity of the student modules (copydetect), per module",
        description=f"Compare {', '.join(active_assignment.current().files())} across the student "
                    "folders of CLASS_DIR (template code and what honest solutions write alike excluded), each "
                    "with the reference solution, and a module with a framework's own file where the assignment "
                    "names one. Writes DIR/similarity/ (similarity.json, index.html, side-by-side pages).")
    parser.add_argument("root", metavar="CLASS_DIR", help="folder with one sub-folder per student")
    parser.add_argument("--output-dir", "-o", required=True, metavar="DIR")
    parser.add_argument("--top", type=int, default=10, metavar="N",
                        help="closest other pairs kept per module besides the flagged groups (default 10)")
    add_report_lang(parser)
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
    manifest = read_manifest(output_dir)
    lang = args.report_lang or (manifest or {}).get("report_lang") or "en"
    with tempfile.TemporaryDirectory(prefix="autograder-similarity-") as workdir:
        submissions = _submissions(root, students, spec, workdir)
        result = similarity.run(submissions, output_dir, top=args.top, lang=lang)
    if result.get("skipped"):
        print(f"similarity: {result['skipped']}", file=sys.stderr)
    else:
        _print_summary(result)
    if manifest is not None:
        from autograder.class_reports import class_report
        from autograder.class_reports import write as class_write

        class_write.write_all(output_dir, manifest)
        print(f"wrote {output_dir / class_report.REPORT_NAME}")
    print(f"wrote {output_dir / similarity.OUTPUT_FOLDER / 'index.html'}")
    print(f"wrote {output_dir / similarity.OUTPUT_FOLDER / similarity.RESULT_NAME}")
    return 0


def _line(score, names, flagged, severity=""):
    from autograder.similarity.display import shown_score

    mark = f"  FLAGGED ({severity})" if flagged else ""
    return terminal_line(f"  {shown_score(score)}  {names}{mark}", limit=300)


def _print_summary(result):
    for module, data in result.get("modules", {}).items():
        groups = [row for row in data["pairs"] if row["flagged"]]
        print(f"{module}: {data['submissions']} submission(s), {len(groups)} flagged group(s) "
              f"(threshold {data['threshold']:.2f})")
        for row in groups + [row for row in data["pairs"] if not row["flagged"]][:2]:
            members = row.get("members") or [row["a"], row["b"]]
            names = (f"{len(members)} students: " if len(members) > 2 else "") + " / ".join(map(str, members))
            print(_line(row["score"], names, row["flagged"], row.get("severity", "")))
    for module, data in (result.get("solution_reference") or {}).items():
        if data.get("public"):
            print(f"{module} against the reference: not compared (the reference is public)")
            continue
        hits = [row for row in data.get("matches", []) if row["flagged"]]
        print(f"{module} against the reference: {len(hits)} flagged (threshold {data.get('threshold', 0):.2f})")
        for row in hits:
            print(_line(row["score"], " / ".join(map(str, row.get("members") or [row["student"]])), True,
                        row.get("severity", "")))
    torch = result.get("torch_reference")
    if not torch:
        pass
    elif torch.get("skipped"):
        print(f"{torch['label']}: {torch['skipped']}")
    else:
        hits = [row for row in torch.get("matches", []) if row["flagged"]]
        print(f"{torch['label']}: {len(hits)} {torch['module']}.py flagged")
        for row in hits:
            print(_line(row["score"], " / ".join(map(str, row.get("members") or [row["student"]])), True,
                        row.get("severity", "")))
