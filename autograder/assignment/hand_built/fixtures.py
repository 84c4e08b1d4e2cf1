"""The suites' ``no_delegation`` fixture (a pytest plugin the engine loads for
this assignment, see ``SUITE_PLUGINS`` in the description)."""
import pytest

from autograder.assignment.hand_built.static_checks import find_delegation
from autograder.authoring import _, Mistake


@pytest.fixture(scope="module")
def no_delegation(submission_source):
    """Module 2 earns nothing while it delegates to PyTorch's scaler (checked once per
    suite file: a delegation fails each of its tests with the same feedback)."""
    found = find_delegation(submission_source)
    if found:
        line, what = found
        raise Mistake(_("loss_scaler.py line {line} uses {what}. Module 2 must be built by hand "
                        "(no torch.amp.GradScaler, torch.cuda.amp/torch.cpu.amp scalers or "
                        "torch._amp_* ops), so it earns no points until that is removed.",
                        line=line, what=what))
