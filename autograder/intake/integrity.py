"""Tamper flags: does a student repository still hold the files it was given?

``python -m autograder export-template`` writes ``.github/classroom-manifest.json``
with the sha256 of every protected file (the student workflow, the public tests,
the grader, the requirements ...). :func:`tamper_flags` compares a repository
with a manifest and returns one human-readable sentence per difference; the
grader puts them in ``results.json`` (``extra_data.flags``), the terminal table
and the job summary.

This detects edits, it hides nothing: a student who controls the workflow also
controls a manifest read from their own repository. The flags carry weight when
the manifest and this module come from a trusted copy -- the instructor's
private tests repository or class-grading checkout -- named by
``$CLASSROOM_MANIFEST`` (see docs/classroom.md).

Fast and dependency-free on purpose (no torch): it runs before every grade.

    python -m autograder.intake.integrity [--manifest FILE] [REPO]   # print the flags
"""
import argparse
import contextlib
import hashlib
import importlib.util
import json
import marshal
import os
import pathlib
import stat
import sys
import time

from autograder import active_assignment
from autograder.intake import safe_files

MANIFEST_RELATIVE = ".github/classroom-manifest.json"
MANIFEST_ENV = "CLASSROOM_MANIFEST"
MANIFEST_VERSION = 1
HASH_NOTE = "sha256 of the file's bytes with CRLF and lone CR normalised to LF"

# Folders whose every file is protected, and whose *new* files are suspicious:
# a new module in the grader or a new workflow changes what runs at grading time.
PROTECTED_TREES = ("autograder", ".github/workflows")
# Files (or glob patterns) protected one by one; new public test files are a
# student's own business, a conftest.py is not (it changes how pytest runs).
PROTECTED_GLOBS = ("exercises/tests/**/*", "requirements.txt", "pyproject.toml")


def protected_globs():
    """The engine's protected files and the assignment's own (its template part's PROTECTED)."""
    assignment = active_assignment.current()
    parts = assignment.resolve(assignment.template_parts)
    return PROTECTED_GLOBS + tuple(getattr(parts, "PROTECTED", ()))


# Never hashed: caches differ on every machine. autograder/assignment/hidden/ stays
# protected: a student repository only ever holds its README (hidden tests are
# used from a trusted copy of the grader), so a test file there is a flag.
EXCLUDED_PARTS = ("__pycache__", ".pytest_cache")
EXCLUDED_SUFFIXES = (".pyc", ".pyo")

# Names that shadow a real package or hook into every Python / pytest start
# when they sit in the working directory or next to the student's modules.
SHADOW_NAMES = ("conftest.py", "sitecustomize.py", "usercustomize.py", "torch.py", "torch",
                "numpy.py", "numpy", "pytest.py", "pytest", "_pytest", "pluggy.py",
                "transformers.py", "autograder.py", "typing.py", "math.py", "random.py")
SHADOW_DIRS = ("", "exercises")


# --------------------------------------------------------------------------- hashing

MAX_PROTECTED_BYTES = 16 * 2**20


def normalised_sha256(path, root=None):
    """sha256 with line endings normalised, so a Windows checkout (autocrlf)
    hashes like the Linux one it came from. Never through a link, never a
    FIFO or device (raises :class:`autograder.intake.safe_files.UnsafeFile`). With
    ``root``, ``path`` is relative to it and a link in any component below
    ``root`` is refused, not only in the last (a linked folder would be followed
    as root)."""
    data = (safe_files.read_relative(root, str(path), MAX_PROTECTED_BYTES) if root is not None
            else safe_files.read_regular(str(path), MAX_PROTECTED_BYTES))
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return hashlib.sha256(data).hexdigest()


def _source_of_cache(cache):
    """``pkg/__pycache__/mod.cpython-311.pyc`` -> ``pkg/mod.py`` (None if not PEP 3147)."""
    cache = pathlib.Path(cache)
    if cache.parent.name != "__pycache__" or not cache.name.endswith(".pyc"):
        return None
    return cache.parent.parent / (cache.name.split(".", 1)[0] + ".py")


def planted_caches(folder, statuses=None):
    """Compiled files under ``folder`` that Python could load instead of their
    source but that do not hold that source's code: planted, or stale from an
    edit. A cache of an unchanged source is fine (Python writes them).

    Comparing means compiling the source: a cache and its source whose status
    (inode, size, times) is what it was when they were last compared in this
    process are not compiled again (:data:`_COMPARED`). ``statuses``: the folder's
    files as :class:`autograder.intake.grader_guard.GraderGuard` has just listed them
    (relative name -> :func:`file_status`), which saves walking it again."""
    folder = pathlib.Path(folder)
    if statuses is None:
        statuses = {}
        for path in folder.rglob("*.pyc"):
            with contextlib.suppress(OSError):
                statuses[path.relative_to(folder).as_posix()] = file_status(path)
    found = []
    for relative in sorted(name for name in statuses if name.endswith(".pyc")):
        cache = folder / relative
        if "-pytest-" in cache.name:
            continue  # assertion-rewrite caches: the grader runs its suites with --assert=plain
        source = _source_of_cache(cache)
        own = statuses[relative]
        if own[0] != "file" or source is None:
            found.append(relative)
            continue
        try:
            of_source = statuses.get(source.relative_to(folder).as_posix()) or file_status(source)
        except OSError:
            of_source = None
        if of_source is None or of_source[0] != "file":
            found.append(relative)
            continue
        key = (str(cache), own[1:], of_source[1:])
        planted = _COMPARED.get(key)
        if planted is None:
            planted = _differs_from_source(folder, relative, source)
            if _settled(key) and key == _comparison_key(cache, source):
                _COMPARED[key] = planted
        if planted:
            found.append(relative)
    return found


def file_status(path):
    """What a file is, as the grader's guards compare it: ``("link", target)`` for a
    symbolic link, else ``("file", inode, size, mtime, ctime)`` (any write, rename,
    link or utime changes the last)."""
    info = os.stat(path, follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path))
    return ("file", info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


# (cache, its status, its source's status) -> planted? A batch grades every student
# with the same grader files: each cache is compiled and compared once for the class,
# not once a student. Any write, rename or utime changes a file's change time; only
# files older than _SETTLED_S are kept, since two writes within one tick of the
# kernel's clock can leave the same status. On Windows st_ctime is the creation time,
# which a rewrite in place keeps: nothing is kept there.
_COMPARED = {}
_SETTLED_S = 2.0


def _comparison_key(cache, source):
    try:
        return (str(cache), file_status(cache)[1:], file_status(source)[1:])
    except OSError:
        return None


def _settled(key):
    if os.name == "nt":
        return False
    recent = time.time_ns() - int(_SETTLED_S * 1e9)
    return all(status[3] < recent and status[2] < recent for status in key[1:])


def _differs_from_source(folder, relative, source):
    try:
        data = safe_files.read_relative(folder, relative, MAX_PROTECTED_BYTES)
        text = safe_files.read_relative(folder, source.relative_to(folder).as_posix(), MAX_PROTECTED_BYTES)
        if data[:4] != importlib.util.MAGIC_NUMBER:
            return False  # another Python's cache: this one never loads it
        return marshal.loads(data[16:]) != compile(text, str(source), "exec", dont_inherit=True)
    except (OSError, ValueError, EOFError, TypeError, SyntaxError):
        return True


def _excluded(relative):
    parts = relative.split("/")
    return any(part in EXCLUDED_PARTS for part in parts) or relative.endswith(EXCLUDED_SUFFIXES)


def protected_files(repo_root):
    """Relative POSIX paths of the protected files present under ``repo_root``."""
    root = pathlib.Path(repo_root)
    found = set()
    patterns = [f"{tree}/**/*" for tree in PROTECTED_TREES] + list(protected_globs())
    for pattern in patterns:
        for path in root.glob(pattern):
            if path.is_file() and not path.is_symlink():
                relative = path.relative_to(root).as_posix()
                if not _excluded(relative):
                    found.add(relative)
    found.discard(MANIFEST_RELATIVE)
    return sorted(found)


def build_manifest(repo_root, generator="python -m autograder export-template"):
    """The manifest of ``repo_root`` as it is now (used by export-template)."""
    root = pathlib.Path(repo_root)
    return {
        "version": MANIFEST_VERSION,
        "generator": generator,
        "hash": HASH_NOTE,
        "protected_trees": list(PROTECTED_TREES),
        "files": {relative: normalised_sha256(relative, root=root) for relative in protected_files(root)},
    }


def write_manifest(repo_root, manifest=None):
    root = pathlib.Path(repo_root)
    manifest = manifest or build_manifest(root)
    target = root / MANIFEST_RELATIVE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8",
                      newline="\n")
    return target


# --------------------------------------------------------------------------- checking

def _is_development_repo(root):
    # The course's own repository: reference solutions and no manifest.
    return (root / "solutions").is_dir() and not (root / MANIFEST_RELATIVE).exists()


def _looks_like_student_repo(root):
    return any((root / marker).exists() for marker in
               (".github/workflows/classroom.yml", "exercises/tests", "autograder/__init__.py"))


def _load(path):
    try:
        data = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return None, "it has no 'files' table"
    return data, None


def _shadow_flags(root, known=()):
    flags = []
    for folder in SHADOW_DIRS:
        base = root / folder if folder else root
        if not base.is_dir():
            continue
        names = list(SHADOW_NAMES) + sorted(p.name for p in base.glob("*.pth"))
        for name in names:
            shown = f"{folder}/{name}" if folder else name
            candidate = base / name
            if shown not in known and (candidate.exists() or candidate.is_symlink()):
                flags.append(f"{shown} shadows a module or hooks into Python/pytest start-up; "
                             "remove it (the grader must import the real packages)")
    return flags


def compare(repo_root, manifest):
    """Flags for ``repo_root`` against a loaded ``manifest`` (dict)."""
    root = pathlib.Path(repo_root)
    expected = manifest["files"]
    flags = []
    for relative, digest in sorted(expected.items()):
        try:
            if normalised_sha256(relative, root=root) != digest:
                flags.append(f"protected file {relative} differs from the template")
        except safe_files.UnsafeFile as exc:
            flags.append(f"protected file {relative} is missing" if exc.kind == "missing"
                         else f"protected file {relative} {safe_files.describe(exc.kind, exc.detail)}")
    trees = tuple(f"{tree}/" for tree in manifest.get("protected_trees", PROTECTED_TREES))
    for relative in protected_files(root):
        if relative not in expected and relative.startswith(trees):
            flags.append(f"{relative} is not part of the template (new file in a protected folder)")
    for tree in manifest.get("protected_trees", PROTECTED_TREES):
        if (root / tree).is_dir() and not (root / tree).is_symlink():
            for relative in planted_caches(root / tree):
                flags.append(f"{tree}/{relative}: a compiled file that does not match its source "
                             "(Python would run it instead of the source)")
    return flags + _shadow_flags(root, known=set(expected))


def _own_manifest_flags(root, trusted_manifest):
    own = root / MANIFEST_RELATIVE
    manifest, _ = _load(own) if own.is_file() else (None, None)
    if manifest is None:
        return [f"{MANIFEST_RELATIVE} is missing or unreadable"]
    if manifest["files"] != trusted_manifest["files"]:
        return [f"{MANIFEST_RELATIVE} differs from the course's manifest"]
    return []


def submission_tamper_flags(submission):
    """:func:`tamper_flags` for the repository around a submission folder (``exercises/``'s parent)."""
    return tamper_flags(pathlib.Path(submission).resolve().parent)


def tamper_flags(repo_root, manifest_path=None):
    """One sentence per protected file that was changed, removed or added, and
    per file that shadows a module. ``[]`` for an intact repository, for the
    course's development repository and for a bare submission folder.

    The manifest is ``manifest_path``, else ``$CLASSROOM_MANIFEST`` (a trusted
    copy; the repository's own manifest is then checked against it too), else
    the repository's ``.github/classroom-manifest.json``.
    """
    root = pathlib.Path(repo_root)
    trusted = manifest_path or os.environ.get(MANIFEST_ENV) or None
    if trusted:
        manifest, problem = _load(trusted)
        if manifest is None:
            return [f"the trusted manifest {trusted} cannot be read ({problem}); integrity not checked"]
        return _own_manifest_flags(root, manifest) + compare(root, manifest)
    own = root / MANIFEST_RELATIVE
    if _is_development_repo(root) or not _looks_like_student_repo(root):
        return []
    if not own.exists():
        return [f"{MANIFEST_RELATIVE} is missing: the repository's integrity cannot be checked"] \
            + _shadow_flags(root)
    manifest, problem = _load(own)
    if manifest is None:
        return [f"{MANIFEST_RELATIVE} cannot be read ({problem})"] + _shadow_flags(root)
    return compare(root, manifest)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder.intake.integrity",
                                     description="Print the tamper flags of a repository.")
    parser.add_argument("repo", nargs="?", default=".", type=pathlib.Path)
    parser.add_argument("--manifest", default=None, help=f"trusted manifest (default: ${MANIFEST_ENV}, "
                                                         f"else the repository's {MANIFEST_RELATIVE})")
    args = parser.parse_args(argv)
    flags = tamper_flags(args.repo, args.manifest)
    for flag in flags:
        print(flag)
    if not flags:
        print("no tamper flags")
    return 1 if flags else 0


if __name__ == "__main__":
    sys.exit(main())
