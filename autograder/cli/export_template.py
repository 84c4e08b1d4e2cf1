"""``python -m autograder export-template DEST``: the command line of
:mod:`autograder.exports.template` (what it writes is documented there)."""
import pathlib
import shutil
import subprocess
import sys
import tempfile

from autograder.cli import common
from autograder.exports.template import (ExportError, _git_init, _prepare_destination, build_hidden_bundle,
                                         build_template)
from autograder.i18n import text as t
from autograder.intake import integrity


def add_parser(subparsers):
    lang = common.help_lang()
    parser = subparsers.add_parser(
        "export-template", help=t("write the student repository (no solutions, no hidden tests)", lang),
        description=t("Write the repository a student receives: stubs, public tests, the grader "
                      "without hidden tests, the assignment's own parts, the Classroom workflow and the manifest "
                      "of protected files. See docs/classroom.md.", lang))
    parser.add_argument("dest", type=pathlib.Path, metavar="DEST",
                        help=t("folder to create (absent or empty); a file with --manifest-only", lang))
    parser.add_argument("--force", action="store_true",
                        help=t("replace DEST when it holds an earlier export", lang))
    parser.add_argument("--git", action="store_true",
                        help=t("make DEST a git repository with one commit on main", lang))
    parser.add_argument("--hidden-bundle", type=pathlib.Path, metavar="DIR", default=None,
                        help=t("also write the private tests repository (grader + hidden tests)", lang))
    parser.add_argument("--manifest-only", action="store_true",
                        help=t("write only the template's manifest, to the file DEST", lang))
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
