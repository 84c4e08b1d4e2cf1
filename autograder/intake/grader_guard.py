"""The grader's own files, compiled caches included, as they were before any
student code ran.

Workers are confined and cannot write here; where that confinement is missing
(Windows, a kernel without Landlock) student code could edit ``autograder/`` --
a hidden test, or a planted ``.pyc`` that Python would load instead of its
source -- to change how a *later* run grades. The judge imports everything
before student code starts and writes no caches itself
(``sys.dont_write_bytecode``), so any change is a flag (but a cache that holds its
unchanged source's code, which another process importing the grader writes): a single grade reports
:meth:`GraderGuard.changes`; batch grading, where the next student is graded by
the same files, calls :meth:`GraderGuard.restore` between students: files that
changed or went missing come back, files that appeared go.

A file is compared by its status (inode, size, modification and change times):
any write, rename, link or ``utime`` sets its change time, which only the
system clock's owner could wind back. Files changed within
:data:`RECENT_S` of the snapshot are compared by content too, since two writes
within one tick of the kernel's clock can leave the same times. Contents are
read only by a guard that may have to restore them (``keep_contents``).
"""
import contextlib
import os
import pathlib
import time

from autograder import active_assignment, locations
from autograder.intake.integrity import file_status, planted_caches

RECENT_S = 2.0


class GraderGuard:
    def __init__(self, package_dir=None, keep_contents=True):
        self.package_dir = pathlib.Path(package_dir or locations.PACKAGE_DIR)
        self.keep_contents = keep_contents
        self._take_snapshot()
        self.planted = planted_caches(self.package_dir, self.snapshot)  # before this run started

    def _take_snapshot(self):
        self._take_statuses()
        wanted = set(self.snapshot) if self.keep_contents else self.by_content
        self.contents = self._contents(name for name in wanted if self.snapshot[name][0] == "file")

    def _take_statuses(self):
        recent = time.time_ns() - int(RECENT_S * 1e9)
        self.snapshot = self._statuses()
        # compared by content too: files changed just before the snapshot (same clock tick)
        self.by_content = {name for name, status in self.snapshot.items()
                           if status[0] == "file" and status[4] >= recent}

    def _statuses(self):
        """``{name: status}`` of every file and link under the folder."""
        statuses = {}
        pending = [("", str(self.package_dir))]
        while pending:
            prefix, folder = pending.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                name = prefix + entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append((name + "/", entry.path))
                    else:
                        statuses[name] = file_status(entry.path)
                except OSError:
                    continue
        return statuses

    def _contents(self, names):
        contents = {}
        for name in names:
            with contextlib.suppress(OSError):
                contents[name] = (self.package_dir / name).read_bytes()
        return contents

    def _changed(self):
        now = self._statuses()
        changed = {name for name in set(now) | set(self.snapshot) if now.get(name) != self.snapshot.get(name)}
        same_status = [name for name in self.by_content if name not in changed and name in now]
        for name, data in self._contents(same_status).items():
            if data != self.contents.get(name):
                changed.add(name)
        return now, sorted(changed - self._harmless_caches(changed, now))

    def _harmless_caches(self, changed, now):
        """Of ``changed``, the caches no run can be misled by: one gone (Python compiles its
        source again), or one written since that holds its unchanged source's code (another
        process of the course's importing the grader: a TA's second command, a neighbouring
        test), so that no report cries wolf over them. A source that changed is a change
        of its own; a cache of any other code is planted and stays a change."""
        caches = {name for name in changed if self._cache(name)}
        gone = {name for name in caches if name not in now}
        written = {name: now[name] for name in caches - gone if name.endswith(".pyc")}
        if not written:
            return gone
        return gone | (set(written) - set(planted_caches(self.package_dir, written)))

    @staticmethod
    def _cache(name):
        return "__pycache__" in name.split("/") or name.endswith((".pyc", ".pyo"))

    def changes(self):
        """Names changed, added or removed since the snapshot, caches included; touches nothing."""
        return self._changed()[1]

    def restore(self):
        """Undo every change since the snapshot; returns the changed names, caches included."""
        if not self.keep_contents:
            raise RuntimeError("this guard keeps no contents to restore")
        now, changed = self._changed()
        for name in changed:
            path = self.package_dir / name
            if name in now:
                with contextlib.suppress(OSError):
                    path.unlink()
            if name in self.snapshot and not self._cache(name):
                self._write(path, self.snapshot[name], self.contents.get(name, b""))
        if changed:  # what was put back has new inodes and times: that is the snapshot now
            self._take_statuses()
            self.contents = {name: data for name, data in self.contents.items() if name in self.snapshot}
        return changed

    @staticmethod
    def _write(path, status, data):
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            if status[0] == "link":
                os.symlink(status[1], path)
            else:
                path.write_bytes(data)


class GraderGuards:
    """A :class:`GraderGuard` over the grader's package, one over the assignment's folder when
    it lives outside it (``$AUTOGRADER_ASSIGNMENT``), and one over each folder holding a file
    the assignment's grader reads from outside the package (its ``grader_files``: that code
    decides grades as much as the package does); the same three calls."""

    def __init__(self, package_dir=None, keep_contents=True):
        package = pathlib.Path(package_dir or locations.PACKAGE_DIR).resolve()
        folders = [package]
        if package == locations.PACKAGE_DIR:  # the grader's own, wherever its parts live
            assignment = active_assignment.current()
            outside = [assignment.folder] + [(locations.REPO_ROOT / name).parent.resolve()
                                             for name in assignment.grader_files]
            for folder in outside:
                if folder not in folders and package not in folder.parents:
                    folders.append(folder)
        self.guards = [GraderGuard(folder, keep_contents) for folder in folders]
        self.planted = [name for guard in self.guards for name in self._named(guard, guard.planted)]

    def _named(self, guard, names):
        if guard is self.guards[0]:
            return list(names)
        return [f"{guard.package_dir.name}/{name}" for name in names]

    def changes(self):
        return [name for guard in self.guards for name in self._named(guard, guard.changes())]

    def restore(self):
        return [name for guard in self.guards for name in self._named(guard, guard.restore())]
