"""Visible tests for amp_training_step: a plain FP32 update and an FP16 skip."""
import math

import pytest
import torch.nn.functional as F

from autograder import scenarios
from autograder.judge import expect, expect_relative_error, value_of

pytestmark = [pytest.mark.module("amp_training_step"), pytest.mark.visibility("visible")]
FILE = "amp_training_step.py"


def plain_fp32_update(spec):
    """What an fp32 step on the mean loss gives (no autocast, no scaler, clip not binding)."""
    model = scenarios.build_model(spec["seed"])
    optimizer = scenarios.build_optimizer("sgd", model.parameters(), 0.2)
    batches = scenarios.build_batches(spec["seed"], spec["microbatches"])
    loss = sum(F.mse_loss(model(inputs), targets) for inputs, targets in batches) / len(batches)
    loss.backward()
    optimizer.step()
    return scenarios.parameters_of(model)


@pytest.mark.points(3)
@pytest.mark.hint("TODO 11-13: forward, backward, clip, step; return the contract's dict.")
def test_fp32_update_matches_plain_training(student):
    """fp32, two microbatches: same parameters and report as a plain training step"""
    spec = {"seed": 11, "precision": "fp32", "microbatches": 2, "updates": 1, "max_norm": 100.0}
    got = value_of(student.scenario("training_steps", spec), FILE)
    report = got["reports"][0]
    expect(isinstance(report, dict) and report.get("stepped") is True,
           f"the report should say stepped=True, got {report!r}")
    expect(got["step_calls"] == [1], f"optimizer.step should run once, ran {got['step_calls'][0]} times")
    expect_relative_error(got["parameters"], plain_fp32_update(spec), "parameters after the update", 1e-5)


@pytest.mark.points(3)
@pytest.mark.hint("TODO 12-13: an inf gradient under fp16 must skip the step and back the scale off.")
def test_fp16_overflow_skips(student):
    """fp16 with an inf input: no step, parameters unchanged, scale halved"""
    spec = {"seed": 12, "precision": "fp16", "microbatches": 2, "updates": 1,
            "scaler": {"init_scale": 1024.0}, "inject": {"0": {"microbatch": 1, "value": "inf"}}}
    got = value_of(student.scenario("training_steps", spec), FILE)
    report = got["reports"][0]
    expect(isinstance(report, dict), f"train_step should return a dict, got {report!r}")
    expect(report.get("stepped") is False, f"stepped should be False, got {report.get('stepped')!r}")
    expect(report.get("reason") == "non_finite_gradient", f"reason: got {report.get('reason')!r}")
    expect(isinstance(report.get("grad_norm"), float) and math.isinf(report["grad_norm"]),
           f"grad_norm should be inf, got {report.get('grad_norm')!r}")
    expect(report.get("scale_before") == 1024.0 and report.get("scale_after") == 512.0,
           f"scale_before/scale_after should be 1024.0/512.0, got "
           f"{report.get('scale_before')!r}/{report.get('scale_after')!r}")
    expect(got["step_calls"] == [0], "optimizer.step ran although the gradient was not finite")
    untouched = scenarios.parameters_of(scenarios.build_model(spec["seed"]))
    expect_relative_error(got["parameters"], untouched, "parameters (a skipped step leaves them)", 0.0)
