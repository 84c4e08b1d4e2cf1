"""Hidden tests for amp_update, TODO 3 (plan_mixed_precision_update). Inputs are
drawn from the test's seed; expected values are computed after the student's call,
in float64, by the checks in amp_update_checks.

A plan test runs its checks inside blaming_upstream: when the student's own
unscale_gradients or global_grad_norm is wrong on the very same gradients, the
failure is blamed on that TODO (1 or 2); otherwise the plan itself is at fault."""
import math
import random

import pytest
import torch

from autograder.assignment.checks.amp_update_checks import (FILE, PLAN_KEYS, blaming_upstream,
                                                            check_gradients, draw_gradients,
                                                            every_dtype_and_shape, expect_finite_plan,
                                                            expect_inputs_untouched, expect_number, expect_skip_plan, flat_norm,
                                                            grad_norm_value, kind_of, plan_of, plan_value, unscaled_reference)
from autograder.authoring import _, expect, numbers_message, raised_instead, raised_type

pytestmark = [pytest.mark.module("amp_update"), pytest.mark.visibility("hidden")]


# -- TODO 3: plan_mixed_precision_update ---------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("finite check: look at every element of every tensor (BF16 too) for NaN, +inf and -inf "
                    "(torch.isfinite(...).all()), not only the first tensor and not only one kind."))
def test_plan_catches_every_non_finite_value(student, seed):
    """plan skips on NaN, +inf or -inf in any element of any gradient, BF16 and 0-dim ones included"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    # each kind in another place and dtype, never in the first tensor or its first element
    for bad, dtype, shape, position in ((math.nan, torch.float32, (6,), 1), (math.inf, torch.float16, (6,), 5),
                                        (-math.inf, torch.float32, (2, 3), 3), (math.nan, torch.bfloat16, (6,), 4),
                                        (math.inf, torch.bfloat16, (), 6)):
        gradients = draw_gradients(gen, 5, dtypes=(torch.float32, torch.float16), magnitude=64.0)
        target = (torch.randn(shape, generator=gen) * 64).to(dtype)
        if shape:
            target.view(-1)[rng.randrange(1, target.numel())] = bad
        else:
            target.fill_(bad)
        gradients.insert(position, target)
        plan = plan_of(student, gradients, 64.0, 1.0)
        with blaming_upstream(student, gradients, 64.0):
            expect(plan["should_step"] is False,
                   _("a single {bad} in gradients[{position}] ({dtype}) did not skip the step: should_step is "
                     "{got!r}.", bad=repr(bad), position=position, dtype=str(dtype), got=plan["should_step"]))
            expect(plan["reason"] == "non_finite_gradient",
                   _("reason should be 'non_finite_gradient', got {got!r}.", got=plan["reason"]))


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("skip branch: return the unscaled (not clipped) gradients, grad_norm inf, "
                    "clip_coefficient 0.0 and next_scale = scale * backoff_factor (the one passed in), the scale "
                    "GradScaler.update() backs off to."))
def test_plan_skip_result(student, seed):
    """a skipped plan returns unscaled gradients, inf norm, coefficient 0.0 and the backed-off scale, GradScaler's"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale, backoff = rng.uniform(100.0, 70000.0), rng.choice((0.25, 0.125, 0.75, 0.3))
    gradients = draw_gradients(gen, 5, dtypes=(torch.float32,), magnitude=scale)
    gradients[0] = torch.tensor([1.0, math.inf, 3.0]) * scale
    plan = plan_of(student, gradients, scale, 1.0, backoff_factor=backoff)
    with blaming_upstream(student, gradients, scale):
        expect_skip_plan(plan, gradients, scale, backoff)
    # the same backoff as torch.amp.GradScaler('cpu').update() after an overflow
    init_scale = float(2 ** rng.randint(3, 16))
    gradients = [torch.full((2,), math.inf)]
    plan = plan_of(student, gradients, init_scale, 1.0)
    overflow = torch.nn.Parameter(torch.ones(2))
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, backoff_factor=0.5)
    scaler.scale(overflow.square().sum()).backward()
    overflow.grad.fill_(math.inf)
    scaler.step(torch.optim.SGD([overflow], lr=0.1))
    scaler.update()
    with blaming_upstream(student, gradients, init_scale):
        expect(plan["should_step"] is False,
               _("GradScaler skips this step (its gradient is inf), but should_step is {got!r}.",
                 got=plan["should_step"]))
        expect(plan["next_scale"] == scaler.get_scale(),
               numbers_message(_("next_scale vs GradScaler's backed-off scale"), plan["next_scale"], scaler.get_scale(),
                               {_("2 (the scale was not backed off)"): 2.0}))


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("finite check: check the real (unscaled) gradients: an FP16 gradient divided by a scale "
                    "below 1 can overflow to inf."))
def test_plan_checks_unscaled_gradients(student, seed):
    """plan checks finiteness after unscaling (FP16 60000 at scale 0.5 overflows)"""
    rng = random.Random(seed)
    gradient = torch.tensor([rng.uniform(40000.0, 60000.0), 1.0]).half()
    plan = plan_of(student, [gradient], 0.5, 1.0)
    with blaming_upstream(student, [gradient], 0.5):
        expect(plan["should_step"] is False,
               _("{value:g} (FP16) / 0.5 is inf in FP16, so the step must be skipped; should_step is {got!r}.",
                 value=float(gradient[0]), got=plan["should_step"]))


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("clipping: coefficient = min(1, max_norm / (norm + 1e-12)) from the pre-clip global norm of "
                    "the real (unscaled) gradients; multiply every gradient by it; report the norm before clipping."))
def test_plan_clips_with_the_right_coefficient(student, seed):
    """a finite plan reports the pre-clip norm and clips every gradient by min(1, max_norm/norm)"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale = rng.uniform(10.0, 3000.0)
    gradients = draw_gradients(gen, 7, dtypes=(torch.float32,), magnitude=scale * rng.uniform(1, 5))
    max_norm = flat_norm(unscaled_reference(gradients, scale)) * rng.uniform(0.05, 0.8)
    plan = plan_of(student, gradients, scale, max_norm)
    with blaming_upstream(student, gradients, scale):
        expect_finite_plan(plan, gradients, scale, max_norm)


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("clipping: multiply each real gradient by the coefficient and keep its dtype and shape "
                    "(FP16 stays FP16, BF16 stays BF16, 0-dim stays 0-dim)."))
def test_plan_clipped_gradients_keep_dtype(student, seed):
    """on a finite step the clipped real-scale gradients keep their dtype and shape, FP16, BF16 and 0-dim included"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale = float(2 ** rng.randint(4, 10))
    gradients = every_dtype_and_shape(gen, scale)
    max_norm = flat_norm(unscaled_reference(gradients, scale)) * rng.uniform(0.1, 0.7)
    plan = plan_of(student, gradients, scale, max_norm)
    with blaming_upstream(student, gradients, scale):
        expect_finite_plan(plan, gradients, scale, max_norm)


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("clipping: the coefficient is min(1.0, max_norm / (norm + 1e-12)) exactly: 1.0 below max_norm "
                    "(the gradients are then the unscaled ones), and the 1e-12 keeps a zero norm from dividing by "
                    "zero and matters for tiny norms."))
def test_plan_clip_coefficient_formula(student, seed):
    """clip_coefficient is min(1, max_norm / (norm + 1e-12)): 1.0 below max_norm and for zero gradients, exact at tiny norms"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    gradients = draw_gradients(gen, 5, dtypes=(torch.float32,), magnitude=8.0)
    max_norm = flat_norm(unscaled_reference(gradients, 8.0)) * rng.uniform(1.5, 10.0)
    plan = plan_of(student, gradients, 8.0, max_norm)
    with blaming_upstream(student, gradients, 8.0):
        expect_finite_plan(plan, gradients, 8.0, max_norm)
        expect(plan["clip_coefficient"] == 1.0,
               _("clip_coefficient should be exactly 1.0 when the norm is below max_norm, got {got!r}.",
                 got=plan["clip_coefficient"]))
    zeros = [torch.zeros(4), None, torch.zeros((2, 2)).half()]
    plan = plan_of(student, zeros, 1024.0, rng.uniform(0.1, 5.0))
    with blaming_upstream(student, zeros, 1024.0):
        expect(plan["should_step"] is True and plan["clip_coefficient"] == 1.0,
               _("all-zero gradients should step with clip_coefficient 1.0 (max_norm / (0 + 1e-12) is huge, the "
                 "min makes it 1); got should_step {step!r}, clip_coefficient {got!r}.",
                 step=plan["should_step"], got=plan["clip_coefficient"]))
        check_gradients(plan["gradients"], [torch.zeros(4), None, torch.zeros((2, 2)).half()],
                        _("the gradients planned for all-zero input"))
    scale = float(2 ** rng.randint(6, 12))
    tiny = [torch.randn(6, generator=gen) * 1e-13 * scale, None, torch.randn((), generator=gen) * 1e-13 * scale]
    max_norm = flat_norm(unscaled_reference(tiny, scale)) * rng.uniform(0.2, 0.6)
    plan = plan_of(student, tiny, scale, max_norm)
    with blaming_upstream(student, tiny, scale):
        expect_finite_plan(plan, tiny, scale, max_norm, extra_rtol=1e-5)


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("finite check: check each element with torch.isfinite. A sum of an FP16 tensor can "
                    "overflow although every element is finite, and values above 65504 are fine in FP32 and BF16."))
def test_plan_steps_on_large_finite_gradients(student, seed):
    """plan steps on large but finite gradients (an FP16 sum overflows, BF16/FP32 values exceed 65504)"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    gradients = [(torch.rand(6, generator=gen) * 10000.0 + 20000.0).half(),
                 None, (torch.randn(5, generator=gen) * 1e5).bfloat16(), torch.randn(4, generator=gen) * 3e5]
    max_norm = flat_norm(unscaled_reference(gradients, 0.5)) * rng.uniform(0.1, 0.9)
    plan = plan_of(student, gradients, 0.5, max_norm)
    with blaming_upstream(student, gradients, 0.5):
        expect_finite_plan(plan, gradients, 0.5, max_norm)


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("plan result: on both branches a dict with exactly the keys gradients, grad_norm, "
                    "clip_coefficient, should_step, next_scale and reason; should_step a real bool (not a tensor), "
                    "clip_coefficient a Python float, grad_norm an FP32 tensor, next_scale a Python number."))
def test_plan_value_types(student, seed):
    """the plan has exactly the contract's keys and types on both branches, also for int scale and max_norm"""
    gen = torch.Generator().manual_seed(seed)
    # a finite step that always clips (real norm >= 4 > max_norm 1), a skip, and with ints one that never clips
    for gradients, scale in (([(torch.rand(4, generator=gen) + 1) * 8], 4.0), ([torch.tensor([math.nan, 1.0])], 4.0),
                             ([torch.rand(3, generator=gen) * 0.4], 4)):
        plan = plan_of(student, gradients, scale, 1.0 if isinstance(scale, float) else 1)
        extra = sorted(str(key) for key in plan if key not in PLAN_KEYS)
        expect(not extra, _("the plan has keys the contract does not define: {keys}.", keys=", ".join(extra)))
        with blaming_upstream(student, gradients, scale):
            expect(isinstance(plan["should_step"], bool),
                   _("should_step should be a bool, got {got}.", got=kind_of(plan["should_step"])))
            expect(isinstance(plan["clip_coefficient"], float),
                   _("clip_coefficient should be a Python float, got {got}.", got=kind_of(plan["clip_coefficient"])))
            grad_norm_value(plan)
            expect_number(plan["next_scale"], _("next_scale"))
            expect(plan["reason"] in ("finite_gradient", "non_finite_gradient"),
                   _("reason should be 'finite_gradient' or 'non_finite_gradient', got {got!r}.", got=plan["reason"]))
            if bool(torch.isfinite(gradients[0]).all()):
                expect_finite_plan(plan, gradients, scale, 1.0)
            else:
                expect_skip_plan(plan, gradients, scale, 0.5)


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("plan_mixed_precision_update must not modify the gradients it is given (neither the list "
                    "nor its tensors): work on the unscaled copies."))
def test_plan_leaves_inputs_untouched(student, seed):
    """plan modifies neither its input list nor its tensors, on a step and on a skip"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale = rng.uniform(10.0, 1000.0)
    finite = draw_gradients(gen, 6, magnitude=scale)
    skipped = draw_gradients(gen, 4, dtypes=(torch.float32,), magnitude=scale)
    skipped[2] = torch.tensor([2.0, math.nan, -1.0]) * scale
    for gradients, step in ((finite, True), (skipped, False)):
        outcome = student.call_watching_inputs("plan_mixed_precision_update", gradients, scale, 0.01)
        plan = plan_value(outcome)
        with blaming_upstream(student, gradients, scale):
            expect_inputs_untouched(outcome.args_after[0] if outcome.args_after else None, gradients, scale)
            expect(plan["should_step"] is step, _("should_step should be {want!r} for these gradients, got {got!r}.",
                                                  want=step, got=plan["should_step"]))


@pytest.mark.points(1)
@pytest.mark.todo(3)
@pytest.mark.hint(_("plan_mixed_precision_update: max_norm <= 0 (and scale <= 0) must raise ValueError; a tiny "
                    "positive max_norm is valid."))
def test_plan_rejects_invalid_arguments(student):
    """plan raises ValueError for max_norm 0, a negative max_norm and scale 0, not for valid ones"""
    plan = plan_of(student, [torch.ones(2)], 2.0, 1e-3)
    expect(plan["should_step"] is True,
           _("max_norm=0.001 is small but valid: should_step should be True, got {got!r}.", got=plan["should_step"]))
    for scale, max_norm in ((2.0, 0.0), (2.0, -1.0), (0.0, 1.0)):
        raised = raised_type(student.call("plan_mixed_precision_update", [torch.ones(2)], scale, max_norm), FILE)
        expect(raised == "ValueError", _("scale={scale:g}, max_norm={max_norm:g} should raise ValueError, but "
                                         "{outcome}.", scale=scale, max_norm=max_norm, outcome=raised_instead(raised)))
