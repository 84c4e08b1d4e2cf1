"""Visible tests for loss_scaler: the update rule and one skipped step."""
import math

import pytest
import torch

from autograder import scenarios
from autograder.i18n import _
from autograder.judge import describe_raised, expect, expect_relative_error, value_of

pytestmark = [pytest.mark.module("loss_scaler"), pytest.mark.visibility("visible")]
FILE = "loss_scaler.py"
UPDATE_SCALE, SCALE, UNSCALE, STEP, UPDATE, STATE = 4, 5, 6, 7, 8, 9
CALL_TODO = {"scale": SCALE, "unscale_": UNSCALE, "step": STEP, "update": UPDATE, "get_scale": UPDATE,
             "__init__": STATE}


@pytest.fixture(autouse=True)
def built_by_hand(no_delegation):
    """Every loss_scaler test first checks that the module does not delegate."""


@pytest.mark.points(3)
@pytest.mark.todo(4)
@pytest.mark.hint(_("update_scale is the dynamic loss scaling rule: the tracker counts clean steps, and the scale grows "
                    "on the step where tracker + 1 equals growth_interval (the tracker then restarts at 0); an inf "
                    "backs the scale off and resets the tracker to 0."))
def test_update_scale_sequence(student):
    """update_scale: start 4, interval 2 -> (4, 1), (8, 0), then inf -> (2, 0)"""
    options = dict(growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
    scale, tracker = 4.0, 0
    for found_inf, expected in ((False, (4.0, 1)), (False, (8.0, 0)), (True, (2.0, 0))):
        result = value_of(student.call("update_scale", scale, tracker, found_inf, **options), FILE)
        expect(isinstance(result, (tuple, list)) and len(result) == 2,
               _("update_scale should return (scale, growth_tracker), got {got}.", got=repr(result)))
        expect(tuple(result) == expected,
               _("update_scale({scale}, {tracker}, found_inf={found_inf}, growth_factor=2.0, backoff_factor=0.25, "
                 "growth_interval=2) returned {got}, expected {want}.", scale=scale, tracker=tracker,
                 found_inf=found_inf, got=tuple(result), want=expected))
        scale, tracker = result


@pytest.mark.points(3)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: an inf gradient makes step() skip optimizer.step and return None; update() then halves "
                    "the scale."))
def test_skip_on_inf_matches_gradscaler(student):
    """three iterations with an inf gradient in the second: same as GradScaler('cpu')"""
    spec = {"seed": 5, "iterations": 3, "inject": {"1": "inf"},
            "scaler": {"init_scale": 128.0, "growth_interval": 1}}
    got = value_of(student.scenario("scaler_training", spec), FILE)
    want = scenarios.scaler_training(lambda **kw: torch.amp.GradScaler("cpu", **kw), spec)
    stopped = got["stopped"]
    for i, (want_return, want_scale) in enumerate(zip(want["step_returns"], want["scales"])):
        if stopped and stopped["iteration"] <= i:
            break
        before, after, returned = got["scales_before"][i], got["scales"][i], got["step_returns"][i]
        ratio = got["scaled_ratio"][i]
        expect(ratio is None or math.isclose(ratio, before, rel_tol=1e-5),
               _("iteration {k}: scale(loss) is {ratio} times the loss, but get_scale() is {scale}.", k=i + 1,
                 ratio=ratio, scale=before), SCALE)
        called = got["calls"][i] - (got["calls"][i - 1] if i else 0)
        if called != (want_return is not None):
            # update() backing off shows whether unscale_ recorded the inf
            recorded = (after < before) == (want_return is None)
            if not recorded:
                expect(False, _("iteration {k}: GradScaler {want}, your scaler did not, and update() moved the scale "
                                "{before} -> {after}: unscale_ recorded found_inf wrongly.", k=i + 1, before=before,
                                after=after, want=_("skips the step and backs off") if want_return is None
                                else _("steps and keeps the scale")), UNSCALE)
            expect(False, _("iteration {k}: optimizer.step ran {count} time(s) in your step(), GradScaler runs it "
                            "{want} time(s), although update() saw the right found_inf (scale {before} -> {after}).",
                            k=i + 1, count=called, want=int(want_return is not None), before=before, after=after),
                   STEP)
        expect(returned == want_return, _("iteration {k}: step() returned {got}, optimizer.step() returned {want}.",
                                          k=i + 1, got=repr(returned), want=repr(want_return)), STEP)
        expect(isinstance(after, float) and math.isclose(after, want_scale, rel_tol=1e-6),
               _("the scale after update {k}: got {got}, GradScaler has {want}.", k=i + 1, got=repr(after),
                 want=want_scale), UPDATE)
    if stopped:
        # a call that worked before and raises RuntimeError later: update() did not start a new iteration
        stale = stopped["call"] in ("unscale_", "step") and stopped["iteration"] > 0 \
            and "RuntimeError" in (stopped["raised"] or [])[:-1]
        expect(False, _("iteration {k}: {call}() raised {error}.", k=stopped["iteration"] + 1, call=stopped["call"],
                        error=str(describe_raised(stopped["raised"])).rstrip(". ")),
               UPDATE if stale else CALL_TODO.get(stopped["call"], UPDATE))
    expect_relative_error(got["parameters"], want["parameters"], _("the parameters after training"), 1e-5,
                          todo=STEP)
