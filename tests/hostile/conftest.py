import pytest

from support.hostile import require_confinement


@pytest.fixture(scope="module")
def confinement_here(shared_boxes):
    """A test file that demands full confinement asks for this once
    (``pytest.mark.usefixtures("confinement_here")``): see support.hostile.require_confinement."""
    return require_confinement(shared_boxes)
