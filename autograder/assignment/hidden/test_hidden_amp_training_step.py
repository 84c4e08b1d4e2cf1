"""Hidden tests for amp_training_step (TODO 10-13). The judge runs its own oracle
(oracle_train_step next to this file: the framework's real autocast/GradScaler/clip) on the same
model and data and compares parameters, reports and call counts; amp_training_step_checks holds
that judge (running both, the mistake search over the oracle's variants, the messages)."""
import math
import random

import pytest

from autograder.assignment.checks import amp_training_step_rejections
from autograder.assignment.hidden import amp_training_step_checks
from autograder.authoring import _, expect, numbers_message

pytestmark = [pytest.mark.module("amp_training_step"), pytest.mark.visibility("hidden")]


def random_weights(rng, count):
    """Unequal weights at every seed: one microbatch dominates (>= 2/3 of the total), so that equal
    weights (ignoring them) always give a clearly different update, also within BF16's tolerance.
    It is never the last: then the last microbatch's gradient alone (cleared inside the loop, or
    backward once after it) would fall within BF16's tolerance at some seeds and not at others."""
    raw = [rng.uniform(0.05, 0.25) for _ in range(count)]
    raw[rng.randrange(count - 1)] = rng.uniform(1.0, 2.0)
    weights = [value / sum(raw) for value in raw]
    weights[-1] = 1.0 - sum(weights[:-1])
    return weights


# -- TODO 10: validation and the autocast dtype -------------------------------------
@pytest.mark.todo(10)
@pytest.mark.points(1)
@pytest.mark.hint(_("Accept exactly 'fp32', 'bf16' and 'fp16'. 'fp16' needs a GradScaler whose is_enabled() is "
                    "True; 'fp32' and 'bf16' must not get an enabled one. Anything else raises ValueError "
                    "before the first forward."))
def test_rejects_bad_precision_and_scaler(student, seed):
    """invalid precision/scaler combinations raise ValueError and leave the model untouched"""
    cases = ["unknown_precision", "fp16_without_scaler", "fp16_disabled_scaler", "fp32_with_scaler",
             "bf16_with_scaler"]
    got = amp_training_step_rejections.run_errors(student, {"seed": seed % 10**6, "cases": cases,
                                                        "bad_precision": "fp8"})
    upper = amp_training_step_rejections.run_errors(student, {"seed": seed % 10**6, "bad_precision": "BF16",
                                                          "cases": ["unknown_precision"]})
    got["unknown_precision (BF16)"] = upper["unknown_precision"]
    amp_training_step_rejections.check_rejections(got)


@pytest.mark.todo(10)
@pytest.mark.points(1)
@pytest.mark.hint(_("One weight per microbatch, each >= 0, summing to 1; otherwise ValueError before the first "
                    "forward (the stub's _check_weights call does this: keep it before the loop)."))
def test_rejects_bad_weights(student, seed):
    """wrong-length, negative and non-normalised weights raise ValueError"""
    cases = ["weights_wrong_length", "weights_negative", "weights_not_summing_to_one"]
    amp_training_step_rejections.check_rejections(
        amp_training_step_rejections.run_errors(student, {"seed": seed % 10**6, "cases": cases}))


@pytest.mark.todo(10)
@pytest.mark.points(1)
@pytest.mark.hint(_("'fp16' autocasts to torch.float16 and 'bf16' to torch.bfloat16, on the device type of the "
                    "model's parameters."))
def test_autocast_dtype_per_precision(student, seed):
    """under 'fp16' / 'bf16' the forward's matmuls run in float16 / bfloat16"""
    for precision, dtype in (("fp16", "torch.float16"), ("bf16", "torch.bfloat16")):
        spec = {"seed": seed % 10**6, "precision": precision, "microbatches": 1, "updates": 1}
        if precision == "fp16":
            spec["scaler"] = {"init_scale": 256.0}
        got = amp_training_step_checks.run_student(student, spec)
        seen = got["forward_dtypes"]
        expect("torch.float32" not in seen,
               _("precision {precision}: the first Linear layer computed in {got}, expected {want}: every "
                 "forward runs inside torch.autocast(device_type, dtype=...), with the device type of the "
                 "model's parameters.", precision=repr(precision), got=", ".join(seen), want=dtype), 11)
        expect(seen == [dtype],
               _("precision {precision}: the first Linear layer computed in {got}, expected {want}.",
                 precision=repr(precision), got=", ".join(seen) or "-", want=dtype))
        calls = got.get("forward_calls")
        if calls is not None:
            expect(calls == 1, _("precision {precision}: one microbatch ran {count} forwards; every microbatch "
                                 "runs exactly one (autocast) forward.", precision=repr(precision), count=calls),
                   11)


# -- TODO 11: microbatches -------------------------------------------------------------
@pytest.mark.todo(11)
@pytest.mark.points(2)
@pytest.mark.hint(_("Microbatch i contributes weights[i] * loss_i: backward every microbatch and let the "
                    "gradients accumulate in param.grad; clear them only after the step."))
def test_weighted_accumulation_fp32(student, seed):
    """fp32 with K=3 unequal weights matches one update on the weighted sum of losses"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp32", "microbatches": 3, "updates": 2,
            "weights": random_weights(rng, 3), "max_norm": 1e3}
    got, want = amp_training_step_checks.run_both(student, spec)
    amp_training_step_checks.compare_updates(got, want, spec)


@pytest.mark.todo(11)
@pytest.mark.points(1)
@pytest.mark.hint(_("Without weights every microbatch weighs 1/K: the update is that of the mean loss, not "
                    "the sum."))
def test_default_weights_are_equal(student, seed):
    """weights=None means 1/K per microbatch"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp32", "microbatches": 4, "updates": 1,
            "max_norm": 1e3}
    got, want = amp_training_step_checks.run_both(student, spec)
    amp_training_step_checks.compare_updates(got, want, spec)


@pytest.mark.todo(11)
@pytest.mark.points(1)
@pytest.mark.hint(_("'fp32' runs its forward without autocast: torch.autocast(device_type, dtype=None) still "
                    "autocasts (to bfloat16 on the CPU), so pass enabled=False (or do not enter autocast)."))
def test_fp32_forward_without_autocast(student, seed):
    """under 'fp32' the forward's matmuls run in float32"""
    spec = {"seed": seed % 10**6, "precision": "fp32", "microbatches": 2, "updates": 1}
    got = amp_training_step_checks.run_student(student, spec)
    seen = got["forward_dtypes"]
    expect(seen == ["torch.float32"],
           _("precision 'fp32': the first Linear layer computed in {got}, expected torch.float32.",
             got=", ".join(seen) or "-"))


@pytest.mark.todo(11)
@pytest.mark.points(1)
@pytest.mark.hint(_("Every microbatch runs its own scaled backward: scaler.scale(weighted loss).backward() "
                    "inside the loop, K times per call."))
def test_scaled_backward_per_microbatch(student, seed):
    """fp16 with K=3: scaler.scale runs once per microbatch"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp16", "microbatches": 3, "updates": 2,
            "scaler": {"init_scale": 2.0 ** 10, "growth_interval": 1000}}
    got = amp_training_step_checks.run_student(student, spec)
    calls = got["scaler_calls"]["scale"]
    expect(calls == 3 * spec["updates"],
           _("scaler.scale ran {count} times in {updates} calls of 3 microbatches, expected {want}: one scaled "
             "backward per microbatch.", count=calls, updates=spec["updates"], want=3 * spec["updates"]))
    counted = got.get("forward_calls")
    if counted is not None:
        expect(counted == 3 * spec["updates"],
               _("the model ran {count} forwards in {updates} calls of 3 microbatches, expected {want}: one "
                 "autocast forward per microbatch.", count=counted, updates=spec["updates"],
                 want=3 * spec["updates"]))


@pytest.mark.todo(11)
@pytest.mark.points(2)
@pytest.mark.hint(_("Under 'bf16' every forward runs in torch.autocast with dtype bfloat16, no scaler, and the "
                    "weighted losses accumulate as in fp32."))
def test_bf16_update_matches_reference(student, seed):
    """bf16, K=2, finite: same update as the reference"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "bf16", "microbatches": 2, "updates": 2,
            "weights": random_weights(rng, 2), "max_norm": 1e3}
    got, want = amp_training_step_checks.run_both(student, spec)
    amp_training_step_checks.compare_updates(got, want, spec)


# -- TODO 12: the update boundary -------------------------------------------------------
@pytest.mark.todo(12)
@pytest.mark.points(2)
@pytest.mark.hint(_("Call scaler.unscale_(optimizer) before clip_grad_norm_: clipping still-scaled gradients "
                    "uses a norm `scale` times too large."))
def test_clips_real_scale_gradients(student, seed):
    """fp16 with a binding max_norm: clipping acts on real-scale gradients"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp16", "microbatches": 2, "updates": 2,
            "max_norm": rng.uniform(0.02, 0.1), "weights": [0.5, 0.5],
            "scaler": {"init_scale": 2.0 ** rng.randint(8, 12), "growth_interval": 1000}}
    got, want = amp_training_step_checks.run_both(student, spec)
    amp_training_step_checks.compare_updates(got, want, spec)


@pytest.mark.todo(12)
@pytest.mark.points(2)
@pytest.mark.hint(_("Clip the global gradient norm to max_norm (torch.nn.utils.clip_grad_norm_) and report "
                    "the norm before clipping, as a Python float."))
def test_clips_to_max_norm(student, seed):
    """fp32 with a binding max_norm: the update is clipped, grad_norm is the pre-clip norm"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp32", "microbatches": 2, "updates": 1,
            "max_norm": rng.uniform(0.05, 0.2)}
    got, want = amp_training_step_checks.run_both(student, spec)
    amp_training_step_checks.compare_updates(got, want, spec)


@pytest.mark.todo(12)
@pytest.mark.points(1)
@pytest.mark.hint(_("After the microbatch loop, once per call: scaler.unscale_(optimizer), then the finite "
                    "check, the norm and the clip on the real-scale gradients."))
def test_unscale_once_at_the_boundary(student, seed):
    """fp16 with K=3: unscale_ runs once per call, after the loop"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp16", "microbatches": 3, "updates": 2, "max_norm": 1e3,
            "scaler": {"init_scale": 2.0 ** 10, "growth_interval": 1000}}
    got, want = amp_training_step_checks.run_both(student, spec)
    calls = got["scaler_calls"]["unscale_"]
    expect(calls == spec["updates"],
           _("scaler.unscale_ ran {count} times in {updates} calls (not counting the one scaler.step makes "
             "itself when none came before): unscale explicitly, once per call, before the clip.", count=calls,
             updates=spec["updates"]))
    amp_training_step_checks.compare_updates(got, want, spec)


@pytest.mark.todo(12)
@pytest.mark.points(1)
@pytest.mark.hint(_("Parameters whose grad is None (they took no part in the loss) are left out of the finite "
                    "check and the norm."))
def test_parameters_without_gradient(student, seed):
    """a frozen layer (grad None) neither crashes the step nor changes the result"""
    spec = {"seed": seed % 10**6, "precision": "fp16", "microbatches": 2, "updates": 1, "frozen_layer": True,
            "max_norm": 1e3, "scaler": {"init_scale": 1024.0}}
    got, want = amp_training_step_checks.run_both(student, spec)
    amp_training_step_checks.compare_updates(got, want, spec)


# -- TODO 13: step or skip, scaler update, clear ------------------------------------------
@pytest.mark.todo(13)
@pytest.mark.points(2)
@pytest.mark.hint(_("With a scaler: step or skip (scaler.step(optimizer) skips by itself on inf/NaN), then "
                    "scaler.update(), once per call; stepped says whether optimizer.step really ran."))
def test_fp16_trajectory_with_overflow(student, seed):
    """fp16 + SGD with momentum over 4 updates with NaN in one: skips, scales and parameters match"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp16", "microbatches": 2, "updates": 4,
            "optimizer": "sgd_momentum", "lr": 0.05, "max_norm": 1e3,
            "inject": {"1": {"microbatch": 1, "value": "nan"}},
            "scaler": {"init_scale": 2.0 ** rng.randint(8, 12), "growth_interval": 1}}
    got, want = amp_training_step_checks.run_both(student, spec)
    amp_training_step_checks.compare_updates(got, want, spec)
    expect(math.isclose(got["final_scale"], want["final_scale"], rel_tol=1e-6),
           numbers_message(_("the scaler's final scale"), got["final_scale"], want["final_scale"]), 13)


@pytest.mark.todo(13)
@pytest.mark.points(2)
@pytest.mark.hint(_("Without a scaler, call optimizer.step() only when every gradient is finite; on NaN/inf "
                    "skip it, report 'non_finite_gradient' and grad_norm inf."))
def test_bf16_skips_non_finite_without_scaler(student, seed):
    """bf16 with an inf input: no step, reason non_finite_gradient, scales 1.0"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "bf16", "microbatches": 2, "updates": 3, "max_norm": 1e3,
            "inject": {"0": {"microbatch": 1, "value": "inf"}, "2": {"microbatch": 0, "value": "nan"}}}
    got, want = amp_training_step_checks.run_both(student, spec)
    amp_training_step_checks.compare_updates(got, want, spec)


@pytest.mark.todo(13)
@pytest.mark.points(1)
@pytest.mark.hint(_("scaler.update() runs once per call, after the microbatch loop, also when the step is skipped; "
                    "the step itself (scaler.step, or your own skip) happens at most once per call."))
def test_step_and_update_once_per_call(student, seed):
    """fp16 with K=3 and one overflow: scaler.update once per call, at most one step per call"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp16", "microbatches": 3, "updates": 3,
            "inject": {"1": {"microbatch": 2, "value": "inf"}},
            "scaler": {"init_scale": 2.0 ** 10, "growth_interval": 1000}}
    got = amp_training_step_checks.run_student(student, spec)
    calls = got["scaler_calls"]
    # The contract says "step or skip, then the scaler update": skipping without calling
    # scaler.step (after your own finite check) is as right as letting scaler.step skip.
    expect(calls["update"] == spec["updates"],
           _("scaler.update ran {count} times in {updates} calls: once per call, at the update boundary, "
             "after the step or the skip.", count=calls["update"], updates=spec["updates"]))
    expect(calls["step"] <= spec["updates"],
           _("scaler.step ran {count} times in {updates} calls: at most once per call, at the update boundary.",
             count=calls["step"], updates=spec["updates"]))
    expect(got["step_calls"] == [1, 0, 1],
           _("optimizer.step ran {counts} times in the three calls (the second one overflows): once on a finite "
             "update, never on a skip.", counts="/".join(str(count) for count in got["step_calls"])))


@pytest.mark.todo(13)
@pytest.mark.points(1)
@pytest.mark.hint(_("On return every param.grad is None, after a step and after a skip "
                    "(optimizer.zero_grad(set_to_none=True))."))
def test_gradients_cleared_on_return(student, seed):
    """no gradient is left behind, on the step path and the skip path"""
    spec = {"seed": seed % 10**6, "precision": "fp16", "microbatches": 2, "updates": 2,
            "scaler": {"init_scale": 512.0}, "inject": {"1": {"microbatch": 0, "value": "inf"}}}
    got = amp_training_step_checks.run_student(student, spec)
    for index, left in enumerate(got["grads_left"], start=1):
        path = _("a skip") if index == 2 else _("a step")
        expect(left == 0, _("after update {index} ({path}), {count} parameter(s) still hold a gradient "
                            "(param.grad must be None, not zeros).", index=index, path=path, count=left))


@pytest.mark.todo(13)
@pytest.mark.points(1)
@pytest.mark.hint(_("Return exactly the contract's keys: stepped (bool), reason (str), grad_norm, scale_before "
                    "and scale_after (Python floats, 1.0 without a scaler), num_microbatches (int)."))
def test_report_keys_and_types(student, seed):
    """the returned dict has the contract's keys and types; without a scaler both scales are 1.0"""
    for precision in ("fp32", "bf16"):
        spec = {"seed": seed % 10**6, "precision": precision, "microbatches": 3, "updates": 1}
        got = amp_training_step_checks.run_student(student, spec)
        amp_training_step_checks.check_structure(got)
        report = got["reports"][0]
        expect(isinstance(report["stepped"], bool),
               _("stepped should be a bool, got {got}.", got=type(report["stepped"]).__name__))
        expect(isinstance(report["reason"], str),
               _("reason should be a str, got {got}.", got=type(report["reason"]).__name__))
        expect(isinstance(report["grad_norm"], float),
               _("grad_norm should be a Python float (float(...) of the norm tensor), got {got}.",
                 got=type(report["grad_norm"]).__name__), 12)
        for key in ("scale_before", "scale_after"):
            expect(isinstance(report[key], float) and report[key] == 1.0,
                   _("precision {precision}: {key} should be the float 1.0 without a scaler, got {got}.",
                     precision=repr(precision), key=key, got=repr(report[key])))
        expect(isinstance(report["num_microbatches"], int) and not isinstance(report["num_microbatches"], bool)
               and report["num_microbatches"] == 3,
               _("num_microbatches should be the int 3, got {got}.", got=repr(report["num_microbatches"])))
