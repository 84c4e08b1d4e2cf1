"""Visible tests for loss_scaler: the update rule and one skipped step."""
import math

import pytest
import torch

from autograder.assignment.checks import references
from autograder.authoring import _, describe_raised, expect, expect_relative_error, value_of
from autograder.assignment.checks.loss_scaler_probe import step_skips_its_own_unscale

pytestmark = [pytest.mark.module("loss_scaler"), pytest.mark.visibility("visible")]
FILE = "loss_scaler.py"
UPDATE_SCALE, SCALE, UNSCALE, STEP, UPDATE, STATE = 4, 5, 6, 7, 8, 9
CALL_TODO = {"scale": SCALE, "unscale_": UNSCALE, "step": STEP, "update": UPDATE, "get_scale": UPDATE,
             "__init__": STATE}


@pytest.fixture(autouse=True, scope="module")
def built_by_hand(no_delegation):
    """Every loss_scaler test first checks that the module does not delegate."""


@pytest.mark.points(2)
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


@pytest.mark.points(2)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: an inf gradient makes step() skip optimizer.step and return None; update() then halves "
                    "the scale."))
def test_skip_on_inf_matches_gradscaler(student):
    """three iterations with an inf gradient in the second: same as GradScaler('cpu')"""
    spec = {"seed": 5, "iterations": 3, "inject": {"1": "inf"},
            "scaler": {"init_scale": 128.0, "growth_interval": 1}}
    got = value_of(student.scenario("scaler_training", spec), FILE)
    want = references.with_gradscaler("scaler_training", spec)
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
            if not recorded and step_skips_its_own_unscale(student, spec, want):
                expect(False, _("iteration {k}: GradScaler {want}, your scaler did not; with an explicit unscale_() "
                                "before step() your scaler gets it right, so step() did not unscale by itself: "
                                "step() must call unscale_ when it was not called in this iteration.", k=i + 1,
                                want=_("skips the step and backs off") if want_return is None
                                else _("steps and keeps the scale")), STEP)
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


# -- the public tests' other checks (exercises/tests/test_loss_scaler.py), graded here too -----------
def describe_tensor(value):
    """'131072 (torch.float32)' for a one-element tensor, else its repr."""
    if torch.is_tensor(value) and value.numel() == 1:
        return "{:g} ({})".format(float(value), value.dtype)
    return repr(value)


@pytest.mark.points(1)
@pytest.mark.todo(5)
@pytest.mark.hint(_("scale: multiply by the scale held as a 0-dim FP32 tensor: a 0-dim FP16 loss of 2.0 times "
                    "65536 is then promoted to FP32 (131072), not FP16 inf."))
def test_scale_keeps_fp16_loss_finite(student):
    """scale() of a 0-dim FP16 loss of 2.0 at scale 65536 gives 131072 in FP32"""
    spec = {"dtype": "float16", "shape": [], "value": 2.0, "scaler": {"init_scale": 65536.0}}
    got = value_of(student.scenario("scaler_scale_loss", spec), FILE)
    want = references.with_gradscaler("scaler_scale_loss", spec)
    scaled = got.get("scaled")
    expect(torch.is_tensor(scaled) and scaled.dtype == want["scaled"].dtype and torch.equal(scaled, want["scaled"]),
           _("scale() of a 0-dim FP16 loss of 2.0 at scale 65536: got {got}, GradScaler gives 131072.0 "
             "(torch.float32).", got=describe_tensor(scaled)))


@pytest.mark.points(1)
@pytest.mark.todo(6)
@pytest.mark.hint(_("unscale_: a second unscale_ in the same iteration raises RuntimeError, as GradScaler does."))
def test_second_unscale_raises(student):
    """a second unscale_ in one iteration raises RuntimeError"""
    got = value_of(student.scenario("scaler_misuse", {"cases": ["double_unscale"]}), FILE)["double_unscale"]
    expect(got.get("raised") and "RuntimeError" in got["raised"],
           _("the second unscale_() in one iteration: expected RuntimeError, got {raised}.",
             raised=describe_raised(got.get("raised"))))


@pytest.mark.points(1)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: unscale only when unscale_ was not called in this iteration; after an explicit unscale_ "
                    "step() must not divide by the scale again."))
def test_one_unscale_per_iteration(student):
    """step() after an explicit unscale_ unscales nothing more; without it, step() unscales once"""
    for explicit in (True, False):
        spec = {"seed": 21, "iterations": 2, "explicit_unscale": explicit,
                "scaler": {"init_scale": 8.0, "growth_interval": 1000}}
        got = value_of(student.scenario("scaler_training", spec), FILE)
        want = references.with_gradscaler("scaler_training", spec)
        case = _("unscale_() then step()") if explicit else _("step() alone")
        expect_relative_error(got["parameters"], want["parameters"],
                              _("{case}: the parameters after two iterations", case=case), 1e-5, todo=STEP)


@pytest.mark.points(1)
@pytest.mark.todo(9)
@pytest.mark.hint(_("state_dict: GradScaler's five keys (scale, growth_factor, backoff_factor, growth_interval, "
                    "_growth_tracker); load_state_dict restores exactly that state."))
def test_state_dict_keys(student):
    """state_dict has GradScaler's five keys and a fresh scaler loading it reports the same state"""
    spec = {"seed": 22, "before": 2, "after": 1, "scaler": {"init_scale": 1024.0, "growth_interval": 3},
            "fresh": {"init_scale": 2.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 50}}
    got = value_of(student.scenario("scaler_state_round_trip", spec), FILE)
    want = references.with_gradscaler("scaler_state_round_trip", spec)
    stopped = got.get("stopped")
    expect(not stopped, _("{call}() raised {error}.", call=(stopped or {}).get("call"),
                          error=str(describe_raised((stopped or {}).get("raised"))).rstrip(". ")),
           CALL_TODO.get((stopped or {}).get("call"), STATE))
    keys = sorted(want["saved"])
    saved = got.get("saved")
    expect(isinstance(saved, dict) and sorted(saved) == keys,
           _("state_dict() has the keys {got}, GradScaler's has {want}.",
             got=", ".join(sorted(saved)) if isinstance(saved, dict) else repr(saved), want=", ".join(keys)))
    for key in keys:
        expect(isinstance(saved[key], (int, float)) and math.isclose(saved[key], want["saved"][key], rel_tol=1e-6),
               _("state_dict()['{key}'] after two iterations is {got}, GradScaler's is {want}.", key=key,
                 got=repr(saved[key]), want=repr(want["saved"][key])))
    expect(got.get("echo") == saved,
           _("a fresh scaler that loaded this state reports {got} from state_dict(), expected the saved {want}.",
             got=repr(got.get("echo")), want=repr(saved)))
