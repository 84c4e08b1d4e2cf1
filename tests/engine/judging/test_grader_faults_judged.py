"""A grader fault is the grader's (docs/sandbox.md, *Whose failure*): a test during which the
judge's own code failed is not graded -- 0 of 0, so it counts neither for nor against the
student -- says so in the student's language, and is counted in results.json for the staff.
Graded in this process on the toy assignment (tests/toy_assignment: add, 3 visible points;
total, 2 hidden points), with the judge's own code broken by the test."""
import json

import pytest

from autograder.judging import engine, judge
from autograder.judging.results import GradeReport
from autograder.reports import classroom, results_file, terminal
from autograder.reports.gradescope import write_results
from autograder.sandbox import wire
from support import toy
from support.broken_grader import Binascii310, place

# add answers a 0-dim tensor (equal to 5: the check accepts it), total a plain int
RETURNS_A_TENSOR = toy.SOLUTION.replace("def add(a, b):\n    return a + b",
                                        "def add(a, b):\n    import torch\n    return torch.tensor(a + b)"
                                        ).replace("    return result", "    return int(result)")
assert RETURNS_A_TENSOR.count("torch") == 2 and "int(result)" in RETURNS_A_TENSOR
WORDS = {"en": ("The grader could not check this", "This is not your mistake", "NOT GRADED",
                "The grader's own code failed in"),
         "zh": ("评分器无法检查这一项", "这不是你的错误", "未评分", "评分器自己的代码在")}
STUDENTS_FAULT = {"en": ("Your code raised", "could not be read"), "zh": ("你的代码抛出了异常", "无法读取你代码的返回结果")}


def grade(tmp_path, toy_boxes, lang="en", source=toy.SOLUTION):
    with toy.active():
        report = engine.grade_submission(toy.submission(tmp_path / "sub", source), seed=5, boxes=toy_boxes,
                                         lang=lang)
        path = write_results(report, tmp_path / "results.json")
        data = results_file.load(path)  # read as strictly as every later report reads it
        return report, data, terminal.render(results_file.report_from(data), width=80)


def first_check_raises(monkeypatch):
    """The judge's comparison fails on the first check it makes (a bug of ours), then works."""
    calls = []
    holds = judge._holds

    def broken(condition):
        calls.append(condition)
        if len(calls) == 1:
            raise KeyError("injected")
        return holds(condition)

    monkeypatch.setattr(judge, "_holds", broken)
    return place(judge.expect, "_holds(")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_check_that_raises_is_the_graders_and_costs_the_student_nothing(tmp_path, toy_boxes, monkeypatch,
                                                                         lang):
    place = first_check_raises(monkeypatch)
    report, data, screen = grade(tmp_path, toy_boxes, lang)
    faulted = [test for test in data["tests"] if "grader_fault" in test["tags"]]
    assert [test["test_id"] for test in faulted] == ["test_add"]
    add = faulted[0]
    assert (add["score"], add["max_score"], add["status"]) == (0, 0, "failed")
    assert add["extra_data"]["grader_fault"] == {"type": "KeyError", "where": place, "message": "'injected'",
                                                 "points": 3}
    # the other test is graded as usual, and the totals leave the fault out
    assert (data["score"], data["max_score"]) == (2, 2)
    assert data["extra_data"]["grader_faults"] == 1 and data["extra_data"]["not_graded"] == {"toy_sum": 3}

    said, note_and_mark = WORDS[lang][:2], WORDS[lang][2:]
    assert all(words in add["output"] for words in said) and "KeyError" in add["output"] and place in add["output"]
    assert "injected" not in add["output"]  # the message stays with the staff: a hidden check's may hold values
    assert all(words in screen for words in note_and_mark), screen
    assert WORDS[lang][3] in data["output"]
    assert not any(words in text for words in STUDENTS_FAULT[lang] for text in (add["output"], screen))


def test_a_fault_reads_back_and_reaches_the_classroom_as_an_error(tmp_path, toy_boxes, monkeypatch):
    first_check_raises(monkeypatch)
    report, data, _screen = grade(tmp_path, toy_boxes)
    again = GradeReport.from_gradescope(data)
    assert [test.fault["type"] for test in again.grader_faults()] == ["KeyError"]
    assert again.not_graded() == {"toy_sum": 3.0} and again.to_gradescope()["extra_data"]["grader_faults"] == 1
    payload = classroom.payload_from_results(data)
    assert [test["status"] for test in payload["tests"]] == ["error", "pass"]
    assert payload["status"] == "error" and payload["max_score"] == 2
    assert sum(test["score"] for test in payload["tests"]) == 2
    assert "The grader could not check this" in payload["tests"][0]["message"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_judges_decoder_failing_is_not_the_students_unreadable_answer(tmp_path, toy_boxes, monkeypatch, lang):
    """Issue 44: on Python 3.10 the judge's own base64 decoding raised TypeError on every tensor,
    and the student read that their answer could not be read. add returns a tensor equal to 5."""
    report, data, _screen = grade(tmp_path / "fine", toy_boxes, lang, RETURNS_A_TENSOR)
    assert (data["score"], data["max_score"], data["extra_data"]["grader_faults"]) == (5, 5, 0)

    monkeypatch.setattr(wire, "binascii", Binascii310)
    report, data, screen = grade(tmp_path / "broken", toy_boxes, lang, RETURNS_A_TENSOR)
    add = next(test for test in data["tests"] if test["test_id"] == "test_add")
    assert add["extra_data"]["grader_fault"]["type"] == "TypeError"
    assert add["extra_data"]["grader_fault"]["where"] == place(wire._strict_base64_311, "a2b_base64(")
    assert (data["score"], data["max_score"], data["extra_data"]["not_graded"]) == (2, 2, {"toy_sum": 3})
    assert WORDS[lang][0] in add["output"]
    assert not any(words in text for words in STUDENTS_FAULT[lang] for text in (add["output"], screen))


def test_a_grade_without_a_fault_says_nothing_of_one(tmp_path, toy_boxes):
    report, data, screen = grade(tmp_path, toy_boxes)
    assert data["extra_data"]["grader_faults"] == 0 and data["extra_data"]["not_graded"] == {}
    assert not any("grader_fault" in test["tags"] or "extra_data" in test for test in data["tests"])
    assert "NOT GRADED" not in screen and "The grader's own code" not in json.dumps(data)
