import itertools
import sys

import pytest

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))

from support.helpers import make_submission  # noqa: E402

_counter = itertools.count()
# The second assignment's suites are graded by the engine (test_toy_assignment.py), not collected here.
collect_ignore = ["toy_assignment"]


@pytest.fixture(autouse=True)
def _language_restored():
    """A grade in this process sets the feedback's language for the process
    (judging/engine.py): each test leaves it as it found it, so that no test's
    words depend on which test ran before it in the same process."""
    from autograder import i18n

    saved = i18n._current[0]
    yield
    i18n._current[0] = saved


@pytest.fixture(scope="session")
def shared_boxes():
    """One sandbox zygote for every in-process grade of the session, as
    grade-many shares one across a class (a zygote costs a torch import)."""
    from autograder.sandbox.boxes import start_boxes

    boxes = start_boxes()
    yield boxes
    boxes.close()


@pytest.fixture(scope="session")
def grade_dir(tmp_path_factory, shared_boxes):
    """grade(overrides, seed=..., omit=...) -> GradeReport, graded in this process."""
    from autograder.judging.engine import grade_submission

    def grade(overrides=None, seed=1234, omit=(), **kwargs):
        folder = tmp_path_factory.mktemp(f"submission{next(_counter)}")
        make_submission(folder, overrides, omit)
        kwargs.setdefault("boxes", shared_boxes)
        return grade_submission(folder, seed=seed, **kwargs)

    return grade


@pytest.fixture(scope="session")
def toy_boxes():
    """The toy assignment's sandbox zygote (support/toy.py), started with the toy
    active, for the session: boxes for engine behaviour that any assignment shows."""
    from autograder.sandbox.boxes import start_boxes
    from support import toy

    with toy.active():
        boxes = start_boxes()
    yield boxes
    boxes.close()


@pytest.fixture(scope="session")
def toy_grade(tmp_path_factory, toy_boxes):
    """grade(source=toy.SOLUTION, seed=..., **kwargs) -> GradeReport of the toy
    assignment, graded in this process on ``toy_boxes``; the toy is the assignment
    only while each grade runs."""
    from autograder.judging.engine import grade_submission
    from support import toy

    def grade(source=toy.SOLUTION, seed=1234, **kwargs):
        folder = toy.submission(tmp_path_factory.mktemp(f"toy{next(_counter)}"), source)
        kwargs.setdefault("boxes", toy_boxes)
        with toy.active():
            return grade_submission(folder, seed=seed, **kwargs)

    return grade


@pytest.fixture
def own_grading_parent(monkeypatch):
    """The grades this test starts make their run folders in a parent of its own
    (``AUTOGRADER_AREAS``): what is left there is theirs, whatever else grades on
    the machine meanwhile."""
    from autograder.judging import grading_area
    from support.helpers import private_grading_parent

    with private_grading_parent() as parent:
        monkeypatch.setenv(grading_area.RUN_FOLDER_ENV, str(parent))
        yield parent
