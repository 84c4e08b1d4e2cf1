"""Judging a state_dict round trip of the loss_scaler suites (TODO 9): the state saved
mid-run, the state a fresh scaler reports after loading it, and the run that continues
from it, each against GradScaler's; a difference names the method at fault as a
side-by-side run does (loss_scaler_checks.py)."""
import math

from autograder.assignment.checks import references
from autograder.assignment.checks.loss_scaler_checks import (FILE, MISSING, STATE, STATE_KEYS, at, is_number,
                                                             keys_text, shown, skip_mistake, tracker_mistake,
                                                             transition_mistake)
from autograder.assignment.checks.loss_scaler_probe import step_lacks_own_unscale
from autograder.authoring import _, expect, value_of


def check_state(state, want, what, todo=STATE):
    expect(isinstance(state, dict) and set(state) == set(want),
           _("{what} should have exactly the keys {want}, got {got}.", what=what, want=keys_text(want),
             got=keys_text(state)), todo)
    for key in ("growth_interval", "_growth_tracker"):
        expect(isinstance(state[key], int), _("{what}['{key}'] should be an int like GradScaler's, got {got}.",
                                              what=what, key=key, got=shown(state[key])), todo)
    for key in STATE_KEYS:
        expect(is_number(state[key]) and math.isclose(state[key], want[key], rel_tol=1e-6),
               _("{what}['{key}'] is {got}, GradScaler's is {want}.", what=what, key=key, got=shown(state[key]),
                 want=shown(want[key])), todo)


def check_continuation(student, got, want, spec, first, options, start, label):
    """Scales, trackers and skips of a round-trip run from iteration ``first`` on;
    ``start``: GradScaler's (scale, tracker) before it."""
    scale, tracker = start
    for i in range(first, len(want["scales"])):
        if at(got["skipped"], i) is MISSING:
            break
        k, after = i + 1, at(got["scales"], i)
        if got["skipped"][i] != want["skipped"][i]:
            raise skip_mistake(k, spec.get("inject", {}).get(str(i)), want["skipped"][i], scale, after,
                               own_unscale=step_lacks_own_unscale(student))
        transition = ((scale, tracker, want["skipped"][i]), (want["scales"][i], want["trackers"][i]))
        if after is not MISSING and not (is_number(after) and math.isclose(after, want["scales"][i], rel_tol=1e-5)):
            raise transition_mistake(student, _("{what}, the scale after update {k}", what=label, k=k), shown(after),
                                     f"{want['scales'][i]:.6g}", transition, options)
        tracker_got = at(got["trackers"], i)
        if tracker_got not in (MISSING, None) and tracker_got != want["trackers"][i]:
            raise tracker_mistake(student, _("{what}, after update {k}", what=label, k=k), tracker_got,
                                  want["trackers"][i], transition, options, got.get("probe_echo"))
        scale, tracker = want["scales"][i], want["trackers"][i]


# the scales and skips agree when this is checked: what differs is what the optimizer was given
PARAMETERS_AFTER_RUN = _("the parameters after the run (the scales and skipped steps agree with GradScaler's, so "
                         "the gradients given to optimizer.step differ)")


def round_trip(student, spec):
    got = value_of(student.scenario("scaler_state_round_trip", spec), FILE)
    want = references.with_gradscaler("scaler_state_round_trip", spec)
    expect(isinstance(got, dict) and isinstance(got.get("scales"), list), _("the run returned no results."), STATE)
    return got, want
