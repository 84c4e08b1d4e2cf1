"""Visible tests for loss_scaler: the update rule and one skipped step, the public tests' other
checks, and one test for each clause of the contract they leave open (the tracker's reset on an
overflow, a tracker past the interval, param.grad unscaled in place and by the current scale, NaN
as found_inf, step()'s arguments and its found_inf after an explicit unscale_, update() keeping the
tracker and starting the next iteration), so that a local grade sees every mistake that costs
points. Their inputs are fixed; the hidden suite draws its own."""
import math

import pytest
import torch

from autograder.assignment.checks import references
from autograder.assignment.checks.loss_scaler_checks import (call_text, expect_pair, run_side_by_side,
                                                             gradscaler_rule, shown, stop_mistake, update)
from autograder.assignment.checks.loss_scaler_calls import check_misuse_raises, check_step_arguments, check_unscale
from autograder.authoring import _, describe_raised, equals, expect, value_of

pytestmark = [pytest.mark.module("loss_scaler"), pytest.mark.visibility("visible")]
FILE = "loss_scaler.py"


@pytest.fixture(autouse=True, scope="module")
def built_by_hand(no_delegation):
    """Every loss_scaler test first checks that the module does not delegate."""


@pytest.mark.points(1)
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
        expect(all(equals(got, want) for got, want in zip(result, expected)),
               _("update_scale({scale}, {tracker}, found_inf={found_inf}, growth_factor=2.0, backoff_factor=0.25, "
                 "growth_interval=2) returned {got}, expected {want}.", scale=scale, tracker=tracker,
                 found_inf=found_inf, got=tuple(result), want=expected))
        scale, tracker = result


@pytest.mark.points(1)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: an inf gradient makes step() skip optimizer.step and return None; update() then halves "
                    "the scale."))
def test_skip_on_inf_matches_gradscaler(student):
    """three iterations with an inf gradient in the second: same as GradScaler('cpu')"""
    spec = {"seed": 5, "iterations": 3, "inject": {"1": "inf"},
            "scaler": {"init_scale": 128.0, "growth_interval": 1}}
    # iteration by iteration, the first difference names the method at fault (loss_scaler_checks)
    run_side_by_side(student, spec)


# -- the public tests' other checks (exercises/tests/test_loss_scaler.py), graded here too -----------
def describe_tensor(value):
    """'131072 (torch.float32)' for a one-element tensor, else its repr."""
    if torch.is_tensor(value) and value.numel() == 1:
        return "{:g} ({})".format(float(value), value.dtype)
    return repr(value)


@pytest.mark.points(1)
@pytest.mark.todo(5)
@pytest.mark.hint(_("scale: multiply by the scale held as a 0-dim FP32 tensor, without converting the loss: a 0-dim "
                    "FP16 loss of 2.0 times 65536 is then promoted to FP32 (131072), not FP16 inf, and an FP16 vector "
                    "stays FP16, as with GradScaler."))
def test_scale_keeps_fp16_loss_finite(student):
    """scale() of a 0-dim FP16 loss of 2.0 at scale 65536 gives 131072 in FP32; an FP16 vector stays FP16"""
    spec = {"dtype": "float16", "shape": [], "value": 2.0, "scaler": {"init_scale": 65536.0}}
    got = value_of(student.scenario("scaler_scale_loss", spec), FILE)
    want = references.with_gradscaler("scaler_scale_loss", spec)
    scaled = got.get("scaled")
    expect(torch.is_tensor(scaled) and scaled.dtype == want["scaled"].dtype and torch.equal(scaled, want["scaled"]),
           _("scale() of a 0-dim FP16 loss of 2.0 at scale 65536: got {got}, GradScaler gives 131072.0 "
             "(torch.float32).", got=describe_tensor(scaled)))
    spec = {"dtype": "float16", "shape": [3], "value": 0.5, "scaler": {"init_scale": 1024.0}}
    got = value_of(student.scenario("scaler_scale_loss", spec), FILE)
    want = references.with_gradscaler("scaler_scale_loss", spec)
    scaled = got.get("scaled")
    expect(torch.is_tensor(scaled) and scaled.dtype == want["scaled"].dtype and torch.equal(scaled, want["scaled"]),
           _("scale() of an FP16 loss [0.5, 0.5, 0.5] at scale 1024: got {got}, GradScaler gives [512, 512, 512] in "
             "{dtype}: the 0-dim FP32 scale does not change the dtype of a loss with dimensions.",
             got="{} ({})".format(scaled.tolist(), scaled.dtype) if torch.is_tensor(scaled) else repr(scaled),
             dtype=str(want["scaled"].dtype)))


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
    # the explicit run first: when unscale_ itself is wrong, it says so (TODO 6), and a
    # difference left in the run without it is step()'s own unscale (TODO 7)
    for explicit in (True, False):
        spec = {"seed": 21, "iterations": 2, "explicit_unscale": explicit,
                "scaler": {"init_scale": 8.0, "growth_interval": 1000}}
        run_side_by_side(student, spec)


@pytest.mark.points(1)
@pytest.mark.todo(9)
@pytest.mark.hint(_("state_dict: GradScaler's five keys (scale, growth_factor, backoff_factor, growth_interval, "
                    "_growth_tracker) with the current values, growth_interval and _growth_tracker as ints; "
                    "load_state_dict restores exactly that state."))
def test_state_dict_keys(student):
    """state_dict has GradScaler's five keys and a fresh scaler loading it reports the same state"""
    spec = {"seed": 22, "before": 2, "after": 1, "scaler": {"init_scale": 1024.0, "growth_interval": 3},
            "fresh": {"init_scale": 2.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 50}}
    got = value_of(student.scenario("scaler_state_round_trip", spec), FILE)
    want = references.with_gradscaler("scaler_state_round_trip", spec)
    if got.get("stopped"):  # a call that worked before and raises later: update() left the iteration open
        raise stop_mistake(got["stopped"])
    keys = sorted(want["saved"])
    saved = got.get("saved")
    expect(isinstance(saved, dict) and sorted(saved) == keys,
           _("state_dict() has the keys {got}, GradScaler's has {want}.",
             got=", ".join(sorted(saved)) if isinstance(saved, dict) else repr(saved), want=", ".join(keys)))
    for key in keys:
        expect(isinstance(saved[key], (int, float)) and math.isclose(saved[key], want["saved"][key], rel_tol=1e-6),
               _("state_dict()['{key}'] after two iterations is {got}, GradScaler's is {want}.", key=key,
                 got=repr(saved[key]), want=repr(want["saved"][key])))
    for key in ("growth_interval", "_growth_tracker"):
        expect(isinstance(saved[key], int), _("{what}['{key}'] should be an int like GradScaler's, got {got}.",
                                              what="state_dict()", key=key, got=shown(saved[key])))
    expect(got.get("echo") == saved,
           _("a fresh scaler that loaded this state reports {got} from state_dict(), expected the saved {want}.",
             got=repr(got.get("echo")), want=repr(saved)))


# -- the contract's clauses the public tests leave open, one test each -----------------------------
@pytest.mark.points(1)
@pytest.mark.todo(4)
@pytest.mark.hint(_("update_scale: found_inf multiplies the scale by backoff_factor and resets the growth tracker to 0, "
                    "whatever the tracker was -- also when this step would have grown the scale."))
def test_update_scale_resets_the_tracker_on_overflow(student):
    """update_scale: an inf backs off and resets a growth tracker of 5 (and of 7, one step before growth) to 0"""
    options = dict(growth_factor=2.0, backoff_factor=0.25, growth_interval=8)
    for tracker in (5, 7):
        got = update(student, 1024.0, tracker, True, **options)
        expect_pair(got, (256.0, 0), call_text(1024.0, tracker, True, options))


@pytest.mark.points(1)
@pytest.mark.todo(4)
@pytest.mark.hint(_("update_scale: the scale grows only when tracker + 1 equals growth_interval exactly (a tracker at or "
                    "past it, e.g. one loaded from a state, just counts on), and a grown scale is kept only if it is "
                    "finite as a Python float (math.isfinite)."))
def test_update_scale_past_the_interval_and_near_inf(student):
    """update_scale: a tracker at or past growth_interval counts on without growth; a growth to inf is not kept"""
    options = dict(growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
    for tracker in (3, 5):
        want = gradscaler_rule(64.0, tracker, False, **options)
        expect_pair(update(student, 64.0, tracker, False, **options), want, call_text(64.0, tracker, False, options))
    options = dict(growth_factor=10.0, backoff_factor=0.5, growth_interval=1)
    for scale, want in ((1e308, (1e308, 0)), (1e300, (1e301, 0))):
        got = update(student, scale, 0, False, **options)
        expect(math.isfinite(got[0]), _("{call} grew the scale to {got}.", call=call_text(scale, 0, False, options),
                                        got=shown(got[0])))
        expect_pair(got, want, call_text(scale, 0, False, options))


@pytest.mark.points(1)
@pytest.mark.todo(6)
@pytest.mark.hint(_("unscale_: divide each param.grad in place -- the same tensor object, e.g. grad.mul_(1 / scale): "
                    "`grad = grad * inv` only rebinds a name and leaves param.grad scaled -- in every param group, "
                    "BF16 and FP64 gradients too."))
def test_unscale_in_place(student):
    """unscale_ divides every param.grad in place, in every param group, BF16 and FP64 ones too"""
    for dtype, groups in (("float32", True), ("bfloat16", False), ("float64", False)):
        spec = {"seed": 61, "dtype": dtype, "groups": groups, "scaler": {"init_scale": 512.0}, "unscale_only": True}
        got = value_of(student.scenario("scaler_unscale", spec), FILE)
        want = references.with_gradscaler("scaler_unscale", spec)
        label = _("{dtype} gradients in two param groups", dtype=dtype) if groups \
            else _("{dtype} gradients, all finite", dtype=dtype)
        check_unscale(got, want, spec, label)


@pytest.mark.points(1)
@pytest.mark.todo(6)
@pytest.mark.hint(_("unscale_: found_inf is True when any element of any gradient is inf or NaN: "
                    "torch.isfinite(grad).all() on each (torch.isinf misses NaN)."))
def test_unscale_records_nan(student):
    """a NaN in one param.grad of the second param group makes unscale_ record found_inf: step() skips"""
    spec = {"seed": 62, "dtype": "float32", "groups": True, "scaler": {"init_scale": 256.0}, "poison": "nan",
            "poison_param": 2, "poison_index": 5}
    got = value_of(student.scenario("scaler_unscale", spec), FILE)
    want = references.with_gradscaler("scaler_unscale", spec)
    check_unscale(got, want, spec, _("two param groups, {poison} in the second group", poison="nan"))


@pytest.mark.points(1)
@pytest.mark.todo(6)
@pytest.mark.hint(_("unscale_: divide by the scale as it is now (self's current scale): update() changes it between "
                    "iterations, so an inverse computed once and kept goes stale."))
def test_unscale_after_the_scale_changed(student):
    """unscale_ divides by the current scale after update() grew it (64, then 128, then 256)"""
    spec = {"seed": 63, "iterations": 3, "explicit_unscale": True,
            "scaler": {"init_scale": 64.0, "growth_interval": 1}}
    run_side_by_side(student, spec)


@pytest.mark.points(1)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: after an explicit unscale_ (for clipping), use the found_inf it recorded: skip "
                    "optimizer.step and return None when it found inf or NaN, without unscaling again."))
def test_step_after_explicit_unscale_uses_its_found_inf(student):
    """unscale_() then step(), with an inf in the second of three iterations: step() skips there, like GradScaler"""
    spec = {"seed": 64, "iterations": 3, "explicit_unscale": True, "inject": {"1": "inf"},
            "scaler": {"init_scale": 128.0, "growth_interval": 1}}
    run_side_by_side(student, spec)


@pytest.mark.points(1)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: pass *args and **kwargs on to optimizer.step(*args, **kwargs) and return what it returns; "
                    "return None, without calling it, when the step is skipped."))
def test_step_passes_arguments_and_returns_value(student):
    """step(optimizer, closure, ...) passes its arguments to optimizer.step and returns its value"""
    calls = [{}, {"closure": 2.5}, {"closure": 4.0, "args": [1.5], "kwargs": {"lr_scale": 0.5}},
             {"kwargs": {"lr_scale": 0.25}, "poison": True}]
    spec = {"scale": 16.0, "calls": calls}
    check_step_arguments(student, spec)


@pytest.mark.points(1)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: mark the optimizer as stepped for this iteration -- also when the step is skipped -- so "
                    "that a second step() or a later unscale_() raises RuntimeError until update()."))
def test_second_step_raises(student):
    """a second step(), or unscale_() after step(), raises RuntimeError, after a skipped step too"""
    check_misuse_raises(student, ["double_step", "unscale_after_step", "double_step_after_skip",
                                  "unscale_after_skipped_step"])


@pytest.mark.points(1)
@pytest.mark.todo(8)
@pytest.mark.hint(_("update: call update_scale with the current scale, the stored growth tracker, this iteration's "
                    "found_inf (from unscale_, stepped or not) and the scaler's own factors and interval; store both "
                    "results and forget the iteration's per-optimizer state, so that the next iteration may "
                    "unscale_ and step again."))
def test_update_keeps_the_tracker_and_starts_a_new_iteration(student):
    """update() grows after two clean iterations, backs off after an unscale_() alone, and starts a new iteration"""
    spec = {"seed": 65, "iterations": 5, "no_step": [3], "inject": {"3": "inf"},
            "scaler": {"init_scale": 256.0, "growth_interval": 2, "growth_factor": 3.0, "backoff_factor": 0.25}}
    run_side_by_side(student, spec)
