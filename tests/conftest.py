import itertools
import sys

import pytest

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))

from helpers import make_submission  # noqa: E402

_counter = itertools.count()


@pytest.fixture(scope="session")
def grade_dir(tmp_path_factory):
    """grade(overrides, seed=..., omit=...) -> GradeReport, graded in this process."""
    from autograder.engine import grade_submission

    def grade(overrides=None, seed=1234, omit=(), **kwargs):
        folder = tmp_path_factory.mktemp(f"submission{next(_counter)}")
        make_submission(folder, overrides, omit)
        return grade_submission(folder, seed=seed, **kwargs)

    return grade
