"""Visible tests for amp_training_step: a plain FP32 update, clipping after unscaling, and the
FP16 and BF16 skips, the public tests' other checks, and one test for each clause of the contract
they leave open (a scaler refused outside 'fp16', unequal microbatch weights), so that a local
grade sees every mistake that costs points. Their inputs are fixed, so the messages may show
every number; the hidden suite draws its own."""
import math

import pytest
import torch
import torch.nn.functional as F

from autograder.assignment import scenarios
from autograder.assignment.checks import amp_training_step_rejections
from autograder.authoring import (_, reference_cache, Mistake, StudentCodeFailed, describe_raised, equals, expect,
                                  expect_float_close, expect_updates_close, known_ratio, raised_is)
from autograder.assignment.checks.amp_training_step_crashes import run_student

pytestmark = [pytest.mark.module("amp_training_step"), pytest.mark.visibility("visible")]

def reference_update(spec, weights=None, last_only=False, autocast=False):
    """An fp32 step on the weighted loss (``weights``, else the spec's, else the mean), clipped to
    max_norm: (parameters, pre-clip norm). ``last_only``/``autocast``: the same with only the last
    microbatch, or a bfloat16 forward. Computed once per spec in a class (the judge's reference cache)."""
    return reference_cache.cached(("fp32 update", weights, last_only, autocast), spec,
                                  lambda: _reference_update(spec, weights, last_only, autocast))


def _reference_update(spec, weights, last_only, autocast):
    model = scenarios.build_model(spec["seed"])
    optimizer = scenarios.build_optimizer("sgd", model.parameters(), 0.2)
    batches = scenarios.build_batches(spec["seed"], spec["microbatches"])
    weights = weights or spec.get("weights") or [1.0 / len(batches)] * len(batches)
    pairs = list(zip(weights, batches))[-1:] if last_only else zip(weights, batches)
    for weight, (inputs, targets) in pairs:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = F.mse_loss(model(inputs).float(), targets)
        (loss * weight).backward()
    norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), spec.get("max_norm", 1.0)))
    optimizer.step()
    return scenarios.parameters_of(model), norm


def check_grad_norm(report, want, spec, tolerance):
    """grad_norm against ``want``; when it equals what a known mistake gives, say which (and blame its TODO)."""
    got = report.get("grad_norm")
    expect(isinstance(got, float), _("grad_norm should be a Python float, got {got}.", got=repr(got)), 12)
    if math.isclose(got, want, rel_tol=tolerance):
        return
    k = spec["microbatches"]
    scale = spec.get("scaler", {}).get("init_scale")
    known = [
        (want * k, 11, _("K times the expected norm: the microbatch losses are added without their weights")),
        (want / k, 11, _("1/K of the expected norm: the weighted loss is divided by K once more")),
        (reference_update(spec, last_only=True)[1], 11,
         _("the norm of the last microbatch's gradient alone: the gradients are cleared inside the microbatch "
           "loop (or backward runs once, after it)")),
        (reference_update(spec, weights=[1.0] * k, last_only=True)[1], 11,
         _("the norm of the last microbatch's unweighted gradient alone: the gradients are cleared inside the "
           "loop and the loss is not weighted")),
        (spec.get("max_norm", 1.0), 12, _("max_norm: the norm is measured after clipping")),
    ]
    if spec["precision"] == "fp32":
        known.append((reference_update(spec, autocast=True)[1], 11,
                      _("the norm a bfloat16 forward gives: 'fp32' must run without autocast (enabled=False)")))
    if scale:
        known.append((want * scale, 12, _("scale times the expected norm: it is measured on the still-scaled "
                                          "gradients, before unscale_")))
    for value, todo, mistake in known:
        if math.isclose(got, value, rel_tol=max(tolerance, 1e-6)):
            # a named mistake says all: a test's hint (about another one) is left out, except the
            # hint about unscaling before the norm where that is the mistake named
            raise Mistake(_("grad_norm: got {got:.6g}, expected {want:.6g} (ratio {ratio:.4g}). That is {mistake}.",
                            got=got, want=want, ratio=got / want, mistake=mistake), todo,
                          hint_applies=bool(scale) and value == want * scale)
    expect_float_close(got, want, _("grad_norm"), tolerance)


def same_update(got, other, start, tolerance):
    """Did training move the parameters as ``other`` did (relative to the change, per tensor)?"""
    if len(got) != len(other):
        return False
    for a, e, s in zip(got, other, start):
        if not torch.is_tensor(a) or a.shape != e.shape:  # a box may send any tensors: not the same update
            return False
        wanted = (e.double() - s.double()).norm()
        if float((a.double() - e.double()).norm()) > tolerance * max(float(wanted), 1e-12):
            return False
    return True


def check_update(got, want, spec, tolerance):
    """The parameters' change against ``want``'s, with the two mistakes of the step part named."""
    start = scenarios.parameters_of(scenarios.build_model(spec["seed"]))
    expect(len(got["parameters"]) == len(start) and all(
        torch.is_tensor(a) and a.shape == b.shape for a, b in zip(got["parameters"], start)),
        _("the parameters after the update are not the model's {count} tensors of their own shapes.",
          count=len(start)))
    moved = math.sqrt(sum(float((a.double() - b.double()).norm()) ** 2 for a, b in zip(got["parameters"], start)))
    wanted = math.sqrt(sum(float((a.double() - b.double()).norm()) ** 2 for a, b in zip(want, start)))
    expect(moved > 0.0, _("optimizer.step ran, but no parameter moved: are the gradients cleared before the step?"),
           13)
    scale = spec.get("scaler", {}).get("init_scale")
    if scale and known_ratio(moved / wanted, {"1/scale": 1.0 / scale}, rel_tol=1e-2):
        raise Mistake(_("grad_norm is right, but the update is {ratio:.4g} times the expected one, which is exactly "
                        "1/scale: the gradients were unscaled a second time after the norm. Does scaler.update() "
                        "run before scaler.step(optimizer)? update() starts a new iteration, so step() unscales "
                        "again.", ratio=moved / wanted), 13, hint_applies=False)
    max_norm = spec.get("max_norm", 1.0)
    if max_norm != 1.0 and same_update(got["parameters"], reference_update(dict(spec, max_norm=1.0))[0], start,
                                       tolerance):
        raise Mistake(_("grad_norm is right, but the update is the one clipped to 1.0 instead of max_norm "
                        "{max_norm:g}: pass max_norm to clip_grad_norm_.", max_norm=max_norm), 12, hint_applies=False)
    k = spec["microbatches"]
    expect_updates_close(got["parameters"], want, start, _("the parameters after the update"), tolerance,
                         factors={_("K (the losses are added, not weighted)"): k,
                                  _("1/K (the weighted loss is divided by K once more)"): 1.0 / k})


def first_report(got):
    report = got["reports"][0]
    expect(isinstance(report, dict) and "$not_a_dict" not in report,
           _("train_step should return the contract's dict, got {got}.", got=repr(report)))
    return report


@pytest.mark.todo(11)
@pytest.mark.points(1)
@pytest.mark.hint(_("Forward each microbatch, backward weights[i] * loss_i so the gradients accumulate, then "
                    "clip, step once and return the contract's dict."))
def test_fp32_update_matches_plain_training(student):
    """fp32, two microbatches: same parameters and report as a plain training step"""
    spec = {"seed": 11, "precision": "fp32", "microbatches": 2, "updates": 1, "max_norm": 100.0}
    got = run_student(student, spec)
    report = first_report(got)
    want, norm = reference_update(spec)
    expect(report.get("stepped") is True, _("stepped should be True, got {got}.", got=repr(report.get("stepped"))))
    expect(got["step_calls"] == [1],
           _("optimizer.step should run once, it ran {count} times.", count=got["step_calls"][0]), 13)
    check_grad_norm(report, norm, spec, 1e-5)
    check_update(got, want, spec, 1e-4)


@pytest.mark.todo(12)
@pytest.mark.points(1)
@pytest.mark.hint(_("Call scaler.unscale_(optimizer) before clip_grad_norm_, so that the norm and the clip "
                    "see the real-scale gradients."))
def test_fp16_clips_after_unscaling(student):
    """fp16 with scale 4096 and a binding max_norm: the update is the clipped real-scale gradient"""
    scale = 4096.0
    spec = {"seed": 13, "precision": "fp16", "microbatches": 2, "updates": 1, "max_norm": 0.05,
            "scaler": {"init_scale": scale}}
    got = run_student(student, spec)
    report = first_report(got)
    want, norm = reference_update(spec)
    check_grad_norm(report, norm, spec, 5e-2)
    check_update(got, want, spec, 5e-2)


@pytest.mark.todo(13)
@pytest.mark.points(1)
@pytest.mark.hint(_("An inf gradient under fp16: scaler.step skips the step, scaler.update backs the scale "
                    "off, and the report says so."))
def test_fp16_overflow_skips(student):
    """fp16 with an inf input: no step, parameters unchanged, scale halved"""
    spec = {"seed": 12, "precision": "fp16", "microbatches": 2, "updates": 1,
            "scaler": {"init_scale": 1024.0}, "inject": {"0": {"microbatch": 1, "value": "inf"}}}
    got = run_student(student, spec)
    report = first_report(got)
    expect(report.get("reason") == "non_finite_gradient",
           _("reason should be 'non_finite_gradient', got {got}.", got=repr(report.get("reason"))), 12)
    expect(got["step_calls"] == [0],
           _("optimizer.step ran {count} time(s) although the gradient was not finite.",
             count=got["step_calls"][0]))
    expect(report.get("stepped") is False, _("stepped should be False, got {got}.", got=repr(report.get("stepped"))))
    expect(isinstance(report.get("grad_norm"), float) and math.isinf(report["grad_norm"]),
           _("grad_norm should be inf, got {got}.", got=repr(report.get("grad_norm"))), 12)
    expect(equals(report.get("scale_before"), 1024.0) and equals(report.get("scale_after"), 512.0),
           _("scale_before/scale_after should be 1024.0/512.0, got {before}/{after}: scaler.update() runs once "
             "per call, after the step or the skip.", before=repr(report.get("scale_before")),
             after=repr(report.get("scale_after"))))
    expect(got["grads_left"] == [0], _("{count} parameter(s) still hold a gradient on return.",
                                       count=got["grads_left"][0]))


@pytest.mark.todo(13)
@pytest.mark.points(1)
@pytest.mark.hint(_("BF16 has no scaler, so nothing skips for you: check that every gradient is finite and "
                    "call optimizer.step() only then."))
def test_bf16_skips_non_finite_without_scaler(student):
    """bf16 with an inf input: no step, parameters unchanged, both scales 1.0"""
    spec = {"seed": 14, "precision": "bf16", "microbatches": 2, "updates": 1,
            "inject": {"0": {"microbatch": 1, "value": "inf"}}}
    got = run_student(student, spec)
    report = first_report(got)
    expect(report.get("reason") == "non_finite_gradient",
           _("reason should be 'non_finite_gradient', got {got}: the finite check must see the NaN/inf "
             "gradients.", got=repr(report.get("reason"))), 12)
    expect(got["step_calls"] == [0],
           _("optimizer.step ran {count} time(s) although the gradient was not finite.",
             count=got["step_calls"][0]))
    expect(report.get("stepped") is False, _("stepped should be False, got {got}.", got=repr(report.get("stepped"))))
    expect(equals(report.get("scale_before"), 1.0) and equals(report.get("scale_after"), 1.0),
           _("without a scaler scale_before/scale_after should be 1.0/1.0, got {before}/{after}.",
             before=repr(report.get("scale_before")), after=repr(report.get("scale_after"))))
    untouched = scenarios.parameters_of(scenarios.build_model(spec["seed"]))
    changed = sum(not torch.equal(a, b) for a, b in zip(got["parameters"], untouched)) + \
        abs(len(got["parameters"]) - len(untouched))
    expect(changed == 0, _("{count} parameter tensor(s) changed although the step was skipped.", count=changed))


# -- the public tests' other checks (exercises/tests/test_amp_training_step.py), graded here too -----
@pytest.mark.todo(10)
@pytest.mark.points(1)
@pytest.mark.hint(_("'fp16' autocasts the forward to torch.float16 and 'bf16' to torch.bfloat16; 'fp32' runs it "
                    "without autocast (enabled=False), in float32."))
def test_bf16_autocasts_the_forward(student):
    """under 'bf16' the first Linear layer computes in bfloat16, under 'fp16' in float16, under 'fp32' in float32"""
    for precision, want, todo in (("bf16", "torch.bfloat16", 10), ("fp16", "torch.float16", 10),
                                  ("fp32", "torch.float32", 11)):
        spec = {"seed": 15, "precision": precision, "microbatches": 1, "updates": 1}
        if precision == "fp16":
            spec["scaler"] = {"init_scale": 256.0}
        seen = run_student(student, spec)["forward_dtypes"]
        if seen == ["torch.float32"] and precision != "fp32":
            # no autocast at all: the loop's forward (TODO 11) does not enter it, whatever dtype TODO 10 chose
            expect(False, _("precision {precision}: the first Linear layer computed in {got}, expected {want}: every "
                            "forward runs inside torch.autocast(device_type, dtype=...), with the device type of the "
                            "model's parameters.", precision=repr(precision), got=", ".join(seen), want=want), 11)
        expect(seen == [want], _("precision {precision}: the first Linear layer computed in {got}, expected {want}.",
                                 precision=repr(precision), got=", ".join(seen) or "-", want=want), todo)


@pytest.mark.todo(10)
@pytest.mark.points(1)
@pytest.mark.hint(_("'fp16' needs an enabled GradScaler: without one, or with a disabled one (is_enabled() is "
                    "False), raise ValueError."))
def test_fp16_needs_an_enabled_scaler(student):
    """'fp16' without a scaler, or with a disabled GradScaler, raises ValueError"""
    outcome = student.scenario("training_step_errors", {"seed": 16, "cases": ["fp16_without_scaler",
                                                                             "fp16_disabled_scaler"]})
    if not outcome.ok:
        raise StudentCodeFailed(outcome.error, "amp_training_step.py")
    labels = {"fp16_without_scaler": _("precision 'fp16' without a scaler"),
              "fp16_disabled_scaler": _("precision 'fp16' with a disabled GradScaler")}
    for case, result in outcome.value.items():
        expect(raised_is(result["raised"], "ValueError"),
               _("{case}: expected ValueError, got {raised}.", case=labels[case],
                 raised=describe_raised(result["raised"])))


@pytest.mark.todo(12)
@pytest.mark.points(1)
@pytest.mark.hint(_("scaler.scale once per microbatch inside the loop; scaler.unscale_ once per call, after it."))
def test_unscale_exactly_once_per_update(student):
    """fp16, K=3, two calls: scaler.scale three times per call, scaler.unscale_ once per call"""
    spec = {"seed": 17, "precision": "fp16", "microbatches": 3, "updates": 2, "max_norm": 100.0,
            "scaler": {"init_scale": 1024.0, "growth_interval": 1000}}
    calls = run_student(student, spec)["scaler_calls"]
    expect(calls["scale"] == 6, _("scaler.scale ran {count} times in two calls of 3 microbatches, expected 6: one "
                                  "scaled backward per microbatch.", count=calls["scale"]), 11)
    expect(calls["unscale_"] == 2,
           _("scaler.unscale_ ran {count} times in two calls, expected 2: once per call, after the microbatch loop "
             "(not counting the one scaler.step makes itself when none came before).", count=calls["unscale_"]))


# -- the contract's clauses the public tests leave open, one test each -----------------------------
@pytest.mark.todo(10)
@pytest.mark.points(1)
@pytest.mark.hint(_("Only 'fp32', 'bf16' and 'fp16' are precisions, and only 'fp16' takes a GradScaler: an enabled one "
                    "with 'fp32' or 'bf16' raises ValueError, as does any other precision, before the first forward."))
def test_scaler_only_with_fp16(student):
    """an enabled GradScaler with 'fp32' or 'bf16', and a precision 'fp8' or 'BF16', raise ValueError"""
    got = amp_training_step_rejections.run_errors(student, {"seed": 18, "bad_precision": "fp8", "cases": [
        "fp32_with_scaler", "bf16_with_scaler", "unknown_precision"]})
    upper = amp_training_step_rejections.run_errors(student, {"seed": 18, "bad_precision": "BF16",
                                                               "cases": ["unknown_precision"]})
    got["unknown_precision (BF16)"] = upper["unknown_precision"]
    amp_training_step_rejections.check_rejections(got)


@pytest.mark.todo(11)
@pytest.mark.points(1)
@pytest.mark.hint(_("Microbatch i contributes weights[i] * loss_i: multiply each microbatch's loss by its own weight "
                    "(not by 1/K) before its backward."))
def test_unequal_weights(student):
    """fp32, three microbatches weighted 0.6 / 0.3 / 0.1: the update of the weighted sum of losses"""
    weights = [0.6, 0.3, 0.1]
    spec = {"seed": 19, "precision": "fp32", "microbatches": 3, "updates": 1, "max_norm": 100.0,
            "weights": weights}
    got = run_student(student, spec)
    report = first_report(got)
    want, norm = reference_update(spec)
    start = scenarios.parameters_of(scenarios.build_model(spec["seed"]))
    equal = reference_update(spec, weights=[1.0 / 3] * 3)[0]
    if not math.isclose(report.get("grad_norm") if isinstance(report.get("grad_norm"), float) else math.nan,
                        norm, rel_tol=1e-5) and same_update(got["parameters"], equal, start, 1e-4):
        raise Mistake(_("the update is the one of equal weights 1/3 each, not of the weights 0.6 / 0.3 / 0.1: each "
                        "microbatch's loss is multiplied by its own weight."))
    check_grad_norm(report, norm, spec, 1e-5)
    check_update(got, want, spec, 1e-4)
