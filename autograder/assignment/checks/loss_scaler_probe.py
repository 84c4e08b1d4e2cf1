"""One probe shared by the visible and hidden loss_scaler suites: when the student's scaler
skips where GradScaler does not (or the reverse) in a run without an explicit ``unscale_()``,
is the fault ``unscale_`` (TODO 6) or ``step``'s own unscale (TODO 7)?

The same run is replayed with an explicit ``unscale_()`` before every ``step()``: if it then
skips exactly where GradScaler does, ``unscale_`` records found_inf correctly and ``step`` did
not call it."""


def _steps_per_iteration(calls):
    return [count - (calls[index - 1] if index else 0) for index, count in enumerate(calls)]


def step_skips_its_own_unscale(student, spec, want):
    """True when only step()'s own unscale is wrong (see the module docstring)."""
    if spec.get("explicit_unscale") or spec.get("clip"):
        return False
    outcome = student.scenario("scaler_training", dict(spec, explicit_unscale=True))
    if not outcome.ok or not isinstance(outcome.value, dict) or outcome.value.get("stopped"):
        return False
    calls = outcome.value.get("calls")
    return isinstance(calls, list) and _steps_per_iteration(calls) == _steps_per_iteration(want["calls"])


PROBE = {"seed": 5, "iterations": 3, "inject": {"1": "inf"}, "scaler": {"init_scale": 128.0, "growth_interval": 1}}


def step_lacks_own_unscale(student):
    """The probe on a run of its own (for tests whose scenario is not a plain training run): does
    step() without an explicit unscale_() skip wrongly where an explicit unscale_() fixes it?"""
    from autograder.assignment.checks import references

    want = references.with_gradscaler("scaler_training", PROBE)
    implicit = student.scenario("scaler_training", PROBE)
    if not implicit.ok or not isinstance(implicit.value, dict) or not isinstance(implicit.value.get("calls"), list):
        return False
    if _steps_per_iteration(implicit.value["calls"]) == _steps_per_iteration(want["calls"]):
        return False
    return step_skips_its_own_unscale(student, PROBE, want)
