"""Whose failure (docs/sandbox.md): an exception of the judge's own reading of an answer is the
grader's; in the box, where student code can change anything, our code's failure is only a
claim, which the judge believes when its own code, with none of the student's, fails the same
way (``Sandbox._settle``). Everything here runs in this process: a box stand-in, the judge's
decisions on claims made up to match or miss."""
import pytest
import torch

from autograder import active_assignment
from autograder.assignment.scenarios import training, update
from autograder.sandbox import assignment_side, wire, worker
from autograder.sandbox.client import Limits, Outcome, Sandbox, StudentError
from support.box_stand_in import StandInBox, framed
from support.broken_grader import Binascii310, BrokenEncoder, place

TENSOR = {"$tensor": "float32", "shape": [2], "data": "AACAPwAAAEA="}  # [1.0, 2.0]


DECODE_LINE = place(wire._strict_base64_311, "a2b_base64(")
ENCODE_LINE = place(wire._encode_tensor, "b2a_base64(")


def raised(function, *args):
    try:
        function(*args)
    except Exception as exc:  # noqa: BLE001 - what the test looks at
        return exc
    raise AssertionError(f"{function.__name__} raised nothing")


def test_the_box_claims_a_failure_only_where_our_code_ran_without_the_students(tmp_path, monkeypatch):
    monkeypatch.setattr(wire, "binascii", Binascii310)
    roots = assignment_side.grader_roots()
    ours = raised(wire.decode_value, TENSOR)
    claim = worker.claim("inputs", ours, str(tmp_path), roots)
    assert claim == {"phase": "inputs", "type": "TypeError", "where": DECODE_LINE}
    assert worker.claim("call", ours, str(tmp_path), roots) is None  # the student's function ran: theirs

    # the same failure reached through a function of the student's file is the student's
    student_file = str(tmp_path / "amp_update.py")
    namespace = {"decode": wire.decode_value}
    exec(compile("def through(node):\n    return decode(node)\n", student_file, "exec"), namespace)
    assert worker.claim("inputs", raised(namespace["through"], TENSOR), str(tmp_path), roots) is None
    assert worker.claim("answer", SystemExit(3), str(tmp_path), roots) is None


@pytest.mark.parametrize("report, expected", [
    ({"type": "TypeError", "grader": {"phase": "answer", "type": "TypeError", "where": "w.py:1"}},
     {"phase": "answer", "type": "TypeError", "where": "w.py:1"}),
    ({"grader": {"phase": "call", "type": "TypeError", "where": "w.py:1"}}, None),   # not a phase of ours
    ({"grader": ["answer"]}, None),
    ("not a report", None),
    ({"grader": {"phase": "scenario", "type": 7}}, {"phase": "scenario", "type": "", "where": ""}),
])
def test_the_judge_reads_a_claim_as_plain_short_text(report, expected):
    assert worker.read_claim(report) == expected


def test_a_claims_text_is_cut_and_made_writable():
    claim = worker.read_claim({"grader": {"phase": "inputs", "type": "T\x00" * 400, "where": "\ud800" * 1000}})
    assert claim["type"].count("T") <= 300 and "\x00" not in claim["type"]  # cut, NUL shown escaped
    assert claim["where"].count("d800") <= 300
    claim["where"].encode("utf-8")


def test_the_codec_shows_its_own_bug_on_its_own_probe_values(monkeypatch):
    assert wire.codec_failures() == []
    monkeypatch.setattr(wire, "binascii", Binascii310)
    assert {(kind, where) for kind, where, _message in wire.codec_failures()} == {("TypeError", DECODE_LINE)}
    monkeypatch.setattr(wire, "binascii", BrokenEncoder)
    assert {(kind, where) for kind, where, _message in wire.codec_failures()} == {("TypeError", ENCODE_LINE)}


def test_a_scenario_is_rerun_with_a_stand_in_and_with_the_reference(monkeypatch):
    active_assignment.current().hooks().preload()  # the judge's preload: the references
    aliasing = {"seed": 3, "scale": 2.0}
    steps = {"seed": 3, "updates": 1, "microbatches": 2, "precision": "fp32"}
    assert assignment_side.scenario_failures("unscale_aliasing", aliasing, "amp_update") == []
    assert assignment_side.scenario_failures("training_steps", steps, "amp_training_step") == []

    def broken(*args, **kwargs):
        raise AttributeError("injected")

    # before the student's call: the stand-in reaches it
    monkeypatch.setattr(update, "generator", broken)
    found = assignment_side.scenario_failures("unscale_aliasing", aliasing, "amp_update")
    assert found and {kind for kind, _where, _message in found} == {"AttributeError"}
    assert found[0][1] == place(update.unscale_aliasing, "generator(")
    # after it: only the run with the reference train_step (the hidden oracle) gets there
    monkeypatch.setattr(training, "parameters_of", broken)
    found = assignment_side.scenario_failures("training_steps", steps, "amp_training_step")
    assert [kind for kind, _where, _message in found] == ["AttributeError"]
    assert assignment_side.scenario_failures("no_such_scenario", steps, "amp_training_step") == []


def judge(module="amp_update"):
    return Sandbox(module, {"present": False}, boxes=None)


def test_a_claim_the_judge_cannot_reproduce_stays_the_students(monkeypatch):
    """The student's code broke our decoder in its own process (the very line of the 3.10 bug):
    the judge decodes what it sent without trouble, so the call's failure is the student's."""
    sandbox = judge()
    theirs = Outcome(False, error=StudentError("exception", "TypeError", "a2b_base64() takes no keyword arguments"))
    message = {"op": "call", "function": "f", "args": [TENSOR], "kwargs": {"scale": 2.0}}
    claim = {"phase": "inputs", "type": "TypeError", "where": DECODE_LINE}
    assert sandbox._settle(claim, message, theirs) is theirs
    assert sandbox._settle(dict(claim, phase="answer"), message, theirs) is theirs
    assert sandbox.faults == []


def test_a_claim_the_judge_reproduces_is_the_graders(monkeypatch):
    monkeypatch.setattr(wire, "binascii", Binascii310)
    sandbox = judge()
    theirs = Outcome(False, error=StudentError("exception", "TypeError", "whatever the box said"))
    message = {"op": "call", "function": "f", "args": [TENSOR], "kwargs": {}}
    claim = {"phase": "inputs", "type": "TypeError", "where": DECODE_LINE}
    assert sandbox._settle(dict(claim, where="autograder/sandbox/wire.py:1"), message, theirs) is theirs
    assert sandbox._settle(dict(claim, type="ValueError"), message, theirs) is theirs
    outcome = sandbox._settle(claim, message, theirs)
    assert not outcome.ok and outcome.error.kind == "grader"
    assert (outcome.error.type, outcome.error.where) == ("TypeError", DECODE_LINE)
    assert "keyword" in outcome.error.message  # the judge's own words, not the box's
    assert sandbox.faults == [outcome.error]

    monkeypatch.setattr(wire, "binascii", BrokenEncoder)
    answer = {"phase": "answer", "type": "TypeError", "where": ENCODE_LINE}
    assert sandbox._settle(answer, {"op": "call", "function": "f", "args": []}, theirs).error.kind == "grader"


def call_stand_in(answer):
    sandbox = Sandbox("toy_sum", {"present": True}, boxes=None, limits_=Limits(call_timeout=5.0))
    box = StandInBox(answer)
    sandbox._box = box
    try:
        return sandbox, sandbox._request({"op": "call", "function": "f", "args": [], "kwargs": {}}, 5.0)
    finally:
        box.close()


def tensor_answer(request_id):
    return framed(wire._ENCODER.encode({"id": request_id, "ok": True,
                                        "result": {"value": wire.encode_value(torch.ones(3))}}).encode())


def test_the_judges_own_decoder_failing_is_the_graders_not_an_unreadable_answer(monkeypatch):
    sandbox, outcome = call_stand_in(tensor_answer)
    assert outcome.ok and torch.equal(outcome.value, torch.ones(3)) and sandbox.faults == []

    monkeypatch.setattr(wire, "binascii", Binascii310)
    sandbox, outcome = call_stand_in(tensor_answer)
    assert outcome.error.kind == "grader", outcome.error
    assert (outcome.error.type, outcome.error.where) == ("TypeError", DECODE_LINE)
    assert sandbox.faults == [outcome.error] and sandbox._box is None  # that box is not used again

    # a frame that breaks the protocol is still the box's
    def bad_tensor(request_id):
        return framed(wire._ENCODER.encode({"id": request_id, "ok": True, "result": {
            "value": {"$tensor": "float32", "shape": [2], "data": "!!!!!!!!"}}}).encode())

    monkeypatch.undo()
    sandbox, outcome = call_stand_in(bad_tensor)
    assert outcome.error.kind == "protocol" and sandbox.faults == []


def test_a_failure_of_the_workers_own_report_keeps_the_students_error(tmp_path, monkeypatch):
    """Where the worker cannot say where in the student's file an error was (Python 3.10 has no
    ``co_positions``), the error keeps its type and message; the worker does not die over it,
    which the judge would read as the student's crash."""
    box = worker.Worker(str(tmp_path), "amp_update")
    namespace = {}
    exec(compile("def f():\n    raise ValueError('theirs')\n", str(tmp_path / "amp_update.py"), "exec"), namespace)
    theirs = raised(namespace["f"])
    assert box._report(theirs)["line"] == 2

    def no_positions(code, offset):
        raise AttributeError("'code' object has no attribute 'co_positions'")

    monkeypatch.setattr(worker, "_position", no_positions)
    assert box._report(theirs) == {"type": "ValueError", "message": "theirs"}
