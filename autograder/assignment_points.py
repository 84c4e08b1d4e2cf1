"""How many points of each module only the hidden suites hold.

The student template ships without ``autograder/hidden/``, so a local grade
cannot count them: this table is what lets it say, per module, how much of the
grade was not run here. It is declarative on purpose (no suite is read at run
time); ``tests/test_assignment_points.py`` collects the real hidden suites and
fails when this table drifts from them.
"""
HIDDEN_POINTS = {
    "amp_update": 23,
    "loss_scaler": 27,
    "amp_training_step": 23,
}


def hidden_points(module):
    """The hidden points of ``module`` (0 for anything that has none, e.g. gpu_lab)."""
    return HIDDEN_POINTS.get(module, 0)
