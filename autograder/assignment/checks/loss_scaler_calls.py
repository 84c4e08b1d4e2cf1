"""The loss_scaler methods called one at a time, for the visible and hidden suites alike:
unscale_ on hand-made gradients (in place, every group and dtype, found_inf), step()'s
arguments and return value, and the misuse GradScaler refuses -- each against GradScaler's
own answer, with the TODO at fault named (loss_scaler_checks.py judges whole runs)."""
from autograder.assignment.checks import references
from autograder.assignment.checks.loss_scaler_checks import (FILE, STEP, UNSCALE, grads_mismatch, grads_mistake,
                                                             is_number, shown)
from autograder.authoring import _, Mistake, expect, raised_instead, raised_is, value_of


# -- unscale_ on its own ----------------------------------------------------------------------------
def check_unscale(got, want, spec, label):
    expect(got["same_objects"] is True, _("{what}: unscale_ must modify each param.grad in place, not replace it.",
                                          what=label), UNSCALE)
    mismatch = grads_mismatch(got["grads"], want["grads"], 1e-6 if spec["dtype"] != "bfloat16" else 8e-3)
    if mismatch:
        raise grads_mistake(_("{what}: the gradients after unscale_", what=label), mismatch,
                            spec["scaler"]["init_scale"], True)
    if got["step_calls"] == want["step_calls"] and got["step_result"] != want["step_result"]:
        raise Mistake(_("{what}: after unscale_, step() returned {got}, GradScaler's returns {want}: step() returns "
                        "optimizer.step()'s value when it steps, and None when it skips.", what=label,
                        got=shown(got["step_result"]), want=shown(want["step_result"])), STEP)
    if got["step_calls"] != want["step_calls"]:
        scale, after = spec["scaler"]["init_scale"], got["scale_after_update"]
        recorded = (after < scale) == bool(spec.get("poison")) if is_number(after) else False
        want_action = _("skips optimizer.step") if want["step_result"] is None else _("calls optimizer.step")
        if recorded:
            raise Mistake(_("{what}: after an explicit unscale_, GradScaler {action}, but your step() called it "
                            "{calls} time(s), although update() then saw the right found_inf: step() must use the "
                            "found_inf that unscale_ recorded.", what=label, action=want_action,
                            calls=got["step_calls"]), STEP)
        raise Mistake(_("{what}: after unscale_, GradScaler {action}, but your scaler did not: found_inf is recorded "
                        "wrongly (it must be True exactly when some element of some gradient is inf or NaN).",
                        what=label, action=want_action), UNSCALE)


# -- step()'s arguments ------------------------------------------------------------------------------
def check_step_arguments(student, spec):
    """step(optimizer, *args, **kwargs) with each of ``spec['calls']``: what optimizer.step received and
    what step() returned, against GradScaler's."""
    got = value_of(student.scenario("scaler_step_arguments", spec), FILE)
    want = references.with_gradscaler("scaler_step_arguments", spec)
    expect(len(got["received"]) == len(want["received"]),
           _("optimizer.step was called {got} times for {count} step() calls (one with an inf gradient); GradScaler "
             "calls it {want} times.", got=len(got["received"]), count=len(spec["calls"]),
             want=len(want["received"])), STEP)
    for a, e in zip(got["received"], want["received"]):
        expect(a == e, _("optimizer.step received closure={got_closure}, args {got_args}, kwargs {got_kwargs}; "
                         "GradScaler passes closure={want_closure}, args {want_args}, kwargs {want_kwargs}.",
                         got_closure=a["closure"], got_args=shown(a["args"]), got_kwargs=shown(a["kwargs"]),
                         want_closure=e["closure"], want_args=shown(e["args"]), want_kwargs=shown(e["kwargs"])),
               STEP)
    for index, (a, e) in enumerate(zip(got["returns"], want["returns"])):
        expect(a == e, _("call {k}: step() returned {got}, GradScaler's returns {want} (optimizer.step()'s value, "
                         "or None when skipped).", k=index + 1, got=shown(a), want=shown(e)), STEP)


# -- misuse -----------------------------------------------------------------------------------------
MISUSE = {
    "double_unscale": _("a second unscale_() in one iteration"),
    "unscale_after_step": _("unscale_() after step()"),
    "double_step": _("a second step() before update()"),
    "double_step_after_skip": _("a second step() after a skipped step (inf gradient)"),
    "unscale_after_skipped_step": _("unscale_() after a skipped step (inf gradient)"),
}


def check_misuse_raises(student, cases):
    """Each of ``cases`` (scenarios.scaler_misuse, keys of MISUSE) raises RuntimeError, as with GradScaler:
    step() marks the optimizer as stepped (TODO 7)."""
    got = value_of(student.scenario("scaler_misuse", {"cases": list(cases)}), FILE)
    for case in cases:
        raised = got[case]["raised"]
        expect(raised_is(raised, "RuntimeError"), _("{what}: expected RuntimeError, but {outcome}.",
                                                    what=MISUSE[case], outcome=raised_instead(raised)), STEP)
