"""The public tests import the module being written from exercises/ (a student's pytest runs them
from the repository's root, where exercises/ is not on the path)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
