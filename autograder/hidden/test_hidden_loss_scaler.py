"""Hidden tests for loss_scaler (TODO 4-9). Trajectories are compared side by side
with the real torch.amp.GradScaler('cpu') run here, in the judge."""
import math
import random

import pytest
import torch

from autograder import scenarios
from autograder.judge import (describe_raised, raised_is, expect, expect_float_close, expect_relative_error, expect_same_tensors,
                              raised_type, value_of)

pytestmark = [pytest.mark.module("loss_scaler"), pytest.mark.visibility("hidden")]
FILE = "loss_scaler.py"


@pytest.fixture(autouse=True)
def built_by_hand(no_delegation):
    """Every loss_scaler test first checks that the module does not delegate."""


def gradscaler(**options):
    return torch.amp.GradScaler("cpu", **options)


def update(student, *args, **kwargs):
    result = value_of(student.call("update_scale", *args, **kwargs), FILE)
    expect(isinstance(result, (tuple, list)) and len(result) == 2,
           f"update_scale should return a (scale, growth_tracker) pair, got {type(result).__name__}.")
    scale, tracker = result
    expect(isinstance(scale, (int, float)) and not isinstance(scale, bool),
           "the scale returned by update_scale should be a Python float.")
    expect(isinstance(tracker, int) and not isinstance(tracker, bool),
           "the growth tracker returned by update_scale should be an int.")
    return scale, tracker


def compare_runs(got, want, check_tracker=True):
    expect(isinstance(got, dict), "the scenario did not produce results.")
    expect(len(got["scales"]) == len(want["scales"]), "the number of updates differs.")
    for index, (a, e) in enumerate(zip(got["scales"], want["scales"])):
        expect(math.isclose(a, e, rel_tol=1e-5),
               f"the scale after update {index + 1} differs from GradScaler's.")
    expect([r is None for r in got["step_returns"]] == [r is None for r in want["step_returns"]],
           "step() skipped different iterations than GradScaler (it must return None exactly when "
           "found_inf).")
    expect(got["step_returns"] == want["step_returns"],
           "when it steps, step() must return optimizer.step()'s own return value.")
    expect(got["step_calls"] == want["step_calls"], "optimizer.step ran a different number of times.")
    expect_relative_error(got["parameters"], want["parameters"], "the parameters", 1e-5)
    for index, (a, e) in enumerate(zip(got["optimizer_state"], want["optimizer_state"])):
        expect(isinstance(a, dict) and sorted(a) == sorted(e), "the optimizer state has different entries.")
        for key in e:
            if torch.is_tensor(e[key]):
                expect_relative_error([a[key]], [e[key]], f"optimizer state '{key}'", 1e-5)
    if check_tracker:
        expect(got["growth_tracker"] == want["growth_tracker"],
               "the growth tracker (state_dict()['_growth_tracker']) differs from GradScaler's.")


# -- TODO 4: update_scale ---------------------------------------------------------------------
@pytest.mark.points(3)
@pytest.mark.hint("TODO 4 (update_scale): the tracker counts clean iterations; the scale grows exactly when "
                  "tracker + 1 == growth_interval, and the tracker then restarts at 0.")
def test_update_scale_growth_interval(student, seed):
    """update_scale grows the scale exactly every growth_interval clean iterations"""
    rng = random.Random(seed)
    interval, growth = rng.randint(3, 8), 4.0
    scale, tracker = float(2 ** rng.randint(4, 16)), 0
    want_scale, want_tracker = scale, 0
    for step in range(2 * interval + 1):
        scale, tracker = update(student, scale, tracker, False, growth_factor=growth,
                                backoff_factor=0.5, growth_interval=interval)
        want_tracker += 1
        if want_tracker == interval:
            want_scale, want_tracker = want_scale * growth, 0
        expect(tracker == want_tracker and math.isclose(scale, want_scale, rel_tol=1e-6),
               f"after {step + 1} clean iterations with growth_interval={interval} the (scale, tracker) "
               f"pair is wrong (grows too early, too late, or the tracker is not reset).")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 4 (update_scale): found_inf multiplies the scale by backoff_factor and resets the "
                  "tracker to 0.")
def test_update_scale_backoff_resets_tracker(student, seed):
    """update_scale backs off and resets the growth tracker on found_inf"""
    rng = random.Random(seed)
    scale, tracker, backoff = rng.uniform(10.0, 1e5), rng.randint(1, 50), rng.choice([0.5, 0.25, 0.3])
    new_scale, new_tracker = update(student, scale, tracker, True, growth_factor=2.0,
                                    backoff_factor=backoff, growth_interval=100)
    expect(math.isclose(new_scale, scale * backoff, rel_tol=1e-6), "found_inf should multiply the scale "
                                                                   "by backoff_factor.")
    expect(new_tracker == 0, "found_inf should reset the growth tracker to 0.")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 4 (update_scale): keep the grown scale only if it is finite; reset the tracker anyway.")
def test_update_scale_never_grows_to_inf(student):
    """update_scale refuses to grow 1e308 by 10 (inf) but still resets the tracker"""
    scale, tracker = update(student, 1e308, 0, False, growth_factor=10.0, backoff_factor=0.5,
                            growth_interval=1)
    expect(math.isfinite(scale), "the scale grew to inf.")
    expect(scale == 1e308 and tracker == 0, "when growth would overflow, the scale stays and the tracker "
                                            "is reset to 0.")


@pytest.mark.points(2)
@pytest.mark.hint("update_scale: validate the arguments (scale finite and > 0, growth_factor > 1, "
                  "0 < backoff_factor < 1, growth_interval a positive int, growth_tracker >= 0).")
def test_update_scale_rejects_invalid_arguments(student):
    """update_scale raises ValueError for each invalid argument and accepts valid edge values"""
    good = dict(scale=1024.0, growth_tracker=0, found_inf=False, growth_factor=2.0, backoff_factor=0.5,
                growth_interval=10)
    edge = update(student, **dict(good, scale=1e-30, growth_factor=1.0001, backoff_factor=0.999,
                                  growth_interval=1))
    expect(math.isclose(edge[0], 1e-30 * 1.0001, rel_tol=1e-6) and edge[1] == 0,
           "valid edge values (tiny scale, growth_factor just above 1, growth_interval 1) were not handled.")
    bad_values = [("scale", math.inf), ("scale", math.nan), ("scale", 0.0), ("scale", -8.0),
                  ("growth_factor", 1.0), ("growth_factor", 0.5), ("backoff_factor", 0.0),
                  ("backoff_factor", 1.0), ("backoff_factor", 1.5), ("growth_interval", 0),
                  ("growth_interval", -3), ("growth_interval", 2.5), ("growth_tracker", -1)]
    for name, value in bad_values:
        arguments = dict(good, **{name: value})
        raised = raised_type(student.call("update_scale", **arguments), FILE)
        expect(raised == "ValueError", f"update_scale with {name}={value!r} should raise ValueError, got "
                                       f"{raised or 'no exception'}.")


# -- TODO 5: scale ------------------------------------------------------------------------------
@pytest.mark.points(2)
@pytest.mark.hint("TODO 5 (scale): multiply by the scale as a 0-dim FP32 tensor; a Python float keeps a "
                  "0-dim FP16 loss in FP16, where 2 * 65536 overflows.")
def test_scale_promotes_like_gradscaler(student, seed):
    """scale(loss) gives GradScaler's value and dtype for FP16 and FP32 losses"""
    rng = random.Random(seed)
    cases = [{"dtype": "float16", "shape": [], "value": rng.uniform(1.5, 3.0),
              "scaler": {"init_scale": 65536.0}},
             {"dtype": "float32", "shape": [3], "value": rng.uniform(0.1, 5.0),
              "scaler": {"init_scale": float(2 ** rng.randint(5, 15))}}]
    for spec in cases:
        got = value_of(student.scenario("scaler_scale_loss", spec), FILE)["scaled"]
        want = scenarios.scaler_scale_loss(gradscaler, spec)["scaled"]
        expect(torch.is_tensor(got), "scale() should return a tensor.")
        expect(got.dtype == want.dtype, f"scale() of a {spec['dtype']} loss of shape {spec['shape']} should "
                                        f"have dtype {want.dtype}, got {got.dtype}.")
        expect_relative_error([got], [want], "the scaled loss", 1e-6)


# -- TODO 6-7: unscale_ and step -------------------------------------------------------------------
@pytest.mark.points(3)
@pytest.mark.hint("TODO 6 (unscale_): multiply every param.grad in place (same tensor object), skip None "
                  "grads, handle non-contiguous grads, and record found_inf for any NaN/inf element.")
def test_unscale_in_place_and_found_inf(student, seed):
    """unscale_ works in place on every grad and detects NaN/inf anywhere, like GradScaler"""
    rng = random.Random(seed)
    # parameter 2's grad is a transposed (non-contiguous) view
    for poison, dtype, param in ((None, "float32", 0), ("nan", "float32", 2), ("inf", "bfloat16", 1),
                                 ("-inf", "float64", 0), (None, "float64", 0)):
        spec = {"seed": rng.randrange(10**6), "dtype": dtype,
                "scaler": {"init_scale": float(2 ** rng.randint(2, 14))},
                "poison": poison, "poison_param": param, "poison_index": rng.randrange(100)}
        got = value_of(student.scenario("scaler_unscale", spec), FILE)
        want = scenarios.scaler_unscale(gradscaler, spec)
        expect(got["same_objects"] is True, "unscale_ must modify param.grad in place, not replace it.")
        label = f"({spec['dtype']} grads, {poison or 'no'} poison)"
        expect(got["step_calls"] == want["step_calls"],
               f"after unscale_ {label}, step() {'skipped' if want['step_calls'] else 'ran'} in GradScaler "
               f"but not in yours: found_inf is recorded wrongly.")
        rtol = 1e-6 if spec["dtype"] != "bfloat16" else 8e-3
        expect_same_tensors(got["grads"], want["grads"], f"the unscaled grads {label}", rtol, 0.0)


@pytest.mark.points(2)
@pytest.mark.hint("TODO 6-7: unscale_ once per optimizer per iteration (a second call or a call after "
                  "step raises RuntimeError); a second step() before update() raises RuntimeError.")
def test_unscale_and_step_once_per_iteration(student):
    """a second unscale_, unscale_ after step and a second step raise RuntimeError"""
    cases = ["double_unscale", "unscale_after_step", "double_step"]
    got = value_of(student.scenario("scaler_misuse", {"cases": cases}), FILE)
    for case in cases:
        raised = got[case]["raised"]
        expect(raised_is(raised, "RuntimeError"),
               f"{case.replace('_', ' ')}: expected RuntimeError, got {describe_raised(raised)}.")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 8 (update): update() with no unscale_/step since the last update has no found_inf "
                  "to use and must raise.")
def test_update_needs_a_step(student):
    """update() before any unscale_/step raises"""
    got = value_of(student.scenario("scaler_misuse", {"cases": ["update_without_step"]}), FILE)
    expect(got["update_without_step"]["raised"] is not None, "update() without a step should raise an error.")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 6 (unscale_): FP16 gradients raise ValueError (master weights stay FP32) and are "
                  "left untouched; BF16 and FP64 gradients are accepted.")
def test_gradient_dtypes(student):
    """FP16 grads raise ValueError untouched; BF16 and FP64 grads are unscaled"""
    cases = ["fp16_gradients", "bf16_gradients", "fp64_gradients"]
    got = value_of(student.scenario("scaler_misuse", {"cases": cases}), FILE)
    fp16 = got["fp16_gradients"]
    expect(raised_is(fp16["raised"], "ValueError"),
           f"FP16 gradients should raise ValueError, got {describe_raised(fp16['raised'])}.")
    expect(bool((fp16["grad_after"] == 16.0).all()), "FP16 gradients must be left untouched when refused.")
    for case in ("bf16_gradients", "fp64_gradients"):
        expect(got[case]["raised"] is None, f"{case.split('_')[0].upper()} gradients should be accepted, "
                                            f"got {describe_raised(got[case]['raised'])}.")
        expect(bool((got[case]["grad_after"].double() == 2.0).all()),
               f"{case.split('_')[0].upper()} gradients 16 at scale 8 should become 2.")


# -- side by side with GradScaler ---------------------------------------------------------------------
@pytest.mark.points(3)
@pytest.mark.hint("TODO 6-8: step must skip exactly the iterations with an inf/NaN gradient, and update "
                  "must back off and grow like GradScaler.")
def test_matches_gradscaler_sgd(student, seed):
    """SGD with momentum, inf/NaN injected: scales, skips, parameters and state match GradScaler"""
    rng = random.Random(seed)
    # growth_interval 3 with overflows mid-count: the tracker's reset matters
    spec = {"seed": rng.randrange(10**6), "iterations": 9, "optimizer": "sgd_momentum",
            "inject": {"2": "nan", "4": "inf", "8": "-inf"}, "inject_param": rng.randrange(4),
            "inject_index": rng.randrange(50),
            "scaler": {"init_scale": float(2 ** rng.randint(6, 12)), "growth_interval": 3,
                       "growth_factor": 2.0, "backoff_factor": 0.5}}
    got = value_of(student.scenario("scaler_training", spec), FILE)
    compare_runs(got, scenarios.scaler_training(gradscaler, spec))


@pytest.mark.points(3)
@pytest.mark.hint("TODO 6-7: after an explicit unscale_ (for clipping), step must not unscale again.")
def test_matches_gradscaler_adam_with_clipping(student, seed):
    """Adam with unscale_ + clip_grad_norm_ before step matches GradScaler"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "iterations": 6, "optimizer": "adam", "lr": 0.01,
            "explicit_unscale": True, "clip": rng.uniform(0.05, 0.5), "inject": {"3": "nan"},
            "scaler": {"init_scale": float(2 ** rng.randint(8, 14)), "growth_interval": 2,
                       "growth_factor": 4.0, "backoff_factor": 0.25}}
    got = value_of(student.scenario("scaler_training", spec), FILE)
    compare_runs(got, scenarios.scaler_training(gradscaler, spec))


@pytest.mark.points(3)
@pytest.mark.hint("TODO 5-8: under FP16 autocast a too-large scale really overflows; each overflow must skip "
                  "the step and halve the scale until training proceeds.")
def test_matches_gradscaler_real_fp16_overflow(student, seed):
    """FP16 autocast from scale 2**24: the real overflows and backoffs match GradScaler"""
    # fixed data: how many real overflows happen depends on the data, and the
    # verdict must not depend on the run's seed
    spec = {"seed": 20261130, "iterations": 12, "autocast": "fp16",
            "scaler": {"init_scale": 2.0 ** 24, "growth_interval": 2}}
    got = value_of(student.scenario("scaler_training", spec), FILE)
    want = scenarios.scaler_training(gradscaler, spec)
    compare_runs(got, want)


# -- TODO 9: state_dict ----------------------------------------------------------------------------------
@pytest.mark.points(3)
@pytest.mark.hint("TODO 9 (state_dict/load_state_dict): GradScaler's five keys; loading restores scale, "
                  "factors, interval and growth tracker so the run continues unchanged.")
def test_state_dict_round_trip(student, seed):
    """state_dict has GradScaler's keys and values; loading it continues the same trajectory"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "before": 5, "after": 5, "inject": {"2": "inf"},
            "scaler": {"init_scale": float(2 ** rng.randint(6, 12)), "growth_interval": 2,
                       "growth_factor": 2.0, "backoff_factor": 0.5}}
    got = value_of(student.scenario("scaler_state_round_trip", spec), FILE)
    want = scenarios.scaler_state_round_trip(gradscaler, spec)
    saved, expected = got["saved"], want["saved"]
    expect(isinstance(saved, dict) and set(saved) == set(expected),
           f"state_dict() should have exactly the keys {sorted(expected)}.")
    for key in ("growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"):
        expect(saved[key] == expected[key], f"state_dict()['{key}'] is wrong.")
    expect_float_close(saved["scale"], expected["scale"], "state_dict()['scale']", 1e-6)
    for index, (a, e) in enumerate(zip(got["scales"], want["scales"])):
        expect(math.isclose(a, e, rel_tol=1e-5), f"after load_state_dict the scale at update {index + 1} "
                                                 f"differs: the loaded state was not fully restored.")
