"""The shape an answer must have before a check reads it (autograder.intake.answer_shapes):
what each piece accepts and refuses, what a refusal says, random values against every
declared shape (a ShapeError or nothing, never another exception), the cost of the largest
answer the wire lets through, and every named run of the assignment declaring the shape
of its answer, which the reference solution's answers have."""
import math
import random
import time

import pytest
import torch

from autograder.assignment import scenarios
from autograder.intake import answer_shapes as shapes
from autograder.intake.answer_shapes import (ANY, BOOL, FLOAT, INT, NONE, NUMBER, STR, Items, ListOf, MapOf, Record,
                                             ShapeError, Tensor, Where, maybe, one_of)
from autograder.sandbox import assignment_side, wire
from support.forged_answers import random_value, solution, through_the_wire
from support.scenario_specs import OWNER, SPECS

PLAIN = one_of(NONE, FLOAT, STR, Record({"type": STR}))

ACCEPTED = [
    (FLOAT, 1.5), (FLOAT, math.inf), (INT, -3), (NUMBER, 2), (NUMBER, 2.5), (BOOL, False), (STR, ""), (NONE, None),
    (ANY, wire.Opaque("generator")), (Tensor(), torch.zeros(2, dtype=torch.int8)),
    (Tensor("float16", (2, 1)), torch.zeros(2, 1, dtype=torch.float16)), (ListOf(INT, length=2), [1, 2]),
    (ListOf(INT, max_length=2), []), (Items(INT, STR), [3, "x"]), (Record({"a": INT}, {"b": STR}), {"a": 1}),
    (Record({"a": INT}, {"b": STR}), {"a": 1, "b": "x"}), (MapOf(PLAIN), {"x": {"type": "list"}, "y": None}),
    (MapOf(BOOL, keys=["p", "q"]), {"q": True, "p": False}), (maybe(Tensor()), None), (PLAIN, "text"),
    (Where(ListOf(INT), lambda value: sum(value) == 3, "sums to 3"), [1, 2]),
]

REFUSED = [
    (FLOAT, 1), (FLOAT, True), (INT, 1.0), (INT, True), (NUMBER, False), (BOOL, 0), (STR, 3),
    (NONE, 0), (Tensor(), [1.0]), (Tensor(), 1.0), (Tensor("float32"), torch.zeros(2, dtype=torch.float64)),
    (Tensor(shape=(2,)), torch.zeros(3)), (ListOf(INT), (1, 2)), (ListOf(INT, length=2), [1]),
    (ListOf(INT, min_length=1), []), (ListOf(INT, max_length=1), [1, 2]), (ListOf(INT), [1, "2"]),
    (Items(INT, STR), [3]), (Items(INT, STR), ["x", 3]), (Record({"a": INT}), {}), (Record({"a": INT}), {"a": 1, "c": 2}),
    (Record({"a": INT}), [("a", 1)]), (MapOf(INT), {"x": 1.0}), (MapOf(INT, keys=["x"]), {"x": 1, "y": 2}),
    (MapOf(INT, keys=["x", "y"]), {"x": 1}), (maybe(Tensor()), 0.0), (PLAIN, {"type": 3}), (PLAIN, {"kind": "x"}),
    (Where(ListOf(INT), lambda value: sum(value) == 3, "sums to 3"), [1, 1]),
    (Where(ListOf(INT), lambda value: sum(value) == 3, "sums to 3"), [1, "2"]),
]


@pytest.mark.parametrize("shape, value", ACCEPTED)
def test_a_value_of_its_shape_is_accepted(shape, value):
    shapes.check(value, shape)


@pytest.mark.parametrize("shape, value", REFUSED)
def test_a_value_of_another_shape_is_refused(shape, value):
    with pytest.raises(ShapeError):
        shapes.check(value, shape)


def test_what_a_refusal_says():
    """Where the answer differs and the types involved, never a value the box chose."""
    run = Record({"scales": ListOf(PLAIN), "parameters": ListOf(Tensor())})
    cases = [({"scales": [1.0, ["secret"]], "parameters": []}, "value['scales'][1]: expected None or a float or a "
                                                                "string or a dict of 'type', got list"),
             ({"scales": [], "parameters": [torch.ones(1), "secret"]}, "value['parameters'][1]: expected a tensor, "
                                                                       "got str"),
             ({"scales": [{"type": ["secret"]}], "parameters": []}, "value['scales'][0]['type']: expected a string, "
                                                                    "got list"),
             ({"scales": []}, "value: no 'parameters'"), ({"scales": [], "parameters": [], "secret": 1},
                                                         "value: unexpected 'secret'")]
    for value, said in cases:
        with pytest.raises(ShapeError) as refused:
            shapes.check(value, run)
        assert str(refused.value) == said
    with pytest.raises(ShapeError, match=r"value\['m'\]: no 'y'"):
        shapes.check({"m": {"x": 1}}, Record({"m": MapOf(INT, keys=["x", "y"])}))
    with pytest.raises(ShapeError, match=r"expected a float32 tensor, got float64"):
        shapes.check(torch.zeros(1, dtype=torch.float64), Tensor("float32"))
    with pytest.raises(ShapeError, match=r"expected 3 entries, got 1"):
        shapes.check([1], ListOf(INT, length=3))


# -- every named run declares its answer; honest answers have it ----------------------------------


def test_every_named_run_declares_the_shape_of_its_answer():
    assert set(scenarios.ANSWER_SHAPES) == set(scenarios.STUDENT_SCENARIOS) == set(SPECS)
    for name, spec in SPECS.items():
        assert isinstance(assignment_side.answer_shape(name, spec), shapes.Shape), name


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_reference_solutions_answers_have_their_shape(name):
    module = solution(OWNER[name.split("_")[0]])
    answer = through_the_wire(scenarios.STUDENT_SCENARIOS[name](module, SPECS[name]))
    shapes.check(answer, assignment_side.answer_shape(name, SPECS[name]))


def test_random_values_are_refused_with_a_shape_error_alone():
    """Fuzz: random nested values (dicts, lists, tuples, tensors of every dtype, opaque
    objects, non-finite floats, odd strings) against every declared shape: a value is
    accepted or refused with a ShapeError, never another exception."""
    declared = [assignment_side.answer_shape(name, spec) for name, spec in SPECS.items()]
    declared += [PLAIN, Record({"a": ListOf(maybe(Tensor("float32")), max_length=2)}), Items(INT, STR)]
    accepted = 0
    for seed in range(300):
        rng = random.Random(seed)
        value = random_value(rng)
        for shape in declared:
            try:
                shapes.check(value, shape)
                accepted += 1
            except ShapeError:
                pass
    assert accepted  # some random values do fit (a None, a float against PLAIN)


@pytest.mark.slow
def test_the_largest_answer_the_wire_lets_through_is_checked_quickly():
    """A check walks an answer once: 100,000 values (the wire's bound) in well under a second."""
    shape = scenarios.ANSWER_SHAPES["scaler_training"]({"iterations": 10})
    run = through_the_wire(scenarios.scaler_training(solution("loss_scaler").LossScaler,
                                                     {"seed": 1, "iterations": 10, "scaler": {}}))
    run["scales"] = [1.0] * 10
    run["optimizer_state"] = [{f"k{index}": 1.0 for index in range(99_000)}]
    started = time.thread_time()
    shapes.check(run, shape)
    assert time.thread_time() - started < 0.5
    many = [[None, 1.0, "x", {"type": "y"}] * 2] * 12_000  # ~100,000 values against nested alternatives
    started = time.thread_time()
    with pytest.raises(ShapeError):
        shapes.check(many + [[1]], ListOf(ListOf(PLAIN)))
    assert time.thread_time() - started < 0.5
