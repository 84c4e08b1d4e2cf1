"""Where the grader lives on disk, computed once: modules move between folders,
the repository's root does not."""
import pathlib

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent  # autograder/
REPO_ROOT = PACKAGE_DIR.parent
