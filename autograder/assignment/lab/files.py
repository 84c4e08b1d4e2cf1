"""Finding and reading lab records in a student's repository, which is hostile input.

A record is read through :mod:`autograder.intake.safe_files`: never through a symbolic link (in the file
name or, below the repository root, in any folder on the way), only a regular file (a FIFO or a
device is refused without blocking), at most :data:`MAX_RECORD_BYTES`. Its text is parsed as
strict JSON: no NaN / Infinity, no number overflowing to infinity, no duplicate keys.

What a student reads (a refusal, the reason JSON is not strict) is an :mod:`autograder.i18n`
message, rendered when shown.
"""
from __future__ import annotations

import fnmatch
import json
import math
import os
import stat
from pathlib import Path

from autograder.authoring import safe_files, _
from autograder.assignment.lab.layout import RECORD_GLOB, RESULTS_RELATIVE_DIR

# The lab writes about 5 KB (20 repeats); a thousand repeats stay far below this. The bound only
# keeps a hostile file from filling the grader's memory.
MAX_RECORD_BYTES = 1 << 20

_DIR_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))


class StrictJSONError(ValueError):
    """Valid JSON that the lab never writes. ``message`` says why (an i18n message);
    ``str()`` of the error is its English text."""

    def __init__(self, message):
        super().__init__(message.render("en"))
        self.message = message


def _reject_constant(name: str):
    raise StrictJSONError(_("non-standard JSON constant {name} (NaN/Infinity are not allowed; "
                            "write null for a non-finite value)", name=name))


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(_("number {number} overflows to infinity", number=text[:40]))
    return value


def _no_duplicate_keys(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise StrictJSONError(_("duplicate key {key} in one object", key=repr(key[:40])))
        seen[key] = value
    return seen


def parse_strict_json(text: str):
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                      object_pairs_hook=_no_duplicate_keys)


def read_record_bytes(path, root=None) -> bytes:
    """The bytes of one record. With ``root`` (a folder ``path`` lies in), no folder between them
    may be a link either. Raises :class:`autograder.intake.safe_files.UnsafeFile`."""
    path = Path(path)
    if root is not None:
        relative = path.relative_to(root).as_posix()
        return safe_files.read_relative(root, relative, MAX_RECORD_BYTES)
    return safe_files.read_regular(path, MAX_RECORD_BYTES)


def refusal(path, error: safe_files.UnsafeFile):
    """What a student or a TA reads when a record file is refused before it is parsed (a
    message)."""
    if error.kind == "symlink":
        return _("refused {path}: it is a symbolic link, and lab records are never read through a "
                 "link; commit the record file itself", path=path)
    if error.kind == "not_regular":
        return _("refused {path}: it is not a regular file (a folder, FIFO, socket or device)",
                 path=path)
    if error.kind == "too_large":
        return _("refused {path}: it is larger than {limit} bytes; a lab record is a few kilobytes",
                 path=path, limit=MAX_RECORD_BYTES)
    if error.kind == "missing":
        return _("cannot read {path}: no such file", path=path)
    # The operating system's own words (e.g. "Permission denied") when it gave any.
    detail = (str(error.detail)[:200] if error.kind == "unreadable" and error.detail
              else safe_files.describe(error.kind, error.detail))
    return _("cannot read {path}: {detail}", path=path, detail=detail)


def find_records(root) -> list[Path]:
    """Lab records in a repository: the results folder first, then the repository root.

    Lists every entry named like a record that is not a folder, including a link, FIFO or other
    non-regular file, so that reading it reports the refusal instead of silently dropping it. A
    folder on the way that is a link is not entered.
    """
    root = Path(root)
    found = []
    for relative in (RESULTS_RELATIVE_DIR, Path(".")):
        names = _record_names(root, relative.parts)
        folder = root.joinpath(relative) if relative.parts else root
        found += [folder / name for name in sorted(names)]
    return found


def _record_names(root: Path, parts) -> list[str]:
    if not safe_files.DIR_FD_SUPPORTED:
        return _record_names_without_dir_fd(root, parts)
    try:
        fd = safe_files.open_directory(root)
    except OSError:
        return []
    try:
        for part in parts:
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:  # missing, a link (O_NOFOLLOW) or not a folder
                return []
            os.close(fd)
            fd = next_fd
        return _record_names_in(fd)
    except OSError:
        return []
    finally:
        os.close(fd)


def _record_names_without_dir_fd(root: Path, parts) -> list[str]:
    folder = root
    for part in ("",) + tuple(parts):
        folder = folder / part if part else folder
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):  # lstat: a link is not a folder
                return []
        except OSError:
            return []
    try:
        return _record_names_in(folder)
    except OSError:
        return []


def _record_names_in(folder):
    """Names in ``folder`` (a path or an open descriptor) that look like records
    and are not folders; links are listed, to be refused with a reason later."""
    with os.scandir(folder) as entries:
        return [entry.name for entry in entries
                if fnmatch.fnmatchcase(entry.name, RECORD_GLOB) and not entry.is_dir(follow_symlinks=False)]
