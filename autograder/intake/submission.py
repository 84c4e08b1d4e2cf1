"""Taking a submission in: the contract files, nothing else, copied
without following links into one box folder per module.

A submission is the assignment's module files: helper modules next to them are not copied (a
module that imports one fails with ``ModuleNotFoundError``, and the grade says
why), and each box sees only its own module, so a broken module costs only its
own tests. A module that is a symbolic link, a FIFO, a device or larger than
1 MiB is not read; the feedback says which.

Layout of the grading area (a fresh temporary folder of the judge)::

    area/                     0711, the judge's
      <module>/               0700, the student's uid (as root)
        submission/<module>.py   read-only copy
        scratch/              mount point of the box's tmpfs
      <module>.log            the worker's stdout and stderr (0600, the judge's)
"""
import os
import pathlib

from autograder import locations
from autograder import active_assignment
from autograder.intake import safe_files

MAX_SOURCE_BYTES = 1 * 2**20
REPO_ROOT = locations.REPO_ROOT
PACKAGE_DIR = REPO_ROOT / "autograder"


def grader_folders():
    """Folders a box must never read: the grader, its hidden tests, the solutions, and the active
    chapter with its reference wherever they are (a course's chapters/, a folder of their own);
    none inside another."""
    chapter = active_assignment.current()
    folders = []
    for path in (PACKAGE_DIR, REPO_ROOT / "solutions", REPO_ROOT / "tests", chapter.folder, chapter.solutions_dir):
        if path.is_dir() and not any(path == folder or folder in path.parents for folder in folders):
            folders.append(path)
    return [str(path) for path in folders]


def forbidden_folders():
    """Folders no path a box reads may contain: the repository, and the active chapter where it is
    outside it (the judge imports it from its parent folder, which the box's interpreter then lists)."""
    chapter = active_assignment.current().folder
    return [str(REPO_ROOT)] + ([str(chapter)] if REPO_ROOT not in chapter.parents else [])


def _chown(path, uid, gid):
    if uid is not None:
        os.chown(path, uid, gid)


def take(submission_dir, area, uid=None, gid=None):
    """Copy the contract files of ``submission_dir`` into ``area``; returns
    ``(specs, notes)``: one box spec per module and notes for the student."""
    area = pathlib.Path(area)
    os.chmod(area, 0o711)
    notes = []
    folder_problem, folder = None, None
    try:
        # A descriptor of the folder itself where the platform can open one
        # (then no link anywhere below it is followed); the path elsewhere.
        folder = safe_files.open_directory(submission_dir) if safe_files.DIR_FD_SUPPORTED else None
        if folder is None and (safe_files.is_link(submission_dir) or not os.path.isdir(submission_dir)):
            raise safe_files.UnsafeFile(submission_dir, "symlink" if safe_files.is_link(submission_dir)
                                        else "missing")
    except safe_files.UnsafeFile as exc:
        if exc.kind == "symlink":
            folder_problem = "was not read: the submission folder is a symbolic link"
        elif exc.kind != "missing":
            folder_problem = f"was not read: the submission folder {safe_files.describe(exc.kind, exc.detail)}"
    if folder is not None:
        source = folder
    elif folder_problem is None and os.path.isdir(submission_dir) and not safe_files.DIR_FD_SUPPORTED:
        source = str(submission_dir)
    else:
        source = None  # missing, or refused
    specs = {}
    try:
        for module in active_assignment.current().modules:
            specs[module] = _take_module(module, source, folder_problem, area, uid, gid)
        if source is not None:
            graded = active_assignment.current().files()
            extra = sorted(name for name in os.listdir(source) if name.endswith(".py") and name not in graded)
            if extra:
                notes.append(f"Only {', '.join(graded)} are graded; "
                             "these files were ignored (a graded module cannot import them): "
                             + ", ".join(repr(name) for name in extra[:10]))
    finally:
        if folder is not None:
            os.close(folder)
    return specs, notes


def _read_module(module, source):
    """``source``: a folder descriptor, or the folder's path where there is none."""
    if isinstance(source, int):
        return safe_files.read_regular(f"{module}.py", MAX_SOURCE_BYTES, dir_fd=source)
    if not os.path.exists(os.path.join(source, f"{module}.py")) and \
            not safe_files.is_link(os.path.join(source, f"{module}.py")):
        raise safe_files.UnsafeFile(module, "missing")
    return safe_files.read_regular(os.path.join(source, f"{module}.py"), MAX_SOURCE_BYTES)


def _take_module(module, source, folder_problem, area, uid, gid):
    box = area / module
    box.mkdir(mode=0o700)
    copy = box / "submission"
    scratch = box / "scratch"
    copy.mkdir(mode=0o755)
    scratch.mkdir(mode=0o700)
    spec = {"submission": str(copy), "scratch": str(scratch), "log": str(area / f"{module}.log"),
            "uid": uid, "gid": gid, "hide": grader_folders(), "forbidden": forbidden_folders(),
            "present": False, "problem": folder_problem}
    if source is not None and folder_problem is None:
        try:
            text = _read_module(module, source)
        except safe_files.UnsafeFile as exc:
            if exc.kind != "missing":
                spec["problem"] = ("is a symbolic link (links are not followed)" if exc.kind == "symlink"
                                   else safe_files.describe(exc.kind, exc.detail))
        else:
            target = copy / f"{module}.py"
            target.write_bytes(text)
            os.chmod(target, 0o644)
            spec["present"] = True
    _chown(box, uid, gid)
    _chown(scratch, uid, gid)
    return spec


def source_of(spec):
    """The copied source text of a module ('' when it was not taken)."""
    if not spec or not spec.get("present"):
        return ""
    module_file = pathlib.Path(spec["submission"])
    files = list(module_file.glob("*.py"))
    try:
        return files[0].read_text(encoding="utf-8", errors="replace") if files else ""
    except OSError:
        return ""
