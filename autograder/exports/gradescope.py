"""``python -m autograder export-gradescope DEST.zip``: a Gradescope autograder.

The zip holds this grader (hidden tests included), ``requirements.txt`` (the
repository's own, :mod:`autograder.exports.runtime`), ``setup.sh`` and
``run_autograder`` (made from ``gradescope_files/``).

``setup.sh`` builds the grader's environment from the zip's files only: a venv
on a Python new enough for the grader (installed with apt where the image has
none; a clear error where that cannot help), CPU torch from PyTorch's index,
then ``requirements.txt``; it ends by checking that the grader finds every
package it needs, so that a broken image fails its build instead of grading
every student 0 / 0. ``run_autograder`` finds the student's modules in
``/autograder/submission`` (the three ``.py`` files uploaded as they are, a
repository with ``exercises/``, or either inside one top folder) and runs
``python -m autograder grade --submission ... --results /autograder/results/results.json``
with the venv's Python, in the export's language: the same hidden tests, the
same sandbox, the same results file as everywhere else.

No otter here: Gradescope only needs ``setup.sh``, ``run_autograder`` and
``results.json`` in its format, which ``grade`` already writes.

Both scripts read ``AUTOGRADER_ROOT`` (default ``/autograder``; the venv is
``$AUTOGRADER_ROOT/venv``) and ``run_autograder`` also ``AUTOGRADER_SOURCE``,
``AUTOGRADER_SUBMISSION``, ``AUTOGRADER_RESULTS`` and ``AUTOGRADER_SEED``, so a
test can build and run the export in a temporary folder laid out like ``/autograder``.
"""
import hashlib
import io
import json
import pathlib
import stat
import zipfile

from autograder import active_assignment, locations
from autograder.exports import runtime
from autograder.i18n import check_language, text as t

PACKAGE_DIR = locations.PACKAGE_DIR
REPO_ROOT = locations.REPO_ROOT
TEMPLATES = pathlib.Path(__file__).resolve().parent / "gradescope_files"
_SKIP_DIRS = {"__pycache__", ".pytest_cache"}
REQUIREMENTS_HEADER = ("# The grader's runtime requirements: the course repository's requirements.txt,\n"
                       "# copied by export-gradescope. setup.sh installs torch from the CPU index first.\n")


# -- shared with otter_export ----------------------------------------------------------------
def package_files():
    """``(path, relative name)`` for every file of the grader package, hidden tests
    included, and the files outside it that the assignment's grader reads
    (``GRADER_FILES``); no caches or compiled files."""
    files = []
    for path in sorted(PACKAGE_DIR.rglob("*")):
        relative = path.relative_to(PACKAGE_DIR.parent)
        if any(part in _SKIP_DIRS for part in relative.parts) or path.suffix in (".pyc", ".pyo"):
            continue
        if path.is_file() and not path.is_symlink():
            files.append((path, relative.as_posix()))
    return files + grader_files()


def grader_files():
    """``(path, relative name)`` of the assignment's ``GRADER_FILES``: without them its grader
    cannot run, so a missing one stops the export."""
    files = []
    for name in active_assignment.current().grader_files:
        path = REPO_ROOT / name
        if not path.is_file() or path.is_symlink():
            raise FileNotFoundError(f"{name} (the assignment's GRADER_FILES) is missing or not a regular file")
        files.append((path, pathlib.PurePosixPath(name).as_posix()))
    return files


def package_digest():
    digest = hashlib.sha256()
    for path, name in package_files():
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def hidden_test_files():
    return sorted(name for _, name in package_files() if name.startswith("autograder/assignment/hidden/test_"))


def find_modules_folder(submission):
    """The folder of a submission that holds the exercise modules, or None.

    Looks at ``exercises/`` first, then the folder itself, then the same two
    inside each top-level sub-folder (an uploaded zip with one top folder)."""
    base = pathlib.Path(submission)
    if not base.is_dir():
        return None
    candidates = [base / "exercises", base]
    try:
        subfolders = sorted(p for p in base.iterdir()
                            if p.is_dir() and not p.is_symlink() and not p.name.startswith((".", "__")))
    except OSError:
        subfolders = []
    for folder in subfolders:
        candidates += [folder / "exercises", folder]
    for candidate in candidates:
        if candidate.is_dir() and any((candidate / f"{m}.py").is_file() for m in active_assignment.current().modules):
            return candidate
    return None


# -- the zip -----------------------------------------------------------------------------------
def _script(name):
    return (TEMPLATES / name).read_text(encoding="utf-8")


def setup_script():
    """setup.sh: the Python and the packages the grader needs, from the zip's own files."""
    floor, ceiling = runtime.python_floor(), runtime.python_ceiling()
    return (_script("setup.sh").replace("@MIN_PYTHON@", ".".join(map(str, floor)))
            .replace("@MAX_PYTHON@", ".".join(map(str, ceiling)))
            .replace("@MIN_PYTHON_TUPLE@", ", ".join(map(str, floor)))
            .replace("@MAX_PYTHON_TUPLE@", ", ".join(map(str, ceiling)))
            .replace("@TORCH@", runtime.torch_requirement())
            .replace("@TORCH_INDEX@", runtime.TORCH_CPU_INDEX))


def run_script(seed, lang):
    """run_autograder, with the seed and the feedback's language of this export."""
    # What Gradescope shows when not even Python starts: a results file written by bash.
    fallback = json.dumps({"score": 0, "tests": [], "output": t(
        "The autograder could not start (exit code {code}). Please tell the course staff.", lang,
        code="@STATUS@")}).replace("'", "\\u0027")
    return (_script("run_autograder").replace("@SEED@", "" if seed is None else str(int(seed)))
            .replace("@LANG@", lang).replace("@FALLBACK@", fallback))


def requirements_text():
    return REQUIREMENTS_HEADER + "\n".join(runtime.requirement_lines()) + "\n"


def _zip_add(archive, name, data, executable=False):
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    archive.writestr(info, data)


def build_zip(destination, seed=None, lang=None):
    """Write the Gradescope autograder zip; returns the list of names in it.
    ``lang``: the students' feedback (default: the course's, :func:`runtime.course_language`)."""
    lang = check_language(lang) or runtime.course_language()
    destination = pathlib.Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    names = []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        entries = [
            ("setup.sh", setup_script(), True),
            ("run_autograder", run_script(seed, lang), True),
            ("requirements.txt", requirements_text(), False),
            ("export-info.json", json.dumps({"grader_digest": package_digest(),
                                             "hidden_tests": hidden_test_files(),
                                             "seed": seed, "lang": lang}, indent=2) + "\n", False),
        ]
        for name, content, executable in entries:
            _zip_add(archive, name, content.encode("utf-8"), executable)
            names.append(name)
        for path, name in package_files():
            _zip_add(archive, name, path.read_bytes())
            names.append(name)
    destination.write_bytes(buffer.getvalue())
    return names
