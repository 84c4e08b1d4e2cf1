"""Visible tests for loss_scaler: the update rule and one skipped step."""
import pytest
import torch

from autograder import scenarios
from autograder.judge import expect, expect_relative_error, value_of

pytestmark = [pytest.mark.module("loss_scaler"), pytest.mark.visibility("visible")]
FILE = "loss_scaler.py"


@pytest.fixture(autouse=True)
def built_by_hand(no_delegation):
    """Every loss_scaler test first checks that the module does not delegate."""


@pytest.mark.points(3)
@pytest.mark.hint("TODO 4 (update_scale): count clean iterations; grow when the count reaches growth_interval; "
                  "back off and reset on inf.")
def test_update_scale_sequence(student):
    """update_scale: start 4, interval 2 -> (4, 1), (8, 0), then inf -> (2, 0)"""
    options = dict(growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
    scale, tracker = 4.0, 0
    for found_inf, expected in ((False, (4.0, 1)), (False, (8.0, 0)), (True, (2.0, 0))):
        result = value_of(student.call("update_scale", scale, tracker, found_inf, **options), FILE)
        expect(isinstance(result, (tuple, list)) and len(result) == 2,
               f"update_scale should return (scale, growth_tracker), got {result!r}")
        expect(tuple(result) == expected,
               f"update_scale({scale}, {tracker}, found_inf={found_inf}) returned {tuple(result)}, "
               f"expected {expected}")
        scale, tracker = result


@pytest.mark.points(3)
@pytest.mark.hint("TODO 6-8 (unscale_/step/update): an inf gradient must skip optimizer.step and halve the scale.")
def test_skip_on_inf_matches_gradscaler(student):
    """three iterations with an inf gradient in the second: same as GradScaler('cpu')"""
    spec = {"seed": 5, "iterations": 3, "inject": {"1": "inf"},
            "scaler": {"init_scale": 128.0, "growth_interval": 1}}
    got = value_of(student.scenario("scaler_training", spec), FILE)
    want = scenarios.scaler_training(lambda **kw: torch.amp.GradScaler("cpu", **kw), spec)
    expect(got["scales"] == want["scales"],
           f"scale after each update: got {got['scales']}, GradScaler gives {want['scales']}")
    expect(got["step_returns"] == want["step_returns"],
           f"step() return values: got {got['step_returns']}, GradScaler gives {want['step_returns']} "
           f"(None means skipped)")
    expect_relative_error(got["parameters"], want["parameters"], "parameters", 1e-5)
