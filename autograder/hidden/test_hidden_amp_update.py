"""Hidden tests for amp_update (TODO 1-3). Inputs are drawn from the test's seed;
expected values are computed here, after the student's call, in float64."""
import math
import random

import pytest
import torch

from autograder.judge import (Mistake, dtype_tolerance, expect, expect_close, expect_tensor,
                              raised_type, value_of)

pytestmark = [pytest.mark.module("amp_update"), pytest.mark.visibility("hidden")]
FILE = "amp_update.py"
DTYPES = (torch.float32, torch.float16, torch.bfloat16)
PLAN_KEYS = {"gradients", "grad_norm", "clip_coefficient", "should_step", "next_scale", "reason"}


SHAPES = ((7,), (3, 5), (2, 3, 4), (), (1, 9))


def draw_gradients(rng, gen, count, dtypes=DTYPES, magnitude=1.0, none_every=3):
    """A list of gradients with some None entries. Shapes, dtypes and None
    positions follow the index (the same cases every run); only the values come
    from the seed, so a given implementation passes or fails whatever the seed."""
    gradients = []
    for index in range(count):
        if none_every and index % none_every == 1:
            gradients.append(None)
            continue
        shape, dtype = SHAPES[index % len(SHAPES)], dtypes[index % len(dtypes)]
        gradients.append((torch.randn(shape, generator=gen) * magnitude).to(dtype))
    return gradients


def unscaled_reference(gradients, scale):
    return [None if g is None else (g.double() / scale).to(g.dtype) for g in gradients]


def flat_norm(gradients):
    squares = sum(float(g.double().square().sum()) for g in gradients if g is not None)
    return math.sqrt(squares)


def check_gradients(actual, expected, what):
    expect(isinstance(actual, list), f"{what} should be a list, got {type(actual).__name__}.")
    expect(len(actual) == len(expected), f"{what} should have {len(expected)} entries, got {len(actual)}.")
    for index, (a, e) in enumerate(zip(actual, expected)):
        if e is None:
            expect(a is None, f"{what}[{index}] should stay None (that parameter has no gradient).")
            continue
        expect(a is not None, f"{what}[{index}] is None but that parameter has a gradient.")
        expect_tensor(a, f"{what}[{index}]", dtype=e.dtype, shape=e.shape)
        rtol, atol = dtype_tolerance(e.dtype)
        expect_close(a, e, f"{what}[{index}] ({e.dtype})", rtol, atol)


def plan_of(student, *args, **kwargs):
    plan = value_of(student.call("plan_mixed_precision_update", *args, **kwargs), FILE)
    expect(isinstance(plan, dict), f"plan_mixed_precision_update should return a dict, got "
                                   f"{type(plan).__name__}.")
    missing, extra = PLAN_KEYS - set(plan), set(plan) - PLAN_KEYS
    expect(not missing and not extra,
           f"the plan's keys are wrong (missing: {sorted(missing)}, unexpected: {sorted(extra)}).")
    return plan


# -- TODO 1: unscale_gradients -----------------------------------------------------------
@pytest.mark.points(2)
@pytest.mark.hint("TODO 1 (unscale_gradients): every gradient is divided by scale (not multiplied), "
                  "keeping its dtype and shape.")
def test_unscale_values_every_dtype(student, seed):
    """unscale_gradients divides FP32, FP16 and BF16 gradients by a non-power-of-two scale"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale = rng.uniform(50.0, 5000.0)
    scaled = draw_gradients(rng, gen, 9, magnitude=scale, none_every=0)
    result = value_of(student.call("unscale_gradients", scaled, scale), FILE)
    check_gradients(result, unscaled_reference(scaled, scale), "the returned gradients")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 1 (unscale_gradients): the result has one entry per input, and None stays None "
                  "in its place (a frozen parameter has no gradient).")
def test_unscale_keeps_none_in_place(student, seed):
    """unscale_gradients keeps None entries where they are, first and last included"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scaled = [None] + draw_gradients(rng, gen, 6) + [None]
    scale = float(2 ** rng.randint(3, 12))
    result = value_of(student.call("unscale_gradients", scaled, scale), FILE)
    check_gradients(result, unscaled_reference(scaled, scale), "the returned gradients")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 1 (unscale_gradients): build new tensors (g / scale); never div_ in place or "
                  "reassign entries of the input list.")
def test_unscale_leaves_inputs_untouched(student, seed):
    """unscale_gradients modifies neither the input list nor its tensors"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scaled = draw_gradients(rng, gen, 7, magnitude=100.0)
    scale = rng.uniform(3.0, 300.0)
    outcome = student.call("unscale_gradients", scaled, scale)
    check_gradients(value_of(outcome, FILE), unscaled_reference(scaled, scale), "the returned gradients")
    after = outcome.args_after[0]
    expect(isinstance(after, list) and len(after) == len(scaled),
           "the input list was changed (entries added or removed).")
    for index, (a, e) in enumerate(zip(after, scaled)):
        expect((a is None) == (e is None) and (e is None or (a.dtype == e.dtype and torch.equal(a, e))),
               f"the input gradient at position {index} was modified by the call.")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 1 (unscale_gradients): scale <= 0 is invalid and must raise ValueError.")
def test_unscale_rejects_non_positive_scale(student, seed):
    """unscale_gradients raises ValueError for scale 0 and a negative scale, and accepts a small one"""
    small = value_of(student.call("unscale_gradients", [torch.ones(3)], 0.25), FILE)
    check_gradients(small, [torch.full((3,), 4.0)], "unscale_gradients([ones], 0.25)")
    for scale in (0.0, -random.Random(seed).uniform(0.5, 100.0)):
        outcome = student.call("unscale_gradients", [torch.ones(3)], scale)
        raised = raised_type(outcome, FILE)
        expect(raised == "ValueError", f"scale={scale:g} should raise ValueError, "
                                       f"got {raised or 'no exception'}.")


# -- TODO 2: global_grad_norm -------------------------------------------------------------
def norm_of(student, gradients):
    norm = value_of(student.call("global_grad_norm", gradients), FILE)
    expect_tensor(norm, "the norm", dtype=torch.float32, shape=())
    return norm


@pytest.mark.points(2)
@pytest.mark.hint("TODO 2 (global_grad_norm): one norm over all tensors together: "
                  "sqrt(sum of all squares), not a per-tensor norm, a sum of norms or a maximum.")
def test_global_norm_is_global(student, seed):
    """global_grad_norm is one L2 norm over all tensors, skipping None"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    gradients = draw_gradients(rng, gen, 8, dtypes=(torch.float32,), magnitude=rng.uniform(0.5, 20))
    norm = norm_of(student, gradients)
    expect_close(norm, torch.tensor(flat_norm(gradients)), "the norm", 2e-6, 0.0)


@pytest.mark.points(2)
@pytest.mark.hint("TODO 2 (global_grad_norm): convert each gradient to FP32 before squaring: FP16 "
                  "squares above 65504 overflow to inf.")
def test_global_norm_fp16_squares_in_fp32(student, seed):
    """global_grad_norm of FP16 gradients whose squares exceed the FP16 range stays finite"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    gradients = [(torch.rand(rng.randint(20, 60), generator=gen) * 200 + 300).half() for _ in range(3)]
    norm = norm_of(student, gradients)
    expect(bool(torch.isfinite(norm)), "the norm of finite FP16 gradients came out inf or NaN.")
    expect_close(norm, torch.tensor(flat_norm(gradients)), "the norm", 1e-5, 0.0)


@pytest.mark.points(1)
@pytest.mark.hint("TODO 2 (global_grad_norm): accumulate BF16 squares in FP32; BF16 keeps only "
                  "8 bits of mantissa, so a BF16 sum loses precision.")
def test_global_norm_bf16_accumulates_in_fp32(student, seed):
    """global_grad_norm of many BF16 values is accurate to FP32 precision"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    while True:
        gradients = [(torch.rand(rng.randint(300, 900), generator=gen) + 0.5).bfloat16() for _ in range(4)]
        squares = flat_norm(gradients) ** 2
        # keep draws whose sum of squares BF16 cannot represent closely
        if abs(float(torch.tensor(squares).bfloat16()) - squares) / squares > 5e-4:
            break
    norm = norm_of(student, gradients)
    expect_close(norm, torch.tensor(math.sqrt(squares)), "the norm", 2e-5, 0.0)


@pytest.mark.points(1)
@pytest.mark.hint("TODO 2 (global_grad_norm): with nothing to add the norm is a 0-dim FP32 zero.")
def test_global_norm_of_nothing_is_zero(student):
    """global_grad_norm of nothing (or of zeros) is a 0-dim FP32 zero; None entries are skipped"""
    for gradients in ([], [None, None], [None, torch.zeros(3)]):
        norm = norm_of(student, gradients)
        expect(float(norm) == 0.0, f"global_grad_norm({gradients}) should be 0.")
    norm = norm_of(student, [None, torch.tensor([0.0, 2.0])])
    expect(float(norm) == 2.0, "global_grad_norm([None, [0, 2]]) should be 2.")


# -- TODO 3: plan_mixed_precision_update ----------------------------------------------------
@pytest.mark.points(2)
@pytest.mark.hint("TODO 3 (finite check): check every element of every tensor for NaN, +inf and -inf "
                  "(torch.isfinite), not only the first tensor and not only one kind.")
def test_plan_catches_every_non_finite_value(student, seed):
    """plan skips on NaN, +inf or -inf in any element of any gradient"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    # each kind in another place: second tensor, last tensor, a middle one
    for bad, dtype, position in ((math.nan, torch.float32, 1), (math.inf, torch.float16, 5),
                                 (-math.inf, torch.float32, 3)):
        gradients = draw_gradients(rng, gen, 5, dtypes=(torch.float32, torch.float16), magnitude=64.0)
        target = (torch.randn(6, generator=gen) * 64).to(dtype)
        target[rng.randrange(1, 6)] = bad  # never the first element
        gradients.insert(position, target)
        plan = plan_of(student, gradients, 64.0, 1.0)
        expect(plan["should_step"] is False and plan["reason"] == "non_finite_gradient",
               f"a single {bad} in a later gradient did not skip the step.")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 3 (skip branch): on a skip return the unscaled (not clipped) gradients, "
                  "grad_norm inf, clip_coefficient 0.0 and next_scale = scale * backoff_factor.")
def test_plan_skip_result(student, seed):
    """a skipped plan returns unscaled gradients, inf norm, coefficient 0.0 and the backed-off scale"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale, backoff = rng.uniform(100.0, 70000.0), rng.choice([0.25, 0.5, 0.125])
    gradients = draw_gradients(rng, gen, 5, dtypes=(torch.float32,), magnitude=scale)
    gradients[0] = torch.tensor([1.0, math.inf, 3.0])
    plan = plan_of(student, gradients, scale, 1.0, backoff_factor=backoff)
    expect(plan["should_step"] is False, "should_step should be False for an inf gradient.")
    expect(isinstance(plan["next_scale"], (int, float)) and math.isclose(plan["next_scale"], scale * backoff,
                                                                         rel_tol=1e-9),
           "next_scale should be scale * backoff_factor after an overflow.")
    expect(plan["clip_coefficient"] == 0.0 and isinstance(plan["clip_coefficient"], float),
           "clip_coefficient should be the float 0.0 on a skip.")
    norm = expect_tensor(plan["grad_norm"], "grad_norm", dtype=torch.float32)
    expect(norm.numel() == 1 and math.isinf(float(norm)) and float(norm) > 0, "grad_norm should be +inf on a skip.")
    check_gradients(plan["gradients"], unscaled_reference(gradients, scale), "gradients on a skip")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 3 (order): check the real (unscaled) gradients: an FP16 gradient divided by a "
                  "scale below 1 can overflow to inf.")
def test_plan_checks_unscaled_gradients(student, seed):
    """plan checks finiteness after unscaling (FP16 60000 at scale 0.5 overflows)"""
    rng = random.Random(seed)
    gradient = torch.tensor([rng.uniform(40000.0, 60000.0), 1.0]).half()
    plan = plan_of(student, [gradient], 0.5, 1.0)
    expect(plan["should_step"] is False, "the unscaled FP16 gradient is inf, so the step must be skipped.")


@pytest.mark.points(2)
@pytest.mark.hint("TODO 3 (clip): coefficient = min(1, max_norm / (norm + 1e-12)) from the pre-clip "
                  "global norm of the real gradients; multiply every gradient by it.")
def test_plan_clips_with_the_right_coefficient(student, seed):
    """a finite plan reports the pre-clip norm and clips every gradient by min(1, max_norm/norm)"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    scale = rng.uniform(10.0, 3000.0)
    gradients = draw_gradients(rng, gen, 7, dtypes=(torch.float32,), magnitude=scale * rng.uniform(1, 5))
    norm = flat_norm(unscaled_reference(gradients, scale))
    max_norm = norm * rng.uniform(0.05, 0.8)
    plan = plan_of(student, gradients, scale, max_norm)
    expect(plan["should_step"] is True and plan["reason"] == "finite_gradient",
           "finite gradients should give should_step True and reason 'finite_gradient'.")
    expect_close(expect_tensor(plan["grad_norm"], "grad_norm", dtype=torch.float32).reshape(()),
                 torch.tensor(norm), "grad_norm (before clipping)", 1e-5, 0.0)
    coefficient = min(1.0, max_norm / (norm + 1e-12))
    expect(isinstance(plan["clip_coefficient"], float), "clip_coefficient should be a Python float.")
    expect(math.isclose(plan["clip_coefficient"], coefficient, rel_tol=1e-5),
           "clip_coefficient is not min(1, max_norm / (norm + 1e-12)).")
    expected = [None if g is None else (g.double() / scale * coefficient).float() for g in gradients]
    check_gradients(plan["gradients"], expected, "the clipped gradients")
    expect(plan["next_scale"] == scale, "next_scale should stay equal to scale after a finite step.")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 3 (clip): below max_norm the coefficient is exactly 1.0 (min with 1).")
def test_plan_does_not_clip_below_threshold(student, seed):
    """a norm below max_norm leaves the gradients unscaled but unclipped (coefficient 1.0)"""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    gradients = draw_gradients(rng, gen, 5, dtypes=(torch.float32,), magnitude=8.0)
    norm = flat_norm(unscaled_reference(gradients, 8.0))
    plan = plan_of(student, gradients, 8.0, norm * rng.uniform(1.5, 10.0))
    expect(plan["clip_coefficient"] == 1.0, "clip_coefficient should be exactly 1.0 below max_norm.")
    check_gradients(plan["gradients"], unscaled_reference(gradients, 8.0), "the gradients")


@pytest.mark.points(1)
@pytest.mark.hint("TODO 3 (result): should_step must be a real bool (not a tensor), clip_coefficient a "
                  "Python float, grad_norm an FP32 tensor.")
def test_plan_value_types(student, seed):
    """the plan's values have the contract's types on both branches"""
    gen = torch.Generator().manual_seed(seed)
    finite = torch.randn(4, generator=gen)
    for gradients in ([finite], [torch.tensor([math.nan, 1.0])]):
        plan = plan_of(student, gradients, 4.0, 1.0)
        norm = float(plan["grad_norm"]) if torch.is_tensor(plan["grad_norm"]) else None
        expected_norm = flat_norm([finite]) / 4.0 if gradients[0] is finite else math.inf
        expect(norm is not None and math.isclose(norm, expected_norm, rel_tol=1e-5),
               "grad_norm is wrong on this branch.")
        expect(isinstance(plan["should_step"], bool), "should_step should be a bool, got "
                                                      f"{type(plan['should_step']).__name__}.")
        expect(isinstance(plan["clip_coefficient"], float), "clip_coefficient should be a float.")
        expect_tensor(plan["grad_norm"], "grad_norm", dtype=torch.float32)
        expect(plan["reason"] in ("finite_gradient", "non_finite_gradient"),
               "reason should be 'finite_gradient' or 'non_finite_gradient'.")


@pytest.mark.points(1)
@pytest.mark.hint("plan_mixed_precision_update: max_norm <= 0 (and scale <= 0) must raise ValueError.")
def test_plan_rejects_invalid_arguments(student):
    """plan raises ValueError for max_norm 0, a negative max_norm and scale 0, not for valid ones"""
    plan = plan_of(student, [torch.ones(2)], 2.0, 1e-3)
    expect(plan["should_step"] is True, "a tiny but positive max_norm is valid.")
    for args in (([torch.ones(2)], 2.0, 0.0), ([torch.ones(2)], 2.0, -1.0), ([torch.ones(2)], 0.0, 1.0)):
        raised = raised_type(student.call("plan_mixed_precision_update", *args), FILE)
        expect(raised == "ValueError", f"scale={args[1]:g}, max_norm={args[2]:g} should raise ValueError, "
                                       f"got {raised or 'no exception'}.")


@pytest.mark.points(1)
@pytest.mark.hint("Chapter conformance: unscale_gradients must agree with GradScaler.unscale_, and a skipped "
                  "plan must back off like GradScaler.update().")
def test_conformance_with_gradscaler(student, seed):
    """unscale and overflow backoff agree with torch.amp.GradScaler('cpu')"""
    gen = torch.Generator().manual_seed(seed)
    init_scale = float(2 ** random.Random(seed).randint(3, 16))
    parameter = torch.nn.Parameter(torch.randn(6, generator=gen))
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, backoff_factor=0.5)
    scaler.scale(parameter.square().sum()).backward()
    scaled = parameter.grad.detach().clone()
    local = value_of(student.call("unscale_gradients", [scaled], init_scale), FILE)
    plan = plan_of(student, [torch.full((2,), math.inf)], init_scale, 1.0)
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    scaler.unscale_(optimizer)
    framework = parameter.grad.detach().clone()
    check_gradients(local, [framework], "unscale_gradients vs GradScaler.unscale_")
    overflow = torch.nn.Parameter(torch.ones(2))
    overflow_scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, backoff_factor=0.5)
    overflow_scaler.scale(overflow.square().sum()).backward()
    overflow.grad.fill_(math.inf)
    overflow_scaler.step(torch.optim.SGD([overflow], lr=0.1))
    overflow_scaler.update()
    if plan["next_scale"] != overflow_scaler.get_scale():
        raise Mistake("after an overflow, next_scale differs from GradScaler's backed-off scale.")
