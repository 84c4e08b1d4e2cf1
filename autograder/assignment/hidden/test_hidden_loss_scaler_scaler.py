"""Hidden tests for LossScaler's methods, TODO 6 (unscale_) to TODO 9 (state_dict):
trajectories are compared side by side with the real torch.amp.GradScaler('cpu')
run here, in the judge (checks/loss_scaler_checks.py judges them and names the method
at fault). The tests of TODO 4-5 are in test_hidden_loss_scaler.py.
"""
import math
import random

import pytest
import torch

from autograder.assignment.checks import references
from autograder.assignment.checks.loss_scaler_checks import (
    FILE,
    ONE_OVER_SCALE,
    SCALE_SQUARED,
    STATE,
    STATE_KEYS,
    STEP,
    THE_SCALE,
    UNSCALE,
    UPDATE,
    echo_is_faithful,
    gradscaler,
    is_number,
    raised_text,
    rule_options,
    run_side_by_side,
    shown,
    stop_mistake,
    tracker_mistake,
)
from autograder.assignment.checks.loss_scaler_calls import (MISUSE, check_misuse_raises, check_step_arguments,
                                                            check_unscale)
from autograder.assignment.checks.loss_scaler_state import (PARAMETERS_AFTER_RUN, check_continuation, check_state,
                                                            round_trip)
from autograder.authoring import (_, expect, expect_relative_error, numbers_message, raised_instead,
                                  raised_is, value_of)

pytestmark = [pytest.mark.module("loss_scaler"), pytest.mark.visibility("hidden")]


@pytest.fixture(autouse=True, scope="module")
def built_by_hand(no_delegation):
    """Every loss_scaler test first checks that the module does not delegate."""


# -- TODO 6: unscale_ -------------------------------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(6)
@pytest.mark.hint(_("unscale_: divide every param.grad by the scale in place (the same tensor object, e.g. "
                    "grad.mul_(1 / scale)), skip None grads, handle non-contiguous grads, and record found_inf when "
                    "any element is inf or NaN."))
def test_unscale_in_place_and_found_inf(student, seed):
    """unscale_ works in place on every grad and detects NaN/inf anywhere, like GradScaler"""
    rng = random.Random(seed)
    # parameter 2's grad is a transposed (non-contiguous) view
    for poison, dtype, param in ((None, "float32", 0), ("nan", "float32", 2), ("inf", "bfloat16", 1),
                                 ("-inf", "float64", 0), (None, "float64", 0), ("inf", "float32", 0)):
        spec = {"seed": rng.randrange(10**6), "dtype": dtype,
                "scaler": {"init_scale": float(2 ** rng.randint(2, 14))},
                "poison": poison, "poison_param": param, "poison_index": rng.randrange(100)}
        got = value_of(student.scenario("scaler_unscale", spec), FILE)
        want = references.with_gradscaler("scaler_unscale", spec)
        label = _("{dtype} gradients, {poison} in param.grad[{param}]", dtype=dtype, poison=poison, param=param) \
            if poison else _("{dtype} gradients, all finite", dtype=dtype)
        check_unscale(got, want, spec, label)


@pytest.mark.points(1)
@pytest.mark.todo(6)
@pytest.mark.hint(_("unscale_: go through every group of optimizer.param_groups, not only the first, and skip "
                    "parameters whose grad is None."))
def test_unscale_every_param_group(student, seed):
    """unscale_ unscales and checks the gradients of every param group"""
    rng = random.Random(seed)
    for poison in (None, "inf"):
        spec = {"seed": rng.randrange(10**6), "dtype": "float32", "groups": True,
                "scaler": {"init_scale": float(2 ** rng.randint(2, 14))},
                "poison": poison, "poison_param": 2, "poison_index": rng.randrange(100)}
        got = value_of(student.scenario("scaler_unscale", spec), FILE)
        want = references.with_gradscaler("scaler_unscale", spec)
        label = _("two param groups, {poison} in the second group", poison=poison) if poison \
            else _("two param groups, all finite")
        check_unscale(got, want, spec, label)


@pytest.mark.points(1)
@pytest.mark.todo(6)
@pytest.mark.hint(_("unscale_: the FP16 check is given; BF16 and FP64 gradients are unscaled like FP32 ones, in "
                    "their own dtype."))
def test_gradient_dtypes(student):
    """FP16 grads raise ValueError untouched; BF16 and FP64 grads are unscaled"""
    cases = ["fp16_gradients", "bf16_gradients", "fp64_gradients"]
    got = value_of(student.scenario("scaler_misuse", {"cases": cases}), FILE)
    fp16 = got["fp16_gradients"]
    expect(raised_is(fp16["raised"], "ValueError"),
           _("FP16 gradients should raise ValueError (master weights stay FP32), but {outcome}.",
             outcome=raised_instead(fp16["raised"])))
    expect(bool((fp16["grad_after"] == 16.0).all()), _("FP16 gradients must be left untouched when refused."))
    for case in ("bf16_gradients", "fp64_gradients"):
        name = case.split("_")[0].upper()
        expect(got[case]["raised"] is None, _("{dtype} gradients should be accepted, got {got}.", dtype=name,
                                              got=raised_text(got[case]["raised"])), UNSCALE)
        after = got[case]["grad_after"].double()
        expect(bool((after == 2.0).all()), numbers_message(
            _("{dtype} gradients of 16 at scale 8 after unscale_", dtype=name),
            float(after.reshape(-1)[0]) if after.numel() else math.nan, 2.0,
            {THE_SCALE: 8.0, ONE_OVER_SCALE: 1 / 8.0, SCALE_SQUARED: 64.0}), UNSCALE)


# -- TODO 7: step ---------------------------------------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: mark the optimizer as stepped for this iteration -- also when the step is skipped -- so "
                    "that a second step() or a later unscale_() raises RuntimeError until update()."))
def test_unscale_and_step_once_per_iteration(student):
    """a second unscale_, unscale_ after step and a second step raise RuntimeError, skipped step or not"""
    check_misuse_raises(student, list(MISUSE))


@pytest.mark.points(1)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: pass *args and **kwargs on to optimizer.step(*args, **kwargs) and return what it returns; "
                    "return None, without calling it, when the step is skipped."))
def test_step_passes_arguments_and_returns_value(student, seed):
    """step(optimizer, *args, **kwargs) passes its arguments to optimizer.step and returns its value"""
    rng = random.Random(seed)
    calls = [{}, {"closure": round(rng.uniform(1, 9), 3)},
             {"closure": round(rng.uniform(1, 9), 3), "args": [round(rng.uniform(0, 1), 3)],
              "kwargs": {"lr_scale": round(rng.uniform(0, 1), 3), "tag": "x"}},
             {"closure": 4.0, "args": [1.5], "kwargs": {"lr_scale": 0.5}, "poison": True},
             {"kwargs": {"lr_scale": round(rng.uniform(0, 1), 3)}}]
    spec = {"scale": float(2 ** rng.randint(2, 12)), "calls": calls}
    check_step_arguments(student, spec)


@pytest.mark.points(1)
@pytest.mark.todo(7)
@pytest.mark.hint(_("step: call unscale_ only if it was not called in this iteration; after an explicit unscale_ (for "
                    "clipping) use the found_inf it recorded and do not unscale again."))
def test_matches_gradscaler_adam_with_clipping(student, seed):
    """Adam with unscale_ + clip_grad_norm_ before step matches GradScaler"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "iterations": 6, "optimizer": "adam", "lr": 0.01,
            "explicit_unscale": True, "clip": rng.uniform(0.05, 0.5), "inject": {"3": "nan"},
            "scaler": {"init_scale": float(2 ** rng.randint(8, 14)), "growth_interval": 2,
                       "growth_factor": 4.0, "backoff_factor": 0.25}}
    run_side_by_side(student, spec)


# -- TODO 8: update -------------------------------------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(8)
@pytest.mark.hint(_("update: the check for a missing unscale_/step is given; after a skipped step, update() still "
                    "backs off the scale and starts the next iteration."))
def test_update_needs_a_step(student):
    """update() before any unscale_/step raises; update() after a skipped step backs off"""
    got = value_of(student.scenario("scaler_misuse", {"cases": ["update_without_step", "update_after_skipped_step"]}),
                   FILE)
    expect(got["update_without_step"]["raised"] is not None, _("update() without a step should raise an error."))
    skipped = got["update_after_skipped_step"]
    expect(skipped["raised"] is None, _("update() after a skipped step (inf gradient) raised {got}.",
                                        got=raised_text(skipped["raised"])), UPDATE)
    expect(is_number(skipped["scale_after"]) and skipped["scale_after"] == 4.0,
           _("after a skipped step at scale 8 (backoff_factor 0.5), update() should leave the scale at 4, got {got}.",
             got=shown(skipped["scale_after"])), UPDATE)


@pytest.mark.points(1)
@pytest.mark.todo(8)
@pytest.mark.hint(_("update: call update_scale with the current scale, the stored growth tracker, this iteration's "
                    "found_inf (from unscale_, stepped or not) and the scaler's own factors and interval; store both "
                    "results and forget the iteration's per-optimizer state."))
def test_matches_gradscaler_sgd(student, seed):
    """SGD with momentum, inf/NaN injected: scales, skips, parameters and state match GradScaler"""
    rng = random.Random(seed)
    # growth_interval 3 with overflows mid-count: the tracker's reset matters;
    # iteration 4 calls unscale_ and update() but no step
    spec = {"seed": rng.randrange(10**6), "iterations": 9, "optimizer": "sgd_momentum",
            "inject": {"2": "nan", "4": "inf", "8": "-inf"}, "no_step": [4], "inject_param": 0,
            "inject_index": rng.randrange(50),
            "scaler": {"init_scale": float(2 ** rng.randint(6, 12)), "growth_interval": 3,
                       "growth_factor": 3.0, "backoff_factor": 0.25}}
    run_side_by_side(student, spec)


@pytest.mark.points(2)
@pytest.mark.todo(8)
@pytest.mark.hint(_("update: under FP16 autocast a too-large scale really overflows; each overflow backs off the "
                    "scale in update() until steps go through, and then the tracker counts again."))
def test_matches_gradscaler_real_fp16_overflow(student, seed):
    """FP16 autocast from scale 2**24: the real overflows and backoffs match GradScaler"""
    # fixed data: how many real overflows happen depends on the data, and the
    # verdict must not depend on the run's seed
    spec = {"seed": 20261130, "iterations": 12, "autocast": "fp16",
            "scaler": {"init_scale": 2.0 ** 24, "growth_interval": 2}}
    run_side_by_side(student, spec)


# -- TODO 9: state_dict ----------------------------------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(9)
@pytest.mark.hint(_("state_dict: return GradScaler's five keys with the scaler's current values (growth_interval and "
                    "_growth_tracker as ints), so that a fresh scaler loading it continues the same run."))
def test_state_dict_round_trip(student, seed):
    """state_dict saved mid-run has GradScaler's keys and values; a fresh scaler loading it continues the same run"""
    rng = random.Random(seed)
    interval = rng.randint(3, 5)
    before = 2 + rng.randint(1, interval - 1)  # the tracker is not 0 when the state is saved
    spec = {"seed": rng.randrange(10**6), "before": before, "after": interval + 2, "inject": {"1": "inf"},
            "scaler": {"init_scale": float(2 ** rng.randint(6, 12)), "growth_interval": interval,
                       "growth_factor": rng.choice([2.0, 3.0]), "backoff_factor": 0.25},
            "fresh": {"init_scale": 3.0, "growth_factor": 4.0, "backoff_factor": 0.5, "growth_interval": 999}}
    got, want = round_trip(student, spec)
    options = rule_options(spec["scaler"])
    stopped = got.get("stopped")
    check_continuation(student, {**got, "skipped": got["skipped"][:before]}, want, spec, 0, options,
                       (spec["scaler"]["init_scale"], 0), _("before saving"))
    if stopped and stopped["iteration"] < before:
        raise stop_mistake(stopped)
    if got["saved"] is not None and isinstance(got["saved"], dict) and set(got["saved"]) == set(STATE_KEYS) \
            and got["saved"]["_growth_tracker"] != want["saved"]["_growth_tracker"] and echo_is_faithful(
                got["probe_echo"]):
        raise tracker_mistake(student, _("when saved, after update {k}", k=before), got["saved"]["_growth_tracker"],
                              want["saved"]["_growth_tracker"], ((want["scales"][before - 2], want["trackers"][before - 2],
                                                                  want["skipped"][before - 1]),
                                                                 (want["scales"][before - 1],
                                                                  want["trackers"][before - 1])),
                              options, got["probe_echo"])
    if got["saved"] is not None:
        check_state(got["saved"], want["saved"], _("state_dict() saved mid-run"))
    if stopped and stopped["iteration"] == before and stopped["call"] in ("state_dict", "__init__",
                                                                         "load_state_dict"):
        raise stop_mistake(stopped)
    check_state(got["echo"], want["saved"], _("state_dict() right after load_state_dict of the saved state"))
    check_continuation(student, got, want, spec, before, options, (want["scales"][before - 1], want["trackers"][before - 1]),
                       _("after loading"))
    if stopped:
        raise stop_mistake(stopped)
    expect_relative_error(got["parameters"], want["parameters"], PARAMETERS_AFTER_RUN, 1e-5, todo=STEP)


@pytest.mark.points(1)
@pytest.mark.todo(9)
@pytest.mark.hint(_("state_dict: a newly built scaler reports its constructor arguments and a tracker of 0, like "
                    "GradScaler, before and after its first scale()."))
def test_fresh_state_dict_matches_gradscaler(student, seed):
    """state_dict() of a fresh scaler equals GradScaler's for default and random arguments"""
    rng = random.Random(seed)
    # never GradScaler's defaults (65536, 2.0, 0.5, 2000): a scaler that ignores an argument fails at every seed
    interval = rng.choice([rng.randint(2, 1999), rng.randint(2001, 5000)])
    spec = {"cases": [{}, {"init_scale": float(2 ** rng.randint(2, 20) * 3), "growth_factor": rng.choice([3.0, 1.5]),
                           "backoff_factor": rng.choice([0.25, 0.75]), "growth_interval": interval}]}
    got = value_of(student.scenario("scaler_fresh_state", spec), FILE)
    want = references.with_gradscaler("scaler_fresh_state", spec)
    for options, a, e in zip(spec["cases"], got, want):
        label = _("LossScaler({options})", options=", ".join(f"{key}={value!r}" for key, value in options.items()))
        check_state(a["state"], e["state"], _("state_dict() of {what}", what=label))
        expect(is_number(a["get_scale"]) and a["get_scale"] == e["get_scale"],
               _("get_scale() of {what} is {got}, GradScaler's is {want}.", what=label, got=shown(a["get_scale"]),
                 want=shown(e["get_scale"])), STATE)
        check_state(a["after_scale"], e["after_scale"], _("state_dict() of {what} after a first scale()", what=label))


@pytest.mark.points(1)
@pytest.mark.todo(8)
@pytest.mark.hint(_("update: a loaded tracker at or past growth_interval keeps counting without growth (the scale "
                    "grows only when tracker + 1 equals growth_interval exactly), as GradScaler does."))
def test_loaded_tracker_past_interval_never_grows(student, seed):
    """after loading a tracker at or past growth_interval, clean updates count on without growth, like GradScaler"""
    rng = random.Random(seed)
    interval = rng.randint(2, 4)
    # fixed structure: the tracker equals the interval or lies past it, and the run is long enough that a
    # `>=` rule or a `% interval` rule would grow somewhere
    state = {"scale": float(2 ** rng.randint(6, 12)), "growth_factor": 2.0, "backoff_factor": 0.5,
             "growth_interval": interval, "_growth_tracker": interval + rng.choice([0, interval - 1])}
    spec = {"seed": rng.randrange(10**6), "before": 0, "after": 2 * interval + 1, "load_state": state,
            "scaler": {"init_scale": 1024.0},
            "fresh": {"init_scale": 5.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 1000}}
    got, want = round_trip(student, spec)
    stopped = got.get("stopped")
    if stopped and stopped["iteration"] == 0 and stopped["call"] in ("state_dict", "__init__", "load_state_dict"):
        raise stop_mistake(stopped)
    check_continuation(student, got, want, spec, 0, rule_options(state), (state["scale"], state["_growth_tracker"]),
                       _("after loading a tracker of {tracker} with growth_interval {interval}",
                         tracker=state["_growth_tracker"], interval=interval))
    if stopped:
        raise stop_mistake(stopped)
    # Gradients given to optimizer.step at the wrong scale make some runs blow up into skips, not
    # others: judged on the parameters too, such a scaler fails here at every seed, not only there.
    expect_relative_error(got["parameters"], want["parameters"], PARAMETERS_AFTER_RUN, 1e-5, todo=STEP)


@pytest.mark.points(1)
@pytest.mark.todo(9)
@pytest.mark.hint(_("state_dict: after load_state_dict of a GradScaler state, state_dict() reports exactly that "
                    "state, and the run continues as GradScaler's does."))
def test_load_gradscaler_state_mid_run(student, seed):
    """a GradScaler state saved mid-run, loaded into a fresh scaler built with other arguments, continues like GradScaler"""
    rng = random.Random(seed)
    interval = rng.randint(3, 5)
    options = {"init_scale": float(2 ** rng.randint(6, 12)), "growth_factor": rng.choice([2.0, 3.0]),
               "backoff_factor": rng.choice([0.5, 0.25]), "growth_interval": interval}
    source, param = gradscaler(**options), torch.nn.Parameter(torch.zeros(2))
    optimizer = torch.optim.SGD([param], lr=0.0)
    for index in range(interval + 1 + rng.randint(1, interval - 1)):  # an overflow, then a growth, then a count
        source.scale(torch.ones(()))
        param.grad = torch.tensor([1.0, math.inf if index == 0 else 1.0])
        source.step(optimizer)
        source.update()
    state = source.state_dict()
    spec = {"seed": rng.randrange(10**6), "before": 0, "after": interval + 2, "load_state": state,
            "scaler": {"init_scale": 1024.0},
            "fresh": {"init_scale": 7.0, "growth_factor": 1.5, "backoff_factor": 0.75, "growth_interval": 77}}
    got, want = round_trip(student, spec)
    stopped = got.get("stopped")
    if stopped and stopped["iteration"] == 0 and stopped["call"] in ("state_dict", "__init__", "load_state_dict"):
        raise stop_mistake(stopped)
    check_state(got["echo"], state, _("state_dict() right after load_state_dict of a GradScaler state"))
    check_continuation(student, got, want, spec, 0, rule_options(state), (state["scale"], state["_growth_tracker"]),
                       _("after loading a GradScaler state"))
    if stopped:
        raise stop_mistake(stopped)
    expect_relative_error(got["parameters"], want["parameters"], PARAMETERS_AFTER_RUN, 1e-5, todo=STEP)
