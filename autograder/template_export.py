"""``python -m autograder export-template DEST``: the repository a student receives.

    python -m autograder export-template DEST [--force] [--git]
                                         [--hidden-bundle DIR] [--manifest-only]

DEST becomes a working repository of its own: the exercise stubs and public
tests, the grader without its hidden tests, the optional GPU lab, a student
README, a ``pyproject.toml`` whose bare ``pytest`` runs the public tests, the
Classroom workflow and ``.github/classroom-manifest.json`` (sha256 of every
protected file, see :mod:`autograder.integrity`). Never: ``solutions/``, the
hidden tests, this repository's own ``tests/``, ``tools/`` or benchmark results.

``--hidden-bundle DIR`` also writes the content of the course's *private* tests
repository (mode (a) in docs/classroom.md): the complete grader with its hidden
tests, the requirements and the trusted manifest.

``--manifest-only`` treats DEST as a file and writes only the manifest that the
template would carry: instructor-side grading (mode (b)) points
``$CLASSROOM_MANIFEST`` at it.
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from autograder import integrity

ROOT = pathlib.Path(__file__).resolve().parent.parent
TEMPLATE_FILES = ROOT / ".github" / "template"      # texts that only exist in the template
WORKFLOW = ".github/workflows/classroom.yml"
LAB_RESULTS = "benchmarks/results/train_mixed_precision_backward"
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".pytest_cache",
                                 "train-amp-backward_*", "results.json")

STUDENT_GITIGNORE = """\
__pycache__/
*.pyc
.pytest_cache/
.venv/
venv/
results.json
.grading/
# A CPU smoke record of the GPU lab earns no credit: keep it out of commits.
benchmarks/results/train_mixed_precision_backward/train-amp-backward_cpu_smoke.*
"""


class ExportError(Exception):
    """The source repository lacks something the template needs (exit 2)."""


def _require(path):
    if not path.exists():
        raise ExportError(f"{path.relative_to(ROOT)} is missing: cannot build the template")
    return path


def student_pyproject(text):
    """The development pyproject with the student's test path: a bare ``pytest``
    in the template runs the public tests (``exercises/tests``)."""
    lines = text.splitlines()
    out, replaced = [], False
    for line in lines:
        if re.match(r"\s*testpaths\s*=", line):
            # drop the comment block that explains the development layout
            while out and out[-1].lstrip().startswith("#"):
                out.pop()
            out.append("# A bare `pytest` runs the public tests of the exercises.")
            out.append('testpaths = ["exercises/tests"]')
            replaced = True
        else:
            out.append(line)
    if not replaced:
        raise ExportError("pyproject.toml has no testpaths line to adapt for students")
    result = "\n".join(out) + "\n"
    try:
        import tomllib  # Python 3.11+; the check is a courtesy on 3.10
    except ImportError:
        return result
    if tomllib.loads(result)["tool"]["pytest"]["ini_options"]["testpaths"] != ["exercises/tests"]:
        raise ExportError("could not adapt pyproject.toml's testpaths for students")
    return result


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def _copy_tree(source, destination):
    shutil.copytree(source, destination, ignore=IGNORED, symlinks=False)


def build_template(dest):
    """Write the student repository into ``dest`` (absent or empty)."""
    dest = pathlib.Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    _require(ROOT / WORKFLOW)
    _require(ROOT / "exercises" / "tests")

    _copy_tree(ROOT / "exercises", dest / "exercises")
    # The grader ships so that `python -m autograder grade` runs the visible
    # suites locally; everything under hidden/ stays behind, replaced by a note.
    _copy_tree(ROOT / "autograder", dest / "autograder")
    shutil.rmtree(dest / "autograder" / "hidden", ignore_errors=True)
    (dest / "autograder" / "hidden").mkdir()
    shutil.copyfile(_require(TEMPLATE_FILES / "hidden-README.md"),
                    dest / "autograder" / "hidden" / "README.md")
    _copy_tree(ROOT / "gpu_lab", dest / "gpu_lab")
    _write(dest / LAB_RESULTS / ".gitkeep", "")

    shutil.copyfile(ROOT / "requirements.txt", dest / "requirements.txt")
    _write(dest / "pyproject.toml",
           student_pyproject(_require(ROOT / "pyproject.toml").read_text(encoding="utf-8")))
    shutil.copyfile(_require(TEMPLATE_FILES / "README.md"), dest / "README.md")
    _write(dest / ".gitignore", STUDENT_GITIGNORE)
    (dest / ".github" / "workflows").mkdir(parents=True)
    shutil.copyfile(ROOT / WORKFLOW, dest / WORKFLOW)

    leaked = [p for p in ("solutions", "tests", "tools") if (dest / p).exists()]
    leaked += [str(p.relative_to(dest)) for p in (dest / "autograder" / "hidden").glob("test_*")]
    if leaked:  # belt and braces: the copy rules above must never let these through
        raise ExportError(f"refusing to leave {leaked} in the student template")
    return integrity.write_manifest(dest)


def build_hidden_bundle(bundle, template_manifest):
    """The private tests repository (mode a): a complete, trusted grader."""
    bundle = pathlib.Path(bundle)
    hidden = sorted((ROOT / "autograder" / "hidden").glob("test_hidden_*.py"))
    if not hidden:
        raise ExportError("autograder/hidden/ holds no test_hidden_*.py: nothing to bundle")
    bundle.mkdir(parents=True, exist_ok=True)
    _copy_tree(ROOT / "autograder", bundle / "autograder")
    shutil.copyfile(ROOT / "requirements.txt", bundle / "requirements.txt")
    shutil.copyfile(template_manifest, bundle / "classroom-manifest.json")
    shutil.copyfile(_require(TEMPLATE_FILES / "bundle-README.md"), bundle / "README.md")
    _write(bundle / ".gitignore", STUDENT_GITIGNORE)
    return [path.name for path in hidden]


def _prepare_destination(dest, force, marker):
    """Accept an absent or empty folder; with --force, also an earlier export,
    recognised by ``marker`` -- never any other folder (no solutions/ either)."""
    if not dest.exists():
        return
    if not dest.is_dir():
        raise ExportError(f"{dest} exists and is not a folder")
    if not any(dest.iterdir()):
        return
    if force and (dest / marker).is_file() and not (dest / "solutions").exists():
        shutil.rmtree(dest)
        return
    raise ExportError(f"{dest} is not empty (use --force to replace an earlier export)")


def _git_init(dest):
    commands = [["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                ["git", "-c", "user.name=Course staff", "-c", "user.email=staff@example.invalid",
                 "commit", "-q", "-m", "Exercise template"]]
    for command in commands:
        subprocess.run(command, cwd=dest, check=True)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "export-template", help="write the student repository (no solutions, no hidden tests)",
        description="Write the repository a student receives: stubs, public tests, the grader "
                    "without hidden tests, the GPU lab, the Classroom workflow and the manifest "
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
            with tempfile.TemporaryDirectory(prefix="amp-template-") as scratch:
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
