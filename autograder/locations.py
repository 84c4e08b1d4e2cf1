"""Where the grader lives on disk, computed once: modules move between folders,
the repository's root does not; and where in it an exception was raised."""
import os
import pathlib

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent  # autograder/
REPO_ROOT = PACKAGE_DIR.parent


def grader_frame(exc, roots=(PACKAGE_DIR,)):
    """'autograder/sandbox/wire.py:118': the innermost frame of ``exc``'s traceback
    in a file under one of ``roots`` (the grader's own code), relative to the
    repository's root; '' where no frame is there. Paths are compared as text: a
    traceback's file names are what the process imported, never looked up again."""
    folders = [str(root) + os.sep for root in roots]
    found = ""
    tb = getattr(exc, "__traceback__", None)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if any(filename.startswith(folder) for folder in folders):
            shown = filename[len(str(REPO_ROOT)) + 1:] if filename.startswith(str(REPO_ROOT) + os.sep) \
                else os.path.basename(filename)
            found = f"{shown.replace(os.sep, '/')}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found
