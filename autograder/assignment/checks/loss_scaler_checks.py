"""Judging helpers of the loss_scaler suites (TODO 4-9), visible and hidden alike (nothing here is
secret: the hidden suite's cases stay in autograder/assignment/hidden/): GradScaler's own
rule and runs, computed here in the judge with the real torch.amp.GradScaler('cpu'),
and the diagnosis that names the method at fault when the student's scaler differs.

A side-by-side run is judged iteration by iteration, and the first thing that
differs names the method at fault: what scale() multiplied by (TODO 5), which
iterations step() skipped -- with update()'s backoff as the witness of what
unscale_ recorded (TODO 6 or 7) --, the gradients optimizer.step saw, step()'s
return value and the scale between step() and update() (TODO 7), then the scale
and tracker after update(), where the student's own update_scale on GradScaler's
inputs tells TODO 4 from TODO 8, and state_dict() on a loaded probe state tells
TODO 9 from the rest. The state_dict round trips are judged in loss_scaler_state.py, the
methods called one at a time (unscale_ alone, step()'s arguments, misuse) in loss_scaler_calls.py.

The hidden tests live in hidden/test_hidden_loss_scaler.py (TODO 4-5) and
hidden/test_hidden_loss_scaler_scaler.py (TODO 6-9), the visible ones in
visible/test_visible_loss_scaler.py; this file holds no test.
"""
import math

import torch

from autograder.assignment import scenarios
from autograder.assignment.checks import references
from autograder.authoring import (_, reference_cache, Mistake, describe_raised, expect, expect_relative_error,
                                  known_ratio, numbers_message, raised_is, value_of)
from autograder.assignment.checks.loss_scaler_probe import step_skips_its_own_unscale

FILE = "loss_scaler.py"
UPDATE_SCALE, SCALE, UNSCALE, STEP, UPDATE, STATE = 4, 5, 6, 7, 8, 9
# the method a scenario names when the scaler raised -> the TODO that writes it
CALL_TODO = {"scale": SCALE, "unscale_": UNSCALE, "step": STEP, "update": UPDATE, "get_scale": UPDATE,
             "state_dict": STATE, "load_state_dict": STATE, "__init__": STATE}
STATE_KEYS = ("scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker")
THE_SCALE, ONE_OVER_SCALE, SCALE_SQUARED = _("the scale"), _("1/scale"), _("scale²")
MISSING = object()


gradscaler = references.gradscaler


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def at(values, index):
    return values[index] if isinstance(values, list) and 0 <= index < len(values) else MISSING


def shown(value):
    if value is None or is_number(value):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(shown(item) for item in value) + ")"
    if isinstance(value, dict) and set(value) == {"type"}:
        return f"<{value['type']}>"
    return repr(value)[:200]


# -- update_scale and GradScaler's own rule --------------------------------------------------
def rule_options(options):
    return {"growth_factor": float(options.get("growth_factor", 2.0)),
            "backoff_factor": float(options.get("backoff_factor", 0.5)),
            "growth_interval": int(options.get("growth_interval", 2000))}


def call_text(scale, tracker, found_inf, options):
    return (f"update_scale({scale:g}, {tracker}, found_inf={found_inf}, growth_factor={options['growth_factor']:g}, "
            f"backoff_factor={options['backoff_factor']:g}, growth_interval={options['growth_interval']})")


def gradscaler_rule(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """One update() of the real GradScaler from a loaded (scale, tracker): the rule
    update_scale must follow, whatever the tracker (never assumed here). The same
    for every student of a class (the cases come from the seed): run once each."""
    spec = [scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval]
    scale, tracker = reference_cache.cached("gradscaler update rule", spec,
                                            lambda: _gradscaler_update(*spec))
    return scale, tracker


def _gradscaler_update(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    scaler = gradscaler(growth_factor=growth_factor, backoff_factor=backoff_factor, growth_interval=growth_interval)
    scaler.load_state_dict({"scale": scale, "growth_factor": growth_factor, "backoff_factor": backoff_factor,
                            "growth_interval": growth_interval, "_growth_tracker": tracker})
    param = torch.nn.Parameter(torch.zeros(2))
    optimizer = torch.optim.SGD([param], lr=0.0)
    scaler.scale(torch.ones(()))
    param.grad = torch.tensor([1.0, math.inf if found_inf else 1.0])
    scaler.step(optimizer)
    scaler.update()
    return scaler.get_scale(), int(scaler.state_dict()["_growth_tracker"])


def update(student, *args, **kwargs):
    result = value_of(student.call("update_scale", *args, **kwargs), FILE)
    expect(isinstance(result, (tuple, list)) and len(result) == 2,
           _("update_scale should return a (scale, growth_tracker) pair, got {got}.", got=shown(result)), UPDATE_SCALE)
    scale, tracker = result
    expect(is_number(scale), _("the scale returned by update_scale should be a Python float, got {got}.",
                               got=shown(scale)), UPDATE_SCALE)
    expect(isinstance(tracker, int) and not isinstance(tracker, bool),
           _("the growth tracker returned by update_scale should be an int, got {got}.", got=shown(tracker)),
           UPDATE_SCALE)
    return scale, tracker


def expect_pair(got, want, call, todo=UPDATE_SCALE):
    expect(got[1] == want[1] and math.isclose(got[0], want[0], rel_tol=1e-6),
           _("{call} returned ({got_scale:.6g}, {got_tracker}), expected ({want_scale:.6g}, {want_tracker}).",
             call=call, got_scale=got[0], got_tracker=got[1], want_scale=want[0], want_tracker=want[1]), todo)


def transition_mistake(student, what, got_value, want_value, transition, options):
    """The scale or tracker after an update differs from GradScaler's. ``transition``:
    GradScaler's (scale, tracker, found_inf) before and (scale, tracker) after.
    The student's own update_scale on those inputs says whether the rule (TODO 4)
    or update() (TODO 8) is at fault."""
    (scale, tracker, found_inf), (want_scale, want_tracker) = transition
    call = call_text(scale, tracker, found_inf, options)
    outcome = student.call("update_scale", scale, tracker, found_inf, **options)
    result = outcome.value if outcome.ok else None
    if isinstance(result, (tuple, list)) and len(result) == 2 and is_number(result[0]) \
            and math.isclose(result[0], want_scale, rel_tol=1e-5) and result[1] == want_tracker:
        return Mistake(_("{what}: got {got}, GradScaler has {want}. Your update_scale gets this update right ({call} "
                         "returns ({want_scale:.6g}, {want_tracker})), so update() does not use it as it should: call "
                         "it with the current scale, the stored growth tracker, this iteration's found_inf and the "
                         "scaler's own growth_factor, backoff_factor and growth_interval, and store both results.",
                         what=what, got=got_value, want=want_value, call=call, want_scale=want_scale,
                         want_tracker=want_tracker), UPDATE)
    returned = shown(result) if outcome.ok else raised_text([outcome.error.type, outcome.error.message[:200]])
    return Mistake(_("{what}: got {got}, GradScaler has {want}. For this update, {call} returns {returned}, but "
                     "GradScaler's rule gives ({want_scale:.6g}, {want_tracker}).", what=what, got=got_value,
                     want=want_value, call=call, returned=returned, want_scale=want_scale,
                     want_tracker=want_tracker), UPDATE_SCALE)


def echo_is_faithful(echo):
    """Does state_dict() of a scaler that loaded scenarios.PROBE_STATE report it back?"""
    return isinstance(echo, dict) and all(
        is_number(echo.get(key)) and math.isclose(echo[key], value, rel_tol=1e-6)
        for key, value in scenarios.PROBE_STATE.items())


def tracker_mistake(student, what, got, want, transition, options, echo):
    if not echo_is_faithful(echo):
        return Mistake(_("{what}: state_dict()['_growth_tracker'] is {got}, GradScaler's is {want}; and a scaler that "
                         "loaded a state with tracker {probe} reports {echo}: state_dict() must report the values the "
                         "scaler holds.", what=what, got=got, want=want,
                         probe=scenarios.PROBE_STATE["_growth_tracker"], echo=shown(echo)), STATE)
    return transition_mistake(student, _("{what}, the growth tracker", what=what), got, want, transition, options)


def raised_text(names):
    """'RuntimeError: message' without its final period (the messages add their own)."""
    text = describe_raised(names)
    return text.rstrip(". ") if isinstance(text, str) else text


def keys_text(state):
    return ", ".join(sorted(map(str, state))) if isinstance(state, dict) else shown(state)


def stop_mistake(stopped):
    """The scaler raised inside a scenario: name the call, the iteration and the line."""
    call, iteration = stopped["call"], stopped["iteration"]
    error = raised_text(stopped["raised"])
    line, code = (stopped.get("line") or [0, ""])[:2]
    where = _(" (loss_scaler.py line {line}: {code})", line=line, code=str(code).strip()) if line else ""
    if iteration < 0:
        return Mistake(_("before the first iteration, {call}() raised {error}{where}.", call=call, error=error,
                         where=where), CALL_TODO.get(call, UPDATE))
    if call in ("unscale_", "step") and iteration > 0 and raised_is(stopped["raised"], "RuntimeError"):
        return Mistake(_("iteration {k}: {call}() raised {error}{where}, although it worked in the iterations before: "
                         "update() must start a new iteration, after which unscale_ and step are allowed again.",
                         k=iteration + 1, call=call, error=error, where=where), UPDATE)
    return Mistake(_("iteration {k}: {call}() raised {error}{where}.", k=iteration + 1, call=call, error=error,
                     where=where), CALL_TODO.get(call, UPDATE))


# -- gradients ------------------------------------------------------------------------------------
def grads_mismatch(got, want, rtol=1e-4):
    """None when the gradient lists agree, else (index, got/expected ratio or None)."""
    if not isinstance(got, list) or len(got) != len(want):
        return 0, None
    for index, (a, e) in enumerate(zip(got, want)):
        if e is None or a is None:
            if (a is None) != (e is None):
                return index, None
            continue
        if not torch.is_tensor(a) or a.shape != e.shape:
            return index, None
        a64, e64 = a.double(), e.double()
        if not (torch.equal(torch.isnan(a64), torch.isnan(e64)) and torch.equal(torch.isinf(a64), torch.isinf(e64))):
            return index, None
        finite = torch.isfinite(e64)
        a_f, e_f = a64[finite], e64[finite]
        norm = float(e_f.norm())
        if float((a_f - e_f).norm()) > rtol * norm or (norm == 0.0 and float(a_f.norm()) != 0.0):
            chosen = e_f.abs() > 1e-30
            return index, (float((a_f[chosen] / e_f[chosen]).median()) if bool(chosen.any()) else None)
    return None


def grads_mistake(what, mismatch, scale, unscaled_explicitly, earlier=()):
    """The gradients after unscaling differ: by 1/scale, the scale or scale² is a known mistake, and so is
    the current scale over one of ``earlier`` (the scales of the iterations before): an inverse kept from
    an earlier iteration."""
    index, ratio = mismatch
    if ratio is None:
        return Mistake(_("{what}: param.grad[{index}] has None or inf/NaN entries where GradScaler's has not (or the "
                         "reverse).", what=what, index=index), UNSCALE)
    name = known_ratio(ratio, {ONE_OVER_SCALE: 1.0 / scale, THE_SCALE: scale, SCALE_SQUARED: scale * scale})
    stale = next((value for value in earlier if name is None and value != scale
                  and known_ratio(ratio, {THE_SCALE: scale / value})), None)
    if stale is not None:
        return Mistake(_("{what}: param.grad[{index}] is {ratio:.4g} times GradScaler's, which is exactly the current "
                         "scale {scale:g} divided by {earlier:g}, the scale of an earlier iteration: unscale_ must "
                         "divide by the scale as it is now (update() changes it), not by an inverse computed "
                         "before.", what=what, index=index, ratio=ratio, scale=scale, earlier=stale), UNSCALE)
    todo, advice = UNSCALE, _("unscale_ must divide every param.grad by the current scale (e.g. multiply it by "
                              "1/scale), in place.")
    if name == ONE_OVER_SCALE and unscaled_explicitly:
        todo, advice = STEP, _("step() unscaled them a second time after your explicit unscale_(): step() unscales "
                               "only when unscale_ was not called in this iteration.")
    elif name == ONE_OVER_SCALE:
        advice = _("they were divided by the scale twice: unscale_ divides each param.grad by the scale once.")
    elif name == THE_SCALE and not unscaled_explicitly:
        todo, advice = STEP, _("they are still scaled: step() must call unscale_ first when it was not called in "
                               "this iteration.")
    elif name == THE_SCALE:
        advice = _("they are still scaled: unscale_ must divide every param.grad by the scale, in place.")
    elif name == SCALE_SQUARED:
        advice = _("unscale_ multiplied them by the scale instead of dividing by it.")
    factor = _(", which is exactly {name}", name=name) if name else ""
    return Mistake(_("{what}: param.grad[{index}] is {ratio:.4g} times GradScaler's{factor}. {advice}", what=what,
                     index=index, ratio=ratio, factor=factor, advice=advice), todo)


# -- one training run side by side -------------------------------------------------------------------
def skip_mistake(k, poison, want_skip, before, after, called=None, own_unscale=False):
    """step() skipped where GradScaler did not (or the reverse). update()'s backoff
    tells whether found_inf was recorded (then step ignored it) or not; ``own_unscale``:
    with an explicit unscale_() the skips are right, so step() did not unscale by itself."""
    if own_unscale:
        return Mistake(_("iteration {k}: GradScaler {want}, your scaler did not; with an explicit unscale_() before "
                         "step() your scaler gets it right, so step() did not unscale by itself: step() must call "
                         "unscale_ when it was not called in this iteration (that is where found_inf is recorded).",
                         k=k, want=_("skips the step and backs off") if want_skip
                         else _("steps and keeps the scale")), STEP)
    if called is not None and called > 1:
        return Mistake(_("iteration {k}: one step() called optimizer.step {count} times; it calls it once, or not at "
                         "all when the step is skipped.", k=k, count=called), STEP)
    backed_off = after < before if is_number(after) and is_number(before) else None
    if want_skip:
        cause = _("a gradient holds {value}", value=poison) if poison else _("the FP16 backward overflowed")
        if backed_off is False:
            return Mistake(_("iteration {k}: {cause}, so GradScaler skips optimizer.step and backs off; your scaler "
                             "stepped and did not back off (scale {before:.6g} -> {after:.6g}): unscale_ did not "
                             "record found_inf.", k=k, cause=cause, before=before, after=after), UNSCALE)
        if backed_off:
            return Mistake(_("iteration {k}: {cause}, so GradScaler skips optimizer.step; your step() ran it although "
                             "update() saw the inf/NaN (scale {before:.6g} -> {after:.6g}): when found_inf is set, "
                             "step() must return None without calling optimizer.step.", k=k, cause=cause,
                             before=before, after=after), STEP)
        return Mistake(_("iteration {k}: {cause}, so GradScaler skips optimizer.step; your step() ran it.", k=k,
                         cause=cause), STEP)
    if backed_off:
        return Mistake(_("iteration {k}: every gradient is finite and GradScaler steps, but your scaler skipped the "
                         "step and backed off (scale {before:.6g} -> {after:.6g}): unscale_ recorded found_inf for "
                         "finite gradients.", k=k, before=before, after=after), UNSCALE)
    return Mistake(_("iteration {k}: every gradient is finite and GradScaler steps, but your step() did not call "
                     "optimizer.step: step() skips only when found_inf is set.", k=k), STEP)


def check_iteration(student, got, want, spec, i):
    k = i + 1
    explicit = bool(spec.get("explicit_unscale") or spec.get("clip")) or i in spec.get("no_step", ())
    before, after = at(got["scales_before"], i), at(got["scales"], i)
    ratio = at(got["scaled_ratio"], i)
    if is_number(before) and is_number(ratio):
        expect(math.isclose(ratio, before, rel_tol=1e-5),
               numbers_message(_("iteration {k}: scale(loss) / loss", k=k), ratio, before,
                               {THE_SCALE: before, ONE_OVER_SCALE: 1.0 / before if before else 0.0}), SCALE)
    got_return, want_return = at(got["step_returns"], i), at(want["step_returns"], i)
    calls = at(got["calls"], i)
    if got_return is not MISSING and i not in spec.get("no_step", ()):
        called = calls - (got["calls"][i - 1] if i else 0) if calls is not MISSING else None
        want_called = want_return is not None
        if called is not None and called != int(want_called):
            raise skip_mistake(k, spec.get("inject", {}).get(str(i)), not want_called, before, after, called,
                               not explicit and step_skips_its_own_unscale(student, spec, want))
        if (got_return is None) != (want_return is None):
            if called is None:
                raise skip_mistake(k, spec.get("inject", {}).get(str(i)), not want_called, before, after, called,
                                   not explicit and step_skips_its_own_unscale(student, spec, want))
            expect(False, _("iteration {k}: step() returned {got} although it {action}: it must return "
                            "optimizer.step()'s value when it steps, and None when it skips.", k=k,
                            got=shown(got_return), action=_("called optimizer.step") if called
                            else _("skipped optimizer.step")), STEP)
        expect(got_return == want_return,
               _("iteration {k}: step() returned {got}, but optimizer.step() returned {want}: step() must return "
                 "optimizer.step()'s own return value.", k=k, got=shown(got_return), want=shown(want_return)), STEP)
    seen = at(got["seen_grads"], i)
    if seen is not MISSING:
        mismatch = grads_mismatch(seen, want["seen_grads"][i])
        if mismatch:
            raise grads_mistake(_("iteration {k}: the gradients after unscaling", k=k), mismatch,
                                want["scales_before"][i], explicit, want["scales_before"][:i])
    between = at(got["scales_between"], i)
    if between is not MISSING:
        expect(is_number(between) and math.isclose(between, want["scales_between"][i], rel_tol=1e-5),
               _("iteration {k}: get_scale() between step() and update() returned {got}; GradScaler still holds "
                 "{want:.6g} there: only update() changes the scale.", k=k, got=shown(between),
                 want=want["scales_between"][i]), STEP)
    start_tracker = int((spec.get("load_state") or {}).get("_growth_tracker", 0))
    transition = ((want["scales_before"][i], want["trackers"][i - 1] if i else start_tracker,
                   want["scales"][i] < want["scales_before"][i]), (want["scales"][i], want["trackers"][i]))
    options = rule_options(spec.get("load_state") or spec["scaler"])
    if after is not MISSING and not (is_number(after) and math.isclose(after, want["scales"][i], rel_tol=1e-5)):
        raise transition_mistake(student, _("the scale after update {k}", k=k), shown(after),
                                 f"{want['scales'][i]:.6g}", transition, options)
    tracker = at(got["trackers"], i)
    if tracker not in (MISSING, None) and tracker != want["trackers"][i]:
        raise tracker_mistake(student, _("after update {k}", k=k), tracker, want["trackers"][i], transition, options,
                              got.get("echo"))


def compare_runs(student, got, want, spec):
    expect(isinstance(got, dict) and isinstance(got.get("scales"), list),
           _("the training run returned no results."), UPDATE)
    stopped = got.get("stopped")
    last = len(want["scales"]) - 1 if not stopped else min(stopped["iteration"], len(want["scales"]) - 1)
    for i in range(last + 1):
        check_iteration(student, got, want, spec, i)
    if stopped:
        raise stop_mistake(stopped)
    expect(len(got["scales"]) == len(want["scales"]), _("the training run stopped early."), UPDATE)
    expect(got["step_calls"] == want["step_calls"],
           _("optimizer.step ran {got} times in {count} iterations; with GradScaler it runs {want} times.",
             got=got["step_calls"], count=len(want["scales"]), want=want["step_calls"]), STEP)
    expect_relative_error(got["parameters"], want["parameters"], _("the parameters after training"), 1e-5, todo=STEP)
    for index, (a, e) in enumerate(zip(got["optimizer_state"], want["optimizer_state"])):
        expect(isinstance(a, dict) and sorted(a) == sorted(e),
               _("the optimizer state of parameter {index} has entries {got}, GradScaler's run has {want}.",
                 index=index, got=keys_text(a), want=keys_text(e)), STEP)
        for key in e:
            if torch.is_tensor(e[key]):
                expect_relative_error([a[key]], [e[key]], _("optimizer state '{key}'", key=key), 1e-5, todo=STEP)


def run_side_by_side(student, spec):
    got = value_of(student.scenario("scaler_training", spec), FILE)
    compare_runs(student, got, references.with_gradscaler("scaler_training", spec), spec)
