"""The judge behind the hidden amp_training_step tests: it runs the student's train_step and
the oracle (oracle_train_step, the framework's real autocast/GradScaler/clip) on the same model
and data, compares parameters, reports and call counts, and turns a difference into feedback.

When a run differs from the oracle, the judge replays it with the oracle's
known-mistake variants (oracle_train_step.MISTAKES), alone and in small
combinations; when one reproduces the student's numbers exactly, the feedback
names each mistake of it, so fixing one of several visibly changes the
feedback. Otherwise it shows got/expected of the first quantity that differs
and names the ratio when it is a known factor (K, the scale ...). A crash that a
misplaced GradScaler call causes is translated into the TODO that holds it."""
import contextlib
import itertools
import math

import torch

from autograder.assignment import scenarios
from autograder.assignment.hidden import oracle_train_step
from autograder.authoring import _, reference_cache, Mistake, equals, expect, known_ratio, numbers_message
from autograder.assignment.checks.amp_training_step_crashes import run_student

REPORT_KEYS = {"stepped", "reason", "grad_norm", "scale_before", "scale_after", "num_microbatches"}
# Relative tolerance on the parameter *updates*, by precision. Low-precision
# matmuls round differently depending on where a correct implementation applies
# the weights; the mistakes these tests name change updates by far more. They are
# loose enough that one mistake (say, the wrong autocast dtype, which has its own
# test) never flips another test from run to run.
UPDATE_TOLERANCE = {"fp32": 1e-4, "bf16": 1e-1, "fp16": 1e-1}
NORM_TOLERANCE = {"fp32": 1e-5, "bf16": 5e-2, "fp16": 5e-2}

# The oracle's mistake variants as a student reads them, with the TODO that holds each.
MISTAKES = {
    "last_only": (11, _("only the last microbatch's gradient reaches the update: the gradients are cleared "
                        "inside the microbatch loop (or backward runs once, after it). Let them accumulate "
                        "over all K microbatches and clear them only after the step.")),
    "unweighted": (11, _("the microbatch losses are added without their weights: microbatch i contributes "
                         "weights[i] * loss_i (1/K each when weights is None).")),
    "mean_again": (11, _("the weighted loss is divided by K once more, although the weights already sum "
                         "to 1.")),
    "fp32_autocast": (11, _("the 'fp32' forward ran under autocast in bfloat16: torch.autocast(device_type, "
                            "dtype=None) still autocasts (to bfloat16 on the CPU); for 'fp32' pass "
                            "enabled=False.")),
    "clip_before_unscale": (12, _("the norm is measured and the gradients are clipped while they are still "
                                  "scaled: call scaler.unscale_(optimizer) before clip_grad_norm_.")),
    "norm_before_unscale": (12, _("grad_norm is measured on the still-scaled gradients: take it after "
                                  "scaler.unscale_(optimizer).")),
    "post_clip_norm": (12, _("grad_norm is the norm after clipping: report the pre-clip norm (the value "
                             "clip_grad_norm_ returns).")),
    "no_clip": (12, _("the gradients are not clipped to max_norm.")),
    "max_norm_ignored": (12, _("the gradients are clipped to 1.0 whatever max_norm is: pass max_norm to "
                               "clip_grad_norm_.")),
    "update_before_step": (13, _("scaler.update() runs before scaler.step(optimizer): update() starts a new "
                                 "iteration, so step() unscales the gradients a second time. Step (or skip) "
                                 "first, then update().")),
    "clear_before_step": (13, _("the gradients are cleared before the step, so optimizer.step() finds nothing "
                                "to apply: clear them after the step.")),
}
# Mistakes combined three at a time (the others alone or in pairs): what changes the gradients.
GRADIENT_MISTAKES = {"last_only", "unweighted", "mean_again", "fp32_autocast", "clip_before_unscale",
                     "norm_before_unscale", "post_clip_norm", "no_clip", "max_norm_ignored"}
# Pairs that describe the same code twice (or cancel out): never combined.
EXCLUSIVE = [{"unweighted", "mean_again"}, {"clip_before_unscale", "norm_before_unscale"},
             {"post_clip_norm", "no_clip"}, {"clip_before_unscale", "no_clip"},
             {"norm_before_unscale", "post_clip_norm"}, {"clear_before_step", "no_clip"},
             {"clear_before_step", "update_before_step"}, {"max_norm_ignored", "no_clip"},
             {"max_norm_ignored", "clip_before_unscale"}]
NUMERIC = "numeric"  # a Mistake about numbers the mistake variants may explain


# -- running the student and the oracle ---------------------------------------------
@contextlib.contextmanager
def one_thread():
    """The oracle's models are tiny: one thread is several times faster than many."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def reference(spec, mistakes=()):
    """The oracle's run of ``spec`` (with ``mistakes`` made on purpose), once per class."""
    def run():
        with one_thread():
            return scenarios.training_steps(oracle_train_step.with_mistakes(mistakes), spec)

    return reference_cache.cached(("oracle training_steps", sorted(mistakes)), spec, run)


def single_update(spec):
    """The same run, first update only."""
    single = dict(spec, updates=1)
    if "inject" in spec:
        single["inject"] = {key: value for key, value in spec["inject"].items() if key == "0"}
    return single


def run_both(student, spec):
    got = run_student(student, spec)
    check_structure(got)
    return got, reference(spec)


def check_structure(got):
    for index, report in enumerate(got["reports"], start=1):
        expect(isinstance(report, dict) and "$not_a_dict" not in report,
               _("update {index}: train_step returned a {got}, not the contract's dict.", index=index,
                 got=report.get("$not_a_dict") if isinstance(report, dict) else type(report).__name__))
        missing, extra = sorted(REPORT_KEYS - set(report)), sorted(set(report) - REPORT_KEYS)
        expect(not missing and not extra,
               _("update {index}: the returned dict's keys are wrong (missing: {missing}; unexpected: "
                 "{extra}).", index=index, missing=", ".join(missing) or "-", extra=", ".join(extra) or "-"))


def initial_parameters(spec):
    model = {"seed": spec["seed"], "frozen_layer": spec.get("frozen_layer", False)}
    return reference_cache.cached("initial parameters", model, lambda: scenarios.parameters_of(
        scenarios.build_model(model["seed"], frozen_layer=model["frozen_layer"])))


# -- comparing runs --------------------------------------------------------------------
def as_number(value):
    """A float for Python numbers and one-element tensors, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if torch.is_tensor(value) and value.numel() == 1:
        return float(value)
    return None


def norm_close(got, want, tolerance):
    got = as_number(got)
    if got is None:
        return False
    if math.isinf(want):
        return got == want
    return math.isclose(got, want, rel_tol=tolerance)


def update_error(got, want, spec):
    """The largest per-tensor relative error of what training changed (inf for non-finite values, or
    for a tensor moved that the reference left alone)."""
    worst = 0.0
    if len(got) != len(want):
        return math.inf
    for a, e, start in zip(got, want, initial_parameters(spec)):
        if not torch.is_tensor(a) or a.shape != e.shape or not bool(torch.isfinite(a).all()):
            return math.inf
        moved, wanted = a.double() - start.double(), e.double() - start.double()
        if float(wanted.norm()) == 0.0:
            if float(moved.norm()) != 0.0:
                return math.inf
            continue
        worst = max(worst, float((moved - wanted).norm() / wanted.norm()))
    return worst


def update_ratio(got, want, spec):
    """||all changes of got|| / ||all changes of the reference|| (None if the reference did not move,
    or ``got`` holds something else than tensors like the reference's)."""
    moved = wanted = 0.0
    if len(got) != len(want) or not all(torch.is_tensor(a) and a.shape == e.shape for a, e in zip(got, want)):
        return None
    for a, e, start in zip(got, want, initial_parameters(spec)):
        moved += float((a.double() - start.double()).norm()) ** 2
        wanted += float((e.double() - start.double()).norm()) ** 2
    return math.sqrt(moved / wanted) if wanted else None


def same_reports(got, other, spec):
    """Do the runs step and measure grad_norm alike, update by update (as far as ``other`` goes)?"""
    for report, expected, calls, other_calls in zip(got["reports"], other["reports"], got["step_calls"],
                                                    other["step_calls"]):
        if report.get("stepped") is not expected["stepped"] or calls != other_calls:
            return False
        if not norm_close(report.get("grad_norm"), expected["grad_norm"], NORM_TOLERANCE[spec["precision"]]):
            return False
    return True


def same_run(got, other, spec):
    """Does ``got`` step, measure grad_norm and move the parameters like ``other``?"""
    return (same_reports(got, other, spec)
            and update_error(got["parameters"], other["parameters"], spec) <= UPDATE_TOLERANCE[spec["precision"]])


def candidate_mistakes(spec):
    names = ["no_clip", "post_clip_norm", "clear_before_step"]
    if spec.get("max_norm", 1.0) != 1.0:
        names.append("max_norm_ignored")
    if spec["microbatches"] > 1:
        names = ["last_only", "unweighted", "mean_again"] + names
    if spec["precision"] == "fp16":
        names += ["clip_before_unscale", "norm_before_unscale", "update_before_step"]
    if spec["precision"] == "fp32":
        names += ["fp32_autocast"]
    return names


def combinations(names):
    """Combinations of up to three mistakes, smallest first; three only of GRADIENT_MISTAKES."""
    for size in (1, 2, 3):
        for combo in itertools.combinations(names, size):
            if any(pair <= set(combo) for pair in EXCLUSIVE):
                continue
            if size == 3 and not set(combo) <= GRADIENT_MISTAKES:
                continue
            yield combo


def identify(got, spec):
    """The smallest combination of known mistakes that reproduces ``got`` exactly, or None. Each
    combination is first tried on the first update alone, which rules most of them out cheaply."""
    first = single_update(spec)
    for combo in combinations(candidate_mistakes(spec)):
        try:
            if spec["updates"] > 1 and not same_reports(got, reference(first, combo), spec):
                continue
            if same_run(got, reference(spec, combo), spec):
                return combo
        except (RuntimeError, AssertionError, ValueError):  # GradScaler refuses this variant on this spec
            continue
    return None


def ratio_factors(spec, expected_report):
    """Known got/expected ratios of this run, each with the TODO it points at."""
    k, scale = spec["microbatches"], expected_report["scale_before"]
    table = {}
    if k > 1:
        table[_("K, the number of microbatches (the losses are added, not weighted)")] = (k, 11)
        table[_("1/K (the weighted loss is divided by K once more)")] = (1.0 / k, 11)
    if scale != 1.0:
        table[_("the scale (the norm of the still-scaled gradients: measured or clipped before unscale_)")] = \
            (scale, 12)
        table[_("1/scale (the gradients are unscaled twice)")] = (1.0 / scale, 12)
        table[_("scale² (the loss is scaled twice)")] = (scale * scale, 11)
    return table


def numeric_mistake(message, todo=None):
    mistake = Mistake(message, todo)
    mistake.kind = NUMERIC
    return mistake


def grad_norm_mistake(index, got_norm, expected, spec):
    table = ratio_factors(spec, expected)
    factors = {name: value for name, (value, _todo) in table.items()}
    what = _("update {index}: grad_norm", index=index)
    got_value = as_number(got_norm)
    if got_value is None:
        return numeric_mistake(_("update {index}: grad_norm should be a Python float, got {got}.", index=index,
                                 got=type(got_norm).__name__), 12)
    todo = None
    if math.isfinite(got_value) and expected["grad_norm"]:
        name = known_ratio(got_value / expected["grad_norm"], factors)
        todo = table[name][1] if name is not None else None
    return numeric_mistake(numbers_message(what, got_value, expected["grad_norm"], factors), todo)


def first_difference(got, want, spec):
    """The first way ``got`` differs from the oracle's run ``want``, as a Mistake (None if none)."""
    precision = spec["precision"]
    for index, (report, expected) in enumerate(zip(got["reports"], want["reports"]), start=1):
        calls = got["step_calls"][index - 1]
        if not expected["stepped"]:
            if report["reason"] != "non_finite_gradient":
                return numeric_mistake(_("update {index}: the gradients hold NaN or inf, yet reason is {got} "
                                         "(expected 'non_finite_gradient'): the finite check must look at "
                                         "every gradient, after unscaling.", index=index,
                                         got=repr(report["reason"])), 12)
            if calls:
                return numeric_mistake(_("update {index}: reason is 'non_finite_gradient', yet optimizer.step "
                                         "ran {count} time(s): a non-finite update skips the step.",
                                         index=index, count=calls), 13)
            if report["stepped"] is not False:
                return numeric_mistake(_("update {index}: stepped is {got}, but optimizer.step did not run "
                                         "(expected False).", index=index, got=repr(report["stepped"])), 13)
            if not norm_close(report["grad_norm"], math.inf, 0.0):
                return numeric_mistake(_("update {index}: grad_norm should be inf when the gradients are not "
                                         "finite, got {got}.", index=index, got=repr(report["grad_norm"])), 12)
        else:
            if report["reason"] != "finite_gradient":
                return numeric_mistake(_("update {index}: the gradients are finite (expected grad_norm "
                                         "{want:.6g}), yet reason is {got}.", index=index,
                                         want=expected["grad_norm"], got=repr(report["reason"])), 12)
            if calls != 1:
                return numeric_mistake(_("update {index}: optimizer.step ran {count} time(s); a finite update "
                                         "steps exactly once, at the update boundary.", index=index,
                                         count=calls), 13)
            if report["stepped"] is not True:
                return numeric_mistake(_("update {index}: stepped is {got}, but optimizer.step ran (expected "
                                         "True).", index=index, got=repr(report["stepped"])), 13)
            if not norm_close(report["grad_norm"], expected["grad_norm"], NORM_TOLERANCE[precision]):
                return grad_norm_mistake(index, report["grad_norm"], expected, spec)
        for key in ("scale_before", "scale_after"):
            value = as_number(report[key])
            if value is None or not math.isclose(value, expected[key], rel_tol=1e-6):
                what = _("update {index}: {key}", index=index, key=key)
                shown = value if value is not None else repr(report[key])
                return Mistake(numbers_message(what, shown, expected[key]), 13)
        if not equals(report["num_microbatches"], expected["num_microbatches"]):
            return Mistake(_("update {index}: num_microbatches: got {got}, expected {want}.", index=index,
                             got=repr(report["num_microbatches"]), want=expected["num_microbatches"]))
        left = got["grads_left"][index - 1]
        if left:
            return Mistake(_("after update {index}, {count} parameter(s) still hold a gradient: every "
                             "param.grad must be None on return, or the next call adds onto it.", index=index,
                             count=left), 13)
    error = update_error(got["parameters"], want["parameters"], spec)
    if error > UPDATE_TOLERANCE[precision]:
        ratio = update_ratio(got["parameters"], want["parameters"], spec)
        if ratio == 0.0:
            return numeric_mistake(_("optimizer.step ran, but no parameter moved: are the gradients cleared "
                                     "before the step?"), 13)
        if ratio is None or not math.isfinite(error):
            return numeric_mistake(_("the parameters after training: some are not finite, or some moved that "
                                     "the reference left alone."))
        return numeric_mistake(_("the parameters after training: the update is off by {error:.1e} (relative), "
                                 "allowed {allowed:.0e}; its size is {ratio:.4g} times the expected one.",
                                 error=error, allowed=UPDATE_TOLERANCE[precision], ratio=ratio))
    return None


def compare_updates(got, want, spec):
    problem = first_difference(got, want, spec)
    if problem is None:
        return
    combo = identify(got, spec) if getattr(problem, "kind", None) == NUMERIC else None
    if combo:
        items = [_("  - {mistake}", mistake=MISTAKES[name][1]) for name in combo]
        todo = min(MISTAKES[name][0] for name in combo)
        # the mistakes are named: the test's hint, written for one of them, is left out
        if len(combo) == 1:
            raise Mistake(_("{difference}\nYour numbers are exactly what this mistake gives:\n{mistakes}",
                            difference=problem.message, mistakes=items), todo, hint_applies=False)
        raise Mistake(_("{difference}\nYour numbers are exactly what these {count} mistakes together give "
                        "(each fix changes this message):\n{mistakes}", difference=problem.message,
                        count=len(combo), mistakes=items), todo, hint_applies=False)
    raise problem
