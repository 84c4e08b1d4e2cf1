"""``python -m autograder export-gradescope DEST.zip``: a Gradescope autograder.

The zip holds this grader (hidden tests included), ``setup.sh`` (CPU torch and
the pinned grader requirements in a venv on Gradescope's Ubuntu image) and
``run_autograder``, which finds the student's modules in
``/autograder/submission`` (the three ``.py`` files uploaded as they are, a
repository with ``exercises/``, or either inside one top folder) and runs
``python -m autograder grade --submission ... --results /autograder/results/results.json``:
the same hidden tests, the same sandbox, the same results file as everywhere else.

No otter here: Gradescope only needs ``setup.sh``, ``run_autograder`` and
``results.json`` in its format, which ``grade`` already writes.

``run_autograder`` reads ``AUTOGRADER_ROOT`` (default ``/autograder``) and, to
point parts elsewhere, ``AUTOGRADER_SOURCE``, ``AUTOGRADER_SUBMISSION``,
``AUTOGRADER_RESULTS``, ``AUTOGRADER_PYTHON`` and ``AUTOGRADER_SEED``, so a test can
run it in a temporary folder laid out like ``/autograder``.
"""
import hashlib
import io
import json
import pathlib
import stat
import zipfile

from autograder import locations
from autograder import active_assignment

PACKAGE_DIR = locations.PACKAGE_DIR
REPO_ROOT = PACKAGE_DIR.parent
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
GRADER_REQUIREMENTS = ("torch", "pytest", "pytest-timeout")
_SKIP_DIRS = {"__pycache__", ".pytest_cache"}


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


def pinned_requirements():
    """The grader's runtime pins: ``torch`` from requirements.txt, pytest and
    pytest-timeout at the versions this export was made (and tested) with."""
    from importlib import metadata

    pins = {}
    requirements = REPO_ROOT / "requirements.txt"
    if requirements.is_file():
        for line in requirements.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            name = line.split("=")[0].split("<")[0].split(">")[0].split("[")[0].strip().lower()
            if name in GRADER_REQUIREMENTS:
                pins[name] = line
    for name in GRADER_REQUIREMENTS:
        try:
            version = metadata.version(name).split("+")[0]
        except metadata.PackageNotFoundError:
            continue
        if name != "torch" or name not in pins:
            pins[name] = f"{name}=={version}"
    return [pins[name] for name in GRADER_REQUIREMENTS if name in pins]


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
SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (Ubuntu, root).
# CPU-only torch (the default torch wheel pulls several GB of CUDA libraries),
# then the grader's pinned requirements, in a venv owned by the autograder.
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --upgrade pip
/autograder/venv/bin/python -m pip install --index-url {cpu_index} "{torch_pin}"
/autograder/venv/bin/python -m pip install -r /autograder/source/requirements-grader.txt
# Student code runs as 'nobody' when the grader can drop root: it must be able
# to read the interpreter and nothing else of ours needs to be writable.
chmod a+rx /autograder
chmod -R a+rX /autograder/venv /autograder/source
/autograder/venv/bin/python -c "import torch, pytest; print('torch', torch.__version__)"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, from /autograder. The AUTOGRADER_*
# variables only exist so that the export can be tested outside Gradescope.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="${{AUTOGRADER_SOURCE:-$ROOT/source}}"
SUBMISSION="${{AUTOGRADER_SUBMISSION:-$ROOT/submission}}"
RESULTS="${{AUTOGRADER_RESULTS:-$ROOT/results/results.json}}"
PYTHON="${{AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}}"
SEED="${{AUTOGRADER_SEED:-{seed}}}"
mkdir -p "$(dirname "$RESULTS")"
chmod -R a+rX "$SOURCE" 2>/dev/null || true
cd "$SOURCE"
ARGS=(run --submission "$SUBMISSION" --results "$RESULTS")
if [ -n "$SEED" ]; then ARGS+=(--seed "$SEED"); fi
"$PYTHON" -m autograder.cli.gradescope_run "${{ARGS[@]}}"
status=$?
if [ ! -s "$RESULTS" ]; then
  # the grader could not even start: still leave Gradescope a result to show
  printf '%s\\n' '{{"score": 0, "output": "The autograder could not start (exit code '"$status"'). Please tell the course staff.", "tests": []}}' > "$RESULTS"
fi
exit 0
"""


def _zip_add(archive, name, data, executable=False):
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    archive.writestr(info, data)


def build_zip(destination, seed=None):
    """Write the Gradescope autograder zip; returns the list of names in it."""
    destination = pathlib.Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    pins = pinned_requirements()
    torch_pin = next((pin for pin in pins if pin.startswith("torch")), "torch")
    names = []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        entries = [
            ("setup.sh", SETUP_SH.format(cpu_index=TORCH_CPU_INDEX, torch_pin=torch_pin), True),
            ("run_autograder", RUN_AUTOGRADER.format(seed="" if seed is None else int(seed)), True),
            ("requirements-grader.txt", "\n".join(pins) + "\n", False),
            ("export-info.json", json.dumps({"grader_digest": package_digest(),
                                             "hidden_tests": hidden_test_files(),
                                             "seed": seed}, indent=2) + "\n", False),
        ]
        for name, text, executable in entries:
            _zip_add(archive, name, text.encode("utf-8"), executable)
            names.append(name)
        for path, name in package_files():
            _zip_add(archive, name, path.read_bytes())
            names.append(name)
    destination.write_bytes(buffer.getvalue())
    return names
