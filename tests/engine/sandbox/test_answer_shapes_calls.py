"""How the judge's call path holds a box to the shapes of its answers
(autograder.sandbox.client, wire): an answer to a named run that is not of its declared
shape, an answer of a guarded module without the guard's record, arguments sent back in
another form than they went -- each is that call's protocol error, charged to it, its box
ended, and the feedback says the answer could not be read; an answer of the right shape
is the call's value."""
import json

import pytest
import torch

from autograder.assignment import scenarios
from autograder.judging.call_errors import describe
from autograder.sandbox import wire
from autograder.sandbox.client import Limits, Sandbox
from support.forged_answers import solution, through_the_wire
from support.box_stand_in import StandInBox, framed, reply
from support.scenario_specs import OWNER, SPECS


def _asked(module, answer, ask):
    """(``ask(sandbox)``, the sandbox) for a sandbox of ``module`` whose box writes
    ``answer(request_id)`` to the request."""
    sandbox = Sandbox(module, {"present": True}, boxes=None, limits_=Limits(call_timeout=2.0))
    box = sandbox._box = StandInBox(answer)
    try:
        return ask(sandbox), sandbox
    finally:
        box.close()


def _run(module, name, value, **extra):
    return _asked(module, lambda request_id: reply(request_id, wire.encode_value(value), **extra),
                  lambda sandbox: sandbox.scenario(name, SPECS[name]))


def _watched(result):
    """A call watching its inputs, answered with ``result`` (plain JSON)."""
    return _asked("amp_update", lambda request_id: framed(json.dumps(
        {"id": request_id, "ok": True, "result": result}).encode()),
        lambda sandbox: sandbox.call_watching_inputs("unscale_gradients", [torch.ones(2)], scale=2.0))


def _assert_protocol_error(outcome, sandbox, words):
    assert not outcome.ok and outcome.error.kind == "protocol", outcome
    assert words in outcome.error.message, outcome.error.message
    assert sandbox._box is None and sandbox.spent > 0  # the box ended, the call charged
    said = str(describe(outcome.error, "amp_update.py"))
    assert "could not be read" in said and "could not check" not in said


FORGED = {
    "a list where a dict is expected": lambda answer: list(answer.values()),
    "a key missing": lambda answer: {key: value for key, value in list(answer.items())[1:]},
    "a key too many": lambda answer: dict(answer, more=1.0),
    "a string where a tensor goes": lambda answer: {key: "tensor" if key == "parameters" else value
                                                    for key, value in answer.items()},
    "a run's lists cut short": lambda answer: dict(answer, scales=answer["scales"][:1]),
    "an int for a bool": lambda answer: dict(answer, skipped=[1 for _ in answer["skipped"]]),
    "a tuple for a list": lambda answer: dict(answer, scales=tuple(answer["scales"])),
    "the stop record of another form": lambda answer: dict(answer, stopped={"call": "step", "iteration": 0}),
}


@pytest.mark.slow
@pytest.mark.parametrize("forgery", sorted(FORGED))
def test_an_answer_of_another_shape_is_the_calls_protocol_error(forgery):
    spec = SPECS["scaler_state_round_trip"]
    honest = through_the_wire(scenarios.scaler_state_round_trip(solution("loss_scaler").LossScaler, spec))
    outcome, sandbox = _run("loss_scaler", "scaler_state_round_trip", honest, delegation=[])
    assert outcome.ok and _same(outcome.value, honest)
    outcome, sandbox = _run("loss_scaler", "scaler_state_round_trip", FORGED[forgery](honest), delegation=[])
    _assert_protocol_error(outcome, sandbox, "an answer of the wrong form")


def _same(a, b):
    return wire.encode_value(a) == wire.encode_value(b)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_named_runs_answer_is_held_to_its_shape(name):
    module = OWNER[name.split("_")[0]]
    honest = through_the_wire(scenarios.STUDENT_SCENARIOS[name](solution(module), SPECS[name]))
    outcome, _ = _run(module, name, honest, delegation=[])
    assert outcome.ok and _same(outcome.value, honest)
    for wrong in ([honest], {}, "x", None, 3.0):
        outcome, sandbox = _run(module, name, wrong, delegation=[])
        _assert_protocol_error(outcome, sandbox, "an answer of the wrong form")


@pytest.mark.parametrize("record, kept", [
    (None, None), ([1, "x"], None), ("refused", None), ([["x"]], None), (["x"] * 21, None), ({"x": 1}, None),
    ([], []), (["torch.amp.GradScaler.step"], ["torch.amp.GradScaler.step"]),
])
def test_a_guarded_module_answers_with_the_guards_record(record, kept):
    """An answer of the guarded module without a list of strings there could drop a refusal:
    it is the call's protocol error. Other modules may leave it out."""
    extra = {} if record is None else {"delegation": record}
    honest = through_the_wire(scenarios.scaler_misuse(solution("loss_scaler").LossScaler,
                                                      SPECS["scaler_misuse"]))
    outcome, sandbox = _run("loss_scaler", "scaler_misuse", honest, **extra)
    if kept is None:
        _assert_protocol_error(outcome, sandbox, "no record of what the guard refused")
    else:
        assert outcome.ok and sandbox.delegation == kept
    outcome, sandbox = _run("amp_update", "unscale_aliasing", {"same_list": False, "shared": [False]}, **extra)
    strings = [item for item in (record if isinstance(record, list) else []) if isinstance(item, str)]
    assert outcome.ok and sandbox.delegation == list(dict.fromkeys(strings[:wire.MAX_REFUSALS]))


def test_the_worker_sends_the_guards_record_with_every_answer():
    from autograder.sandbox.worker import Worker

    class Guard:
        SEEN = ["torch.amp.GradScaler.step"]

    worker = Worker(".", "loss_scaler")
    worker.guard = Guard
    assert worker._recorded({"id": "x", "ok": True})["delegation"] == Guard.SEEN
    Guard.SEEN = []
    assert worker._recorded({"id": "x", "ok": False})["delegation"] == []
    worker.guard = None
    assert "delegation" not in worker._recorded({"id": "x", "ok": True})


@pytest.mark.parametrize("args_after, kwargs_after", [
    ({"$dict": {}}, {"$dict": {"scale": 2.0}}), ("x", {"$dict": {"scale": 2.0}}), ([], {"$dict": {"scale": 2.0}}),
    ([[], []], {"$dict": {"scale": 2.0}}), ([[]], {"$dict": {}}), ([[]], {"$dict": {"scale": 2.0, "x": 1}}),
    ([[]], [2.0]), ({"$tuple": [[]]}, {"$dict": {"scale": 2.0}}),
])
def test_arguments_come_back_in_the_form_they_went(args_after, kwargs_after):
    """call_watching_inputs: the arguments as the call left them are a list of as many
    and a dict of the same names (what is inside them is the checks' to judge)."""
    outcome, sandbox = _watched({"value": [], "args_after": args_after, "kwargs_after": kwargs_after})
    _assert_protocol_error(outcome, sandbox, "an answer of the wrong form")


def test_arguments_in_their_own_form_come_back_whatever_they_hold():
    outcome, _ = _watched({"value": "anything", "args_after": [{"$dict": {"x": [1]}}],
                           "kwargs_after": {"$dict": {"scale": "y"}}})
    assert outcome.ok and outcome.args_after == [{"x": [1]}] and outcome.kwargs_after == {"scale": "y"}
