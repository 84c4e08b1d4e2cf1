"""Hidden tests for amp_update, TODO 1 and 2 (TODO 3, the plan, is in
test_hidden_amp_update_plan.py). Inputs are drawn from the test's seed;
expected values are computed after the student's call, in float64, by the checks in
amp_update_checks next to this file.

A plan test (TODO 3) runs its checks inside blaming_upstream: when the student's own
unscale_gradients or global_grad_norm is wrong on the very same gradients, the
failure is blamed on that TODO (1 or 2); otherwise the plan itself is at fault."""
import math
import random

import pytest
import torch

from autograder.assignment.checks.amp_update_checks import (FILE, check_gradients, draw_gradients,
                                                            every_dtype_and_shape, expect_inputs_untouched, expect_norm_value,
                                                            flat_norm,
                                                            kind_of, norm_candidates,
                                                            norm_of, scale_factors, squares_in_own_dtype,
                                                            unscaled_reference)
from autograder.authoring import _, expect, hint_only_if, raised_instead, raised_type, value_of

pytestmark = [pytest.mark.module("amp_update"), pytest.mark.visibility("hidden")]


# -- TODO 1: unscale_gradients -----------------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(1)
@pytest.mark.hint(_("unscale_gradients: divide every gradient by scale (not multiply), and keep each "
                    "tensor's dtype and shape, 0-dim ones included: the result is what GradScaler.unscale_ gives."))
def test_unscale_values_every_dtype(student, seed):
    """unscale_gradients divides every dtype and shape by a non-power-of-two scale, as GradScaler.unscale_ does"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale = rng.uniform(50.0, 5000.0)
    scaled = every_dtype_and_shape(gen, scale)
    result = value_of(student.call("unscale_gradients", scaled, scale), FILE)
    check_gradients(result, unscaled_reference(scaled, scale), _("the returned gradients"), scale_factors(scale))
    # the same against torch.amp.GradScaler('cpu').unscale_ itself
    init_scale = float(2 ** rng.randint(3, 16))
    parameter = torch.nn.Parameter(torch.randn(6, generator=gen))
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale)
    scaler.scale(parameter.square().sum()).backward()
    scaled = parameter.grad.detach().clone()
    local = value_of(student.call("unscale_gradients", [scaled], init_scale), FILE)
    scaler.unscale_(torch.optim.SGD([parameter], lr=0.1))
    check_gradients(local, [parameter.grad.detach().clone()], _("unscale_gradients vs GradScaler.unscale_"),
                    scale_factors(init_scale))


@pytest.mark.points(1)
@pytest.mark.todo(1)
@pytest.mark.hint(_("unscale_gradients: keep scale a Python number. 65536 does not fit in FP16 (its maximum "
                    "is 65504): as an FP16 tensor it becomes inf, and g / inf = 0."))
def test_unscale_with_scale_above_fp16_range(student, seed):
    """unscale_gradients with GradScaler's usual scale 65536 (above the FP16 maximum) keeps FP16 gradients right"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    for scale in (65536.0, float(2 ** rng.randint(17, 20))):
        scaled = [(torch.rand(n, generator=gen) * 60000.0 - 30000.0).to(dtype)
                  for n, dtype in ((9, torch.float16), (5, torch.bfloat16), (4, torch.float16), (6, torch.float32))]
        scaled.insert(2, None)
        result = value_of(student.call("unscale_gradients", scaled, scale), FILE)
        check_gradients(result, unscaled_reference(scaled, scale),
                        _("unscale_gradients(gradients, scale={scale:g})", scale=scale), scale_factors(scale))


@pytest.mark.points(1)
@pytest.mark.todo(1)
@pytest.mark.hint(_("unscale_gradients: the result has one entry per input (an empty list gives an empty "
                    "list), and None stays None in its place: a frozen parameter has no gradient."))
def test_unscale_keeps_none_in_place(student, seed):
    """unscale_gradients keeps None entries where they are, first and last included, and maps [] to []"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale = float(2 ** rng.randint(3, 12))
    for gradients in ([], [None, None]):
        result = value_of(student.call("unscale_gradients", gradients, scale), FILE)
        check_gradients(result, list(gradients), _("unscale_gradients({gradients}, scale)",
                                                   gradients=repr(gradients)))
    scaled = [None] + draw_gradients(gen, 6) + [None]
    result = value_of(student.call("unscale_gradients", scaled, scale), FILE)
    check_gradients(result, unscaled_reference(scaled, scale), _("the returned gradients"), scale_factors(scale))


@pytest.mark.points(1)
@pytest.mark.todo(1)
@pytest.mark.hint(_("unscale_gradients: build new tensors (g / scale) in a new list; never divide in place "
                    "(div_, /=) and never assign into the input list."))
def test_unscale_leaves_inputs_untouched(student, seed):
    """unscale_gradients modifies neither the input list nor its tensors"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scaled = draw_gradients(gen, 7, magnitude=100.0)
    scale = rng.uniform(3.0, 300.0)
    outcome = student.call_watching_inputs("unscale_gradients", scaled, scale)
    check_gradients(value_of(outcome, FILE), unscaled_reference(scaled, scale), _("the returned gradients"),
                    scale_factors(scale))
    expect_inputs_untouched(outcome.args_after[0] if outcome.args_after else None, scaled, scale)
    # Identity does not survive the wire: the worker checks it (scenarios_update.unscale_aliasing).
    for check_scale in (1.0, scale):
        seen = value_of(student.scenario("unscale_aliasing", {"seed": seed % 10**6, "scale": check_scale}), FILE)
        expect(not seen["same_list"] and not any(seen["shared"]),
               _("unscale_gradients(..., scale={scale:g}) returned the input list, or tensors that share memory "
                 "with the inputs: build a new list of new tensors, also when scale is 1.", scale=check_scale))


@pytest.mark.points(1)
@pytest.mark.todo(1)
@pytest.mark.hint(_("unscale_gradients: any positive scale divides, also one below 1 (dividing by 0.25 "
                    "makes the gradients 4 times larger)."))
def test_unscale_accepts_scale_below_one(student, seed):
    """unscale_gradients divides by a scale below 1 too (scale 0.25 makes the gradients 4 times larger)"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    for scale in (0.25, rng.choice((0.5, 0.125, 0.75))):
        scaled = [torch.randn(5, generator=gen), None, torch.randn(3, generator=gen).half(),
                  torch.randn((), generator=gen).bfloat16()]
        result = value_of(student.call("unscale_gradients", scaled, scale), FILE)
        check_gradients(result, unscaled_reference(scaled, scale),
                        _("unscale_gradients(gradients, scale={scale:g})", scale=scale), scale_factors(scale))


@pytest.mark.points(1)
@pytest.mark.todo(1)
@pytest.mark.hint(_("unscale_gradients: scale <= 0 is invalid and must raise ValueError (the given check "
                    "at the top of the function does this: keep it)."))
def test_unscale_rejects_non_positive_scale(student, seed):
    """unscale_gradients raises ValueError for scale 0 and a negative scale, and returns a list for a positive one"""
    result = value_of(student.call("unscale_gradients", [torch.ones(3)], 0.25), FILE)
    expect(isinstance(result, list) and len(result) == 1,
           _("unscale_gradients([ones(3)], scale=0.25) should return a list of 1 entry, got {got}.", got=kind_of(result)))
    for scale in (0.0, -random.Random(seed).uniform(0.5, 100.0)):
        outcome = student.call("unscale_gradients", [torch.ones(3)], scale)
        raised = raised_type(outcome, FILE)
        expect(raised == "ValueError", _("unscale_gradients([ones(3)], scale={scale:g}) should raise ValueError, "
                                         "but {outcome}.", scale=scale, outcome=raised_instead(raised)))


# -- TODO 2: global_grad_norm ------------------------------------------------------------------
@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: one norm over all tensors together, sqrt(sum of all squares): not a "
                    "per-tensor norm, a sum of norms or a maximum. Add to the running sum, do not replace it."))
def test_global_norm_is_global(student, seed):
    """global_grad_norm is one L2 norm over all tensors, skipping None"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    gradients = draw_gradients(gen, 8, dtypes=(torch.float32,), magnitude=rng.uniform(0.5, 20))
    norm = norm_of(student, gradients)
    expect_norm_value(norm, flat_norm(gradients), _("the norm"), norm_candidates(gradients), rel_tol=2e-6)


@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: convert each gradient to FP32 before squaring: FP16 squares above "
                    "65504 overflow to inf."))
def test_global_norm_fp16_squares_in_fp32(student, seed):
    """global_grad_norm of FP16 gradients whose squares exceed the FP16 range stays finite"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    gradients = [(torch.rand(rng.randint(20, 60), generator=gen) * 200 + 300).half() for _index in range(3)]
    # and one whose norm FP16 cannot hold closely (29047.4 -> 29040), larger than the others together:
    # a norm taken in FP16 and squared afterwards is off at every seed, not only where the draw rounds badly
    gradients.insert(rng.randrange(4), torch.full((15,), 7500.0, dtype=torch.float16))
    norm = norm_of(student, gradients)
    with hint_only_if(squares_in_own_dtype(float(norm), gradients)):
        expect_norm_value(norm, flat_norm(gradients), _("the norm of finite FP16 gradients"),
                          norm_candidates(gradients))


@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: accumulate BF16 squares in FP32; BF16 keeps only 8 bits of mantissa, "
                    "so a BF16 sum loses precision."))
def test_global_norm_bf16_accumulates_in_fp32(student, seed):
    """global_grad_norm of many BF16 values is accurate to FP32 precision"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    while True:
        gradients = [(torch.rand(rng.randint(300, 900), generator=gen) + 0.5).bfloat16() for _index in range(4)]
        squares = flat_norm(gradients) ** 2
        # keep draws whose sum of squares BF16 cannot represent closely
        if abs(float(torch.tensor(squares).bfloat16()) - squares) / squares > 5e-4:
            break
    # and one that outweighs them, whose BF16 squares (35.5² = 1260.25 -> 1264) and BF16 norm
    # (1506.1 -> 1504) both round far off: any BF16 rounding on the way shows at every seed
    gradients.insert(rng.randrange(5), torch.full((1800,), 35.5, dtype=torch.bfloat16))
    squares = flat_norm(gradients) ** 2
    norm = norm_of(student, gradients)
    with hint_only_if(squares_in_own_dtype(float(norm), gradients)):
        expect_norm_value(norm, math.sqrt(squares), _("the norm of BF16 gradients"), norm_candidates(gradients),
                          rel_tol=2e-5)


@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: whatever the gradients' dtype, return a 0-dim torch.float32 tensor (the FP32 "
                    "sum's square root, not converted back); with nothing to add it is a 0-dim FP32 zero, and None "
                    "entries are skipped."))
def test_global_norm_is_fp32_scalar(student, seed):
    """global_grad_norm is a 0-dim FP32 tensor for FP16-only, BF16-only and mixed lists, and 0 for nothing or None"""
    gen = torch.Generator().manual_seed(seed)
    cases = ([torch.randn(5, generator=gen).half(), torch.randn((), generator=gen).half()],
             [torch.randn((2, 3), generator=gen).bfloat16(), None, torch.randn((), generator=gen).bfloat16()],
             [torch.randn((), generator=gen), torch.randn(4, generator=gen).half(),
              torch.randn(3, generator=gen).bfloat16()])
    for gradients in cases:
        norm = norm_of(student, gradients)
        expect_norm_value(norm, flat_norm(gradients), _("the norm"), norm_candidates(gradients))
    for gradients, label in (([], "[]"), ([None, None], "[None, None]"), ([None, torch.zeros(3)], "[None, zeros(3)]")):
        norm = norm_of(student, gradients)
        expect(float(norm) == 0.0, _("global_grad_norm({case}) should be 0, got {got:.6g}.", case=label,
                                     got=float(norm)))
    norm = norm_of(student, [None, torch.tensor([0.0, 2.0])])
    expect(float(norm) == 2.0, _("global_grad_norm([None, [0, 2]]) should be 2, got {got:.6g}.", got=float(norm)))


@pytest.mark.points(1)
@pytest.mark.todo(2)
@pytest.mark.hint(_("global_grad_norm: the norm of gradients that hold inf or NaN is not finite (inf, or NaN): keep "
                    "the plain sum of squares, do not replace it with a sentinel such as -1 or 0."))
def test_global_norm_of_non_finite_gradients(student, seed):
    """global_grad_norm of gradients holding inf or NaN is not finite"""
    gen = torch.Generator().manual_seed(seed)
    for poison in (math.inf, -math.inf, math.nan):
        gradients = draw_gradients(gen, 3, dtypes=(torch.float32,), magnitude=2.0)
        target = gradients[-1]  # the last tensor (a None sits between): a check of the first one misses it
        target.view(-1)[int(torch.randint(target.numel(), (), generator=gen))] = poison
        norm = norm_of(student, gradients)
        expect(not math.isfinite(float(norm)),
               _("global_grad_norm of gradients holding one {value} returned {got:.6g}: the norm of a non-finite "
                 "gradient is not finite (the plan skips before it ever asks for a norm, so nothing else needs a "
                 "finite stand-in).", value=str(poison), got=float(norm)))
