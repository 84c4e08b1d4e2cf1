"""Where a grade's working copies go (its modules' folders, a box's scratch
where no tmpfs can be mounted).

On a memory file system where there is one: a class makes and removes
thousands of small files and folders, and on ext4 each new one costs a search
of the inode tables.

A process killed outright cannot remove its working copies, and in memory they
must not pile up. So whoever can outlive a grading process gives it a folder
of its own and removes that folder afterwards:

* a command-line process (``grade``, ``watch``, ``grade-many``) makes one for
  every grade its judge process will run (:func:`run_folder`), names it in that
  process's environment (:data:`RUN_FOLDER_ENV`) and removes it once the judge
  is gone (a judge killed with SIGKILL);
* a class's judge does the same for its grading processes
  (:func:`areas_of_this_run`), which inherit the choice when they are forked
  (a grading process killed past ``--timeout``).

Dependency-free on purpose: the command-line process never imports the judge.
"""
import contextlib
import os
import shutil
import sys
import tempfile
import time

RUN_FOLDER_ENV = "AUTOGRADER_AREAS"
_chosen = None  # this process's run folder (areas_of_this_run)


def system_parent():
    """/dev/shm where it is usable, else None (the system's temporary folder)."""
    shm = "/dev/shm"
    if sys.platform.startswith("linux") and os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return None


def area_parent():
    """The folder a grade's area is made in: this process's run folder, else the
    one the process that started it named, else :func:`system_parent`."""
    if _chosen is not None:
        return _chosen
    folder = os.environ.get(RUN_FOLDER_ENV)
    if folder and os.path.isabs(folder) and os.path.isdir(folder):
        return folder
    return system_parent()


def run_folder():
    """A folder for the areas of every grade a process will run, as a
    :class:`tempfile.TemporaryDirectory` (clean it up once that process has
    ended), inside :func:`area_parent`. Traversable by all (0711), like each
    area inside it, so a box's own uid reaches its folder; listable by its
    owner only."""
    folder = _RunFolder(prefix="autograder-areas-", dir=area_parent(), ignore_cleanup_errors=True)
    os.chmod(folder.name, 0o711)
    return folder


class _RunFolder(tempfile.TemporaryDirectory):
    """Removed again while anything is left: a judge killed outright leaves its
    zygote and boxes to die on their own a moment later, and meanwhile they may
    still add files to the areas the first removal was emptying."""

    RETRY_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)

    def cleanup(self):
        super().cleanup()
        for delay in self.RETRY_S:
            if not os.path.lexists(self.name):
                return
            time.sleep(delay)
            shutil.rmtree(self.name, ignore_errors=True)


def judge_environment(env, folder):
    """``env`` with the run's folder (its path) named for the judge process."""
    return dict(env, **{RUN_FOLDER_ENV: str(folder)})


@contextlib.contextmanager
def areas_of_this_run():
    """(A class's judge) Every grade's area in one run folder while this lasts,
    removed at the end: the grading processes it forks meanwhile inherit it."""
    global _chosen
    saved = _chosen
    with run_folder() as folder:
        _chosen = folder
        try:
            yield folder
        finally:
            _chosen = saved
