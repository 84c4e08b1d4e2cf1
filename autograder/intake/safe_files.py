"""Reading files a student controls: never through a symbolic link, never a
device or a FIFO, never more than a bound.

Everything under a student's repository (their modules, lab records, the files
the tamper check hashes) is opened here. ``open`` with ``O_NOFOLLOW`` refuses a
link in the last component, ``O_NONBLOCK`` keeps a FIFO from blocking the open,
and ``fstat`` on the open descriptor (not the path: the path may change in
between) decides whether it is a regular file. Folders are walked with
``dir_fd`` from one opened directory, so a link in the middle of a path is
refused too.
"""
import errno
import os
import stat

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
DIR_FD_SUPPORTED = os.open in getattr(os, "supports_dir_fd", set())


class UnsafeFile(OSError):
    """A path that is not a plain, bounded regular file. ``kind`` says why:
    ``missing``, ``symlink``, ``not_regular``, ``too_large`` or ``unreadable``."""

    def __init__(self, path, kind, detail=""):
        super().__init__(f"{path}: {describe(kind, detail)}")
        self.path = str(path)
        self.kind = kind
        self.detail = detail


def describe(kind, detail=""):
    return {
        "missing": "no such file",
        "symlink": "is a symbolic link (links are not followed)",
        "not_regular": "is not a regular file",
        "too_large": f"is larger than {detail} bytes",
        "unreadable": f"cannot be read ({detail})" if detail else "cannot be read",
    }.get(kind, kind)


def _classify_open_error(exc, path, dir_fd=None):
    if exc.errno == errno.ENOENT:
        return UnsafeFile(path, "missing")
    if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW on a link
        return UnsafeFile(path, "symlink")
    try:  # ENXIO (a socket), EACCES...: say 'link' when it is one
        info = os.lstat(path, dir_fd=dir_fd) if dir_fd is not None else os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return UnsafeFile(path, "symlink")
        if not stat.S_ISREG(info.st_mode):
            return UnsafeFile(path, "not_regular")
    except OSError:
        pass
    return UnsafeFile(path, "unreadable", exc.strerror or str(exc))


def open_directory(path):
    """A file descriptor for the folder ``path`` itself, refusing a link there."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise UnsafeFile(path, "missing") from None
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeFile(path, "symlink")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFile(path, "not_regular", "not a folder")
    return os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)


def read_regular(path, max_bytes, dir_fd=None):
    """The bytes of ``path`` (relative to ``dir_fd`` when given): a regular
    file, not a link, at most ``max_bytes``. Raises :class:`UnsafeFile`."""
    flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _BINARY
    try:
        if dir_fd is not None and DIR_FD_SUPPORTED:
            fd = os.open(path, flags, dir_fd=dir_fd)
        else:
            if dir_fd is not None:
                raise UnsafeFile(path, "unreadable", "dir_fd not supported here")
            if os.path.islink(path):  # platforms without O_NOFOLLOW
                raise UnsafeFile(path, "symlink")
            fd = os.open(path, flags)
    except UnsafeFile:
        raise
    except OSError as exc:
        raise _classify_open_error(exc, path, dir_fd if DIR_FD_SUPPORTED else None) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(path, "not_regular")
        if info.st_size > max_bytes:
            raise UnsafeFile(path, "too_large", str(max_bytes))
        chunks, total = [], 0
        while True:  # the size may grow while we read: bound the read, not the stat
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise UnsafeFile(path, "too_large", str(max_bytes))
        return b"".join(chunks)
    except UnsafeFile:
        raise
    except OSError as exc:
        raise UnsafeFile(path, "unreadable", exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def read_text(path, max_bytes, dir_fd=None, errors="strict"):
    return read_regular(path, max_bytes, dir_fd=dir_fd).decode("utf-8", errors)


def read_relative(root, relative, max_bytes):
    """Read ``root/relative`` without following a link in any component below
    ``root`` (``relative`` uses ``/``). Raises :class:`UnsafeFile`."""
    parts = [part for part in str(relative).split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        raise UnsafeFile(relative, "unreadable", "not a plain relative path")
    shown = os.path.join(str(root), *parts)
    if not DIR_FD_SUPPORTED:
        current = str(root)
        for part in parts:
            current = os.path.join(current, part)
            if os.path.islink(current):
                raise UnsafeFile(shown, "symlink")
        return read_regular(shown, max_bytes)
    fd = open_directory(root)
    try:
        for part in parts[:-1]:
            try:
                next_fd = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError as exc:
                error = _classify_open_error(exc, part, fd)
                raise UnsafeFile(shown, error.kind, error.detail) from None
            os.close(fd)
            fd = next_fd
        try:
            return read_regular(parts[-1], max_bytes, dir_fd=fd)
        except UnsafeFile as exc:
            raise UnsafeFile(shown, exc.kind, exc.detail) from None
    finally:
        os.close(fd)


def is_link(path):
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False
