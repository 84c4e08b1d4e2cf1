"""Hidden tests for amp_training_step (TODO 10-13). The judge runs its own oracle
(oracle_train_step next to this file: the framework's real autocast/GradScaler/clip) on the same
model and data and compares parameters, reports and call counts."""
import math
import random

import pytest

from autograder import scenarios
from autograder.hidden import oracle_train_step
from autograder.judge import (describe_raised, expect, expect_float_close, expect_updates_close, raised_is,
                              value_of)

pytestmark = [pytest.mark.module("amp_training_step"), pytest.mark.visibility("hidden")]
FILE = "amp_training_step.py"
REPORT_KEYS = {"stepped", "reason", "grad_norm", "scale_before", "scale_after", "num_microbatches"}
# Relative tolerance on the parameter *updates*, by precision. Low-precision
# matmuls round differently depending on where a correct implementation applies
# the weights; the mistakes these tests name change updates by far more. They are
# loose enough that one mistake (say, the wrong autocast dtype, which has its own
# test) never flips another test from run to run.
UPDATE_TOLERANCE = {"fp32": 1e-4, "bf16": 1e-1, "fp16": 1e-1}
NORM_TOLERANCE = {"fp32": 1e-5, "bf16": 5e-2, "fp16": 5e-2}


def run_both(student, spec):
    got = value_of(student.scenario("training_steps", spec), FILE)
    want = scenarios.training_steps(oracle_train_step.train_step, spec)
    for report in got["reports"]:
        expect(isinstance(report, dict), "train_step should return a dict.")
        missing, extra = REPORT_KEYS - set(report), set(report) - REPORT_KEYS
        expect(not missing and not extra, f"the returned dict's keys are wrong (missing: {sorted(missing)}, "
                                          f"unexpected: {sorted(extra)}).")
    return got, want


def initial_parameters(spec):
    return scenarios.parameters_of(scenarios.build_model(spec["seed"],
                                                         frozen_layer=spec.get("frozen_layer", False)))


def compare_updates(got, want, spec):
    precision = spec["precision"]
    for index, (report, expected) in enumerate(zip(got["reports"], want["reports"])):
        label = f"update {index + 1}"
        expect(report["stepped"] is expected["stepped"],
               f"{label}: stepped should be {expected['stepped']} "
               f"({'finite' if expected['stepped'] else 'non-finite'} gradients).")
        expect(report["reason"] == expected["reason"], f"{label}: reason should be '{expected['reason']}'.")
        expect(got["step_calls"][index] == (1 if expected["stepped"] else 0),
               f"{label}: optimizer.step ran {got['step_calls'][index]} times; it must run once on a finite "
               f"update and never on a skipped one.")
        expect_float_close(report["grad_norm"], expected["grad_norm"], f"{label}: grad_norm",
                           NORM_TOLERANCE[precision])
        expect_float_close(report["scale_before"], expected["scale_before"], f"{label}: scale_before", 1e-6)
        expect_float_close(report["scale_after"], expected["scale_after"], f"{label}: scale_after", 1e-6)
        expect(report["num_microbatches"] == expected["num_microbatches"], f"{label}: num_microbatches is wrong.")
    expect_updates_close(got["parameters"], want["parameters"], initial_parameters(spec),
                         "the parameters after training", UPDATE_TOLERANCE[precision])


def random_weights(rng, count):
    raw = [rng.uniform(0.05, 1.0) for _ in range(count)]
    weights = [value / sum(raw) for value in raw]
    weights[-1] = 1.0 - sum(weights[:-1])
    return weights


@pytest.mark.points(3)
@pytest.mark.hint("TODO 11 (accumulation): microbatch i contributes weights[i] * loss_i; backward every "
                  "microbatch and let the gradients accumulate; zero them only after the step.")
def test_weighted_accumulation_fp32(student, seed):
    """fp32 with K=3 unequal weights matches one update on the weighted sum of losses"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp32", "microbatches": 3, "updates": 2,
            "weights": random_weights(rng, 3), "max_norm": 1e3}
    got, want = run_both(student, spec)
    compare_updates(got, want, spec)


@pytest.mark.points(2)
@pytest.mark.hint("TODO 11 (accumulation): without weights every microbatch weighs 1/K, so the update is "
                  "that of the mean loss, not the sum.")
def test_default_weights_are_equal(student, seed):
    """weights=None means 1/K per microbatch"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp32", "microbatches": 4, "updates": 1,
            "max_norm": 1e3}
    got, want = run_both(student, spec)
    compare_updates(got, want, spec)


@pytest.mark.points(3)
@pytest.mark.hint("TODO 12-13 (boundary): scale+backward for every microbatch, but unscale_, step and "
                  "update exactly once per call, after the loop.")
def test_scaler_calls_at_the_boundary_only(student, seed):
    """fp16 with K=3: scale K times, unscale_/step/update once each per update"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp16", "microbatches": 3, "updates": 2,
            "scaler": {"init_scale": 2.0 ** 10, "growth_interval": 1000}}
    got, want = run_both(student, spec)
    calls = got["scaler_calls"]
    updates = spec["updates"]
    expect(calls["scale"] == 3 * updates, f"scaler.scale was called {calls['scale']} times for "
                                          f"{updates} updates of 3 microbatches (expected one per microbatch).")
    for name in ("unscale_", "step", "update"):
        expect(calls[name] == updates, f"scaler.{name} ran {calls[name]} times in {updates} updates: it belongs "
                                       f"at the update boundary, once per update.")
    compare_updates(got, want, spec)


@pytest.mark.points(3)
@pytest.mark.hint("TODO 12 (clip): unscale_ before clip_grad_norm_; clipping scaled gradients uses a norm "
                  "that is `scale` times too large.")
def test_clips_real_scale_gradients(student, seed):
    """fp16 with a binding max_norm: clipping acts on real-scale gradients"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp16", "microbatches": 2, "updates": 2,
            "max_norm": rng.uniform(0.02, 0.1), "weights": [0.5, 0.5],
            "scaler": {"init_scale": 2.0 ** rng.randint(8, 12), "growth_interval": 1000}}
    got, want = run_both(student, spec)
    compare_updates(got, want, spec)


@pytest.mark.points(3)
@pytest.mark.hint("TODO 12-13 (fp16): on a non-finite gradient skip the step, let the scaler back off, and "
                  "keep going on the next call.")
def test_fp16_trajectory_with_overflow(student, seed):
    """fp16 + SGD with momentum over 4 updates with NaN in one: skips, scales and parameters match"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "fp16", "microbatches": 2, "updates": 4,
            "optimizer": "sgd_momentum", "lr": 0.05, "inject": {"1": {"microbatch": 1, "value": "nan"}},
            "scaler": {"init_scale": 2.0 ** rng.randint(8, 12), "growth_interval": 1}}
    got, want = run_both(student, spec)
    compare_updates(got, want, spec)
    expect(math.isclose(got["final_scale"], want["final_scale"], rel_tol=1e-6),
           "the scaler's final scale differs: update() must run once per call, after the step or skip.")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 12-13 (bf16): BF16 runs without a scaler but still checks finiteness and skips "
                  "the step on NaN/inf.")
def test_bf16_skips_non_finite_without_scaler(student, seed):
    """bf16 with an inf input: no step, reason non_finite_gradient, scales 1.0"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "bf16", "microbatches": 2, "updates": 3,
            "inject": {"0": {"microbatch": 1, "value": "inf"}, "2": {"microbatch": 0, "value": "nan"}}}
    got, want = run_both(student, spec)
    compare_updates(got, want, spec)
    for report in got["reports"]:
        expect(report["scale_before"] == 1.0 and report["scale_after"] == 1.0,
               "without a scaler scale_before and scale_after are 1.0.")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 10-11 (bf16): autocast to bfloat16 on the model's device type; no scaler.")
def test_bf16_update_matches_reference(student, seed):
    """bf16, K=2, finite: same update as the reference"""
    rng = random.Random(seed)
    spec = {"seed": rng.randrange(10**6), "precision": "bf16", "microbatches": 2, "updates": 2,
            "weights": random_weights(rng, 2), "max_norm": 1e3}
    got, want = run_both(student, spec)
    compare_updates(got, want, spec)


@pytest.mark.points(2)
@pytest.mark.hint("TODO 10-11 (autocast): the forward runs under torch.autocast with dtype float16 for "
                  "'fp16', bfloat16 for 'bf16', and without autocast for 'fp32'.")
def test_autocast_dtype_in_forward(student, seed):
    """the forward's matmuls run in float16 / bfloat16 / float32 as the precision says"""
    expected = {"fp16": "torch.float16", "bf16": "torch.bfloat16", "fp32": "torch.float32"}
    for precision, dtype in expected.items():
        spec = {"seed": seed % 10**6, "precision": precision, "microbatches": 2, "updates": 1}
        if precision == "fp16":
            spec["scaler"] = {"init_scale": 256.0}
        got = value_of(student.scenario("training_steps", spec), FILE)
        expect(got["forward_dtypes"] == [dtype],
               f"precision '{precision}': the first Linear layer produced {got['forward_dtypes']}, "
               f"expected [{dtype!r}].")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 13: on return every param.grad is None, after a step and after a skip.")
def test_gradients_cleared_on_return(student, seed):
    """no gradient is left behind, on the step path and the skip path"""
    spec = {"seed": seed % 10**6, "precision": "fp16", "microbatches": 2, "updates": 2,
            "scaler": {"init_scale": 512.0}, "inject": {"1": {"microbatch": 0, "value": "inf"}}}
    got = value_of(student.scenario("training_steps", spec), FILE)
    for index, left in enumerate(got["grads_left"]):
        expect(left == 0, f"after update {index + 1} ({'skip' if index else 'step'}), {left} parameters still "
                          f"hold a gradient.")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 10 (validation): unknown precision, fp16 without an enabled GradScaler, and fp32/bf16 "
                  "with an enabled one raise ValueError before anything is changed.")
def test_rejects_bad_precision_and_scaler(student, seed):
    """invalid precision/scaler combinations raise ValueError and leave the model untouched"""
    cases = ["unknown_precision", "fp16_without_scaler", "fp16_disabled_scaler", "fp32_with_scaler",
             "bf16_with_scaler"]
    got = value_of(student.scenario("training_step_errors", {"seed": seed % 10**6, "cases": cases,
                                                              "bad_precision": "fp8"}), FILE)
    upper = value_of(student.scenario("training_step_errors", {"seed": seed % 10**6, "bad_precision": "FP16",
                                                                "cases": ["unknown_precision"]}), FILE)
    got["unknown_precision (FP16)"] = upper["unknown_precision"]
    for case in list(got):
        outcome = got[case]
        expect(raised_is(outcome["raised"], "ValueError"),
               f"{case.replace('_', ' ')}: expected ValueError, got "
               f"{describe_raised(outcome['raised'])}.")
        expect(outcome["unchanged"] and outcome["step_calls"] == 0,
               f"{case.replace('_', ' ')}: the parameters changed before the error was raised.")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 10-11 (weights): one per microbatch, each >= 0, summing to 1; otherwise ValueError "
                  "(the stub checks them with _check_weights before the loop).")
def test_rejects_bad_weights(student, seed):
    """wrong-length, negative and non-normalised weights raise ValueError"""
    cases = ["weights_wrong_length", "weights_negative", "weights_not_summing_to_one"]
    got = value_of(student.scenario("training_step_errors", {"seed": seed % 10**6, "cases": cases}), FILE)
    for case in cases:
        raised = got[case]["raised"]
        expect(raised_is(raised, "ValueError"),
               f"{case.replace('_', ' ')}: expected ValueError, got {describe_raised(raised)}.")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 11-12: parameters that get no gradient (grad is None) are skipped by the finite "
                  "check and the norm.")
def test_parameters_without_gradient(student, seed):
    """a frozen layer (grad None) neither crashes the step nor changes the result"""
    spec = {"seed": seed % 10**6, "precision": "fp16", "microbatches": 2, "updates": 1, "frozen_layer": True,
            "scaler": {"init_scale": 1024.0}}
    got, want = run_both(student, spec)
    compare_updates(got, want, spec)


@pytest.mark.points(1)
@pytest.mark.hint("Return exactly the contract's keys with their types: stepped bool, reason str, grad_norm "
                  "float, scale_before/scale_after float, num_microbatches int.")
def test_report_types(student, seed):
    """the returned dict has the contract's keys and types"""
    spec = {"seed": seed % 10**6, "precision": "fp32", "microbatches": 3, "updates": 1}
    got, _ = run_both(student, spec)
    report = got["reports"][0]
    expect(isinstance(report["stepped"], bool), "stepped should be a bool.")
    expect(isinstance(report["reason"], str), "reason should be a str.")
    for key in ("grad_norm", "scale_before", "scale_after"):
        expect(isinstance(report[key], float), f"{key} should be a Python float, got "
                                               f"{type(report[key]).__name__}.")
    expect(isinstance(report["num_microbatches"], int) and not isinstance(report["num_microbatches"], bool)
           and report["num_microbatches"] == 3, "num_microbatches should be the int 3.")
