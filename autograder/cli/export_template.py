"""``python -m autograder export-template DEST``: the command line of
:mod:`autograder.exports.template` (what it writes is documented there)."""
import pathlib
import shutil
import subprocess
import sys
import tempfile

from autograder.exports.template import (ExportError, _git_init, _prepare_destination, build_hidden_bundle,
                                         build_template)
from autograder.intake import integrity


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "export-template", help="write the student repository (no solutions, no hidden tests)",
        description="Write the repository a student receives: stubs, public tests, the grader "
                    "without hidden tests, the assignment's own parts, the Classroom workflow and the manifest "
                    "of protected files. See docs/classroom.md.")
    parser.add_argument("dest", type=pathlib.Path, metavar="DEST",
                        help="folder to create (absent or empty); a file with --manifest-only")
    parser.add_argument("--force", action="store_true",
                        help="replace DEST when it holds an earlier export")
    parser.add_argument("--git", action="store_true",
                        help="make DEST a git repository with one commit on main")
    parser.add_argument("--hidden-bundle", type=pathlib.Path, metavar="DIR", default=None,
                        help="also write the private tests repository (grader + hidden tests)")
    parser.add_argument("--manifest-only", action="store_true",
                        help="write only the template's manifest, to the file DEST")
    parser.set_defaults(func=run)
    return parser


def run(args):
    try:
        if args.manifest_only:
            with tempfile.TemporaryDirectory(prefix="autograder-template-") as scratch:
                manifest = build_template(pathlib.Path(scratch) / "template")
                args.dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(manifest, args.dest)
            print(f"manifest written to {args.dest}")
            return 0
        _prepare_destination(args.dest, args.force, integrity.MANIFEST_RELATIVE)
        if args.hidden_bundle is not None:
            _prepare_destination(args.hidden_bundle, args.force, "classroom-manifest.json")
        manifest = build_template(args.dest)
        print(f"student template written to {args.dest} "
              f"({len(integrity.build_manifest(args.dest)['files'])} protected files)")
        if args.hidden_bundle is not None:
            names = build_hidden_bundle(args.hidden_bundle, manifest)
            print(f"private tests bundle written to {args.hidden_bundle}: {', '.join(names)}")
        if args.git:
            _git_init(args.dest)
            print(f"{args.dest}: git repository with one commit on main")
    except (ExportError, OSError, subprocess.CalledProcessError) as exc:
        print(f"export-template: {exc}", file=sys.stderr)
        return 2
    return 0
