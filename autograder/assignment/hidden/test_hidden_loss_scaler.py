"""Hidden tests for loss_scaler, TODO 4 (update_scale) and TODO 5 (scale): the
expected values come from the real torch.amp.GradScaler('cpu') run here, in the
judge. The tests of TODO 6-9 are in test_hidden_loss_scaler_scaler.py, the
judging helpers of both in checks/loss_scaler_checks.py.
"""
import math
import random

import pytest
import torch

from autograder.assignment.checks import references
from autograder.assignment.checks.loss_scaler_checks import (
    FILE,
    SCALE,
    UPDATE_SCALE,
    call_text,
    expect_pair,
    gradscaler_rule,
    raised_text,
    shown,
    update,
)
from autograder.authoring import (_, expect, expect_close, numbers_message, raised_instead, raised_type,
                                  value_of)

pytestmark = [pytest.mark.module("loss_scaler"), pytest.mark.visibility("hidden")]


@pytest.fixture(autouse=True, scope="module")
def built_by_hand(no_delegation):
    """Every loss_scaler test first checks that the module does not delegate."""


# -- TODO 4: update_scale ---------------------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(4)
@pytest.mark.hint(_("update_scale: the tracker counts clean iterations; the scale grows exactly when tracker + 1 == "
                    "growth_interval, and the tracker then restarts at 0."))
def test_update_scale_growth_interval(student, seed):
    """update_scale grows the scale exactly every growth_interval clean iterations"""
    rng = random.Random(seed)
    interval, growth = rng.randint(3, 8), 4.0
    options = {"growth_factor": growth, "backoff_factor": 0.5, "growth_interval": interval}
    scale, tracker = float(2 ** rng.randint(4, 16)), 0
    want_scale, want_tracker = scale, 0
    for _step in range(2 * interval + 1):
        call = call_text(scale, tracker, False, options)
        scale, tracker = update(student, scale, tracker, False, **options)
        want_tracker += 1
        if want_tracker == interval:
            want_scale, want_tracker = want_scale * growth, 0
        expect_pair((scale, tracker), (want_scale, want_tracker), call)


@pytest.mark.points(1)
@pytest.mark.todo(4)
@pytest.mark.hint(_("update_scale: found_inf multiplies the scale by backoff_factor and resets the tracker to 0, "
                    "whatever the tracker was."))
def test_update_scale_backoff_resets_tracker(student, seed):
    """update_scale backs off and resets the growth tracker on found_inf"""
    rng = random.Random(seed)
    # never 0.5: a backoff hard-coded to GradScaler's default must fail whatever the seed
    scale, tracker, backoff = rng.uniform(10.0, 1e5), rng.randint(1, 50), rng.choice([0.25, 0.3, 0.125, 0.75])
    options = {"growth_factor": 2.0, "backoff_factor": backoff, "growth_interval": 100}
    got = update(student, scale, tracker, True, **options)
    expect(math.isclose(got[0], scale * backoff, rel_tol=1e-6),
           numbers_message(_("the scale after {call}", call=call_text(scale, tracker, True, options)), got[0],
                           scale * backoff, {_("1/backoff_factor"): 1 / backoff, _("backoff_factor"): backoff}),
           UPDATE_SCALE)
    expect(got[1] == 0, _("found_inf should reset the growth tracker to 0, got {got} after {call}.", got=got[1],
                          call=call_text(scale, tracker, True, options)), UPDATE_SCALE)


@pytest.mark.points(1)
@pytest.mark.todo(4)
@pytest.mark.hint(_("update_scale: keep the grown scale only if it is finite as a Python float (math.isfinite), and "
                    "reset the tracker to 0 anyway."))
def test_update_scale_never_grows_to_inf(student):
    """update_scale refuses to grow 1e308 by 10 (inf) but keeps 1e301, finite as a Python float"""
    options = {"growth_factor": 10.0, "backoff_factor": 0.5, "growth_interval": 1}
    for scale, want in ((1e308, (1e308, 0)), (1e300, (1e301, 0))):
        got = update(student, scale, 0, False, **options)
        expect(math.isfinite(got[0]), _("{call} grew the scale to {got}.", call=call_text(scale, 0, False, options),
                                        got=shown(got[0])), UPDATE_SCALE)
        expect_pair(got, want, call_text(scale, 0, False, options))


@pytest.mark.points(1)
@pytest.mark.todo(4)
@pytest.mark.hint(_("update_scale: the argument checks are given; after them comes the rule, and with "
                    "growth_interval 1 every clean iteration grows the scale and leaves the tracker at 0."))
def test_update_scale_rejects_invalid_arguments(student):
    """update_scale raises ValueError for each invalid argument and accepts valid edge values"""
    good = dict(scale=1024.0, growth_tracker=0, found_inf=False, growth_factor=2.0, backoff_factor=0.5,
                growth_interval=10)
    edge = dict(good, scale=1e-30, growth_factor=1.0001, backoff_factor=0.999, growth_interval=1)
    got = update(student, **edge)
    expect_pair(got, (1e-30 * 1.0001, 0), call_text(1e-30, 0, False, edge))
    bad_values = [("scale", math.inf), ("scale", math.nan), ("scale", 0.0), ("scale", -8.0),
                  ("growth_factor", 1.0), ("growth_factor", 0.5), ("backoff_factor", 0.0),
                  ("backoff_factor", 1.0), ("backoff_factor", 1.5), ("growth_interval", 0),
                  ("growth_interval", -3), ("growth_interval", 2.5), ("growth_tracker", -1)]
    for name, value in bad_values:
        raised = raised_type(student.call("update_scale", **dict(good, **{name: value})), FILE)
        expect(raised == "ValueError", _("update_scale with {name}={value} should raise ValueError, but {outcome}.",
                                         name=name, value=repr(value), outcome=raised_instead(raised)))


@pytest.mark.points(1)
@pytest.mark.todo(4)
@pytest.mark.hint(_("update_scale is one call of GradScaler's update rule for any tracker value: on found_inf, "
                    "backoff and tracker 0; otherwise tracker + 1, and growth (tracker back to 0) only when "
                    "tracker + 1 equals growth_interval exactly -- a tracker already past it just keeps counting."))
def test_update_scale_matches_gradscaler_rule(student, seed):
    """update_scale follows GradScaler's update for every tracker value, found_inf or not"""
    rng = random.Random(seed)
    # factors drawn so that each case differs from GradScaler's defaults, whatever the seed
    for growths, backoffs in (([3.0, 4.0], [0.25, 0.125]), ([2.0, 1.5], [0.5, 0.75])):
        interval = rng.randint(3, 6)
        options = {"growth_factor": rng.choice(growths), "backoff_factor": rng.choice(backoffs),
                   "growth_interval": interval}
        scale = float(2 ** rng.randint(3, 12) * rng.choice([1, 3]))
        # Fixed structure, drawn values: every seed meets the edges (tracker + 1 == interval grows; a tracker
        # at or past the interval keeps counting, also where tracker + 1 is a multiple of the interval).
        trackers = [0, interval - 2, interval - 1, interval, 2 * interval - 1, interval + rng.randint(1, 5)]
        for tracker in trackers:
            for found_inf in (False, True):
                want = gradscaler_rule(scale, tracker, found_inf, **options)
                got = update(student, scale, tracker, found_inf, **options)
                expect_pair(got, want, call_text(scale, tracker, found_inf, options))
    options = {"growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 1}
    for found_inf in (False, True):
        want = gradscaler_rule(256.0, 0, found_inf, **options)
        expect_pair(update(student, 256.0, 0, found_inf, **options), want, call_text(256.0, 0, found_inf, options))


# -- TODO 5: scale ------------------------------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(5)
@pytest.mark.hint(_("scale: multiply the loss by the scale held as a 0-dim FP32 tensor on the loss's device (type "
                    "promotion then gives GradScaler's dtype for every loss); do not change the loss in place, and "
                    "keep the result connected to the graph so that backward reaches the loss."))
def test_scale_promotes_like_gradscaler(student, seed):
    """scale(loss) gives GradScaler's value, dtype and gradient for losses of several shapes and dtypes"""
    rng = random.Random(seed)
    cases = [{"dtype": "float16", "shape": [], "value": rng.uniform(1.5, 3.0), "scaler": {"init_scale": 65536.0}},
             {"dtype": "float32", "shape": [3], "value": rng.uniform(0.1, 5.0)},
             {"dtype": "float16", "shape": [3], "value": rng.uniform(0.1, 1.0), "backward": True},
             {"dtype": "bfloat16", "shape": [2, 2], "value": rng.uniform(0.1, 5.0), "backward": True},
             {"dtype": "float64", "shape": [], "value": rng.uniform(0.1, 5.0), "backward": True},
             {"dtype": "float32", "shape": [], "value": rng.uniform(0.1, 5.0), "backward": True}]
    for spec in cases:
        spec.setdefault("scaler", {"init_scale": float(2 ** rng.randint(3, 10))})
        got = value_of(student.scenario("scaler_scale_loss", spec), FILE)
        want = references.with_gradscaler("scaler_scale_loss", spec)
        label = _("scale() of a {dtype} loss of shape {shape}", dtype=spec["dtype"], shape=str(tuple(spec["shape"])))
        scaled = got["scaled"]
        expect(torch.is_tensor(scaled), _("{what} should return a tensor, got {got}.", what=label,
                                          got=type(scaled).__name__), SCALE)
        expect(scaled.dtype == want["scaled"].dtype,
               _("{what} should have dtype {want} (GradScaler's), got {got}.", what=label,
                 want=str(want["scaled"].dtype), got=str(scaled.dtype)), SCALE)
        expect_close(scaled, want["scaled"], label, 1e-6, 0.0, reveal=True, todo=SCALE)
        expect(torch.equal(got["loss_after"], want["loss_after"]),
               _("{what} changed the loss itself: scale() must return a new tensor, not multiply in place.",
                 what=label), SCALE)
        if spec.get("backward"):
            expect(got["backward_error"] is None and got["input_grad"] is not None,
                   _("{what}: backward() through the scaled loss did not reach the loss ({error}): the scaled loss "
                     "must stay connected to the graph.", what=label, error=raised_text(got["backward_error"])),
                   SCALE)
            expect_close(got["input_grad"], want["input_grad"], _("the gradient reaching the loss through {what}",
                                                                  what=label), 1e-6, 0.0, reveal=True, todo=SCALE)
