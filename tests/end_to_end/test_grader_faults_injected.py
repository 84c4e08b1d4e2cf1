"""Faults injected into a copy of the grader, at each place of our own code that runs while a
test is judged, the reference solutions graded with it by ``python -m autograder grade`` as a
TA runs it: every test the fault touched is the grader's (not graded, 0 of 0, said so in the
run's language), every other test keeps its points, and results.json is written and counts
the faults (docs/sandbox.md, *Whose failure*). The same copy without a fault grades full marks
(the reference solutions are graded in many other tests)."""
import json
import os
import pathlib

import pytest

from support.cli import autograder_command
from support.helpers import copy_grader, make_submission

pytestmark = pytest.mark.slow

WORDS = {"en": ("The grader could not check this", "This is not your mistake", "The grader's own code failed in"),
         "zh": ("评分器无法检查这一项", "这不是你的错误", "评分器自己的代码在")}
STUDENTS_FAULT = {"en": ("Your code raised", "could not be read", "Your code's answer"),
                  "zh": ("你的代码抛出了异常", "无法读取你代码的返回结果")}

# name: (file, text, the text with the fault, modules graded, with hidden tests, the fault's place)
INJECTED = {
    # the judge's and the worker's base64 decoding, as Python 3.10 had it (issue 44)
    "decoder": ("autograder/sandbox/wire.py", "return binascii.a2b_base64(data, strict_mode=True)",
                "return binascii.a2b_base64(data, strict_mode=True, no_such_option=True)", ["amp_update"], False,
                "autograder/sandbox/wire.py:"),
    # the worker's encoder, on a tuple update_scale returns as the contract says (the judge's
    # requests hold none)
    "encoder": ("autograder/sandbox/wire.py", '    if isinstance(value, tuple):\n',
                '    if isinstance(value, tuple):\n        raise TypeError("injected: tuples")\n',
                ["loss_scaler"], False, "autograder/sandbox/wire.py:"),
    # a check of the judge's, in the tests that look at the inputs a call left
    "check": ("autograder/assignment/checks/amp_update_checks.py",
              "def expect_inputs_untouched(after, before, scale, todo=None):\n",
              "def expect_inputs_untouched(after, before, scale, todo=None):\n"
              "    raise AttributeError('injected: a check')\n", ["amp_update"], True,
              "autograder/assignment/checks/amp_update_checks.py:"),
    # a scenario's trusted code in the box, after the student's train_step returned (rerun in the
    # judge with the hidden suite's oracle)
    "scenario": ("autograder/assignment/scenarios/training.py", '    return {"reports": reports,',
                 '    raise KeyError("injected: a scenario")\n    return {"reports": reports,',
                 ["amp_training_step"], True, "autograder/assignment/scenarios/training.py:"),
}


def clean_env():
    return {key: value for key, value in os.environ.items()
            if not key.startswith(("GITHUB_", "AUTOGRADER_")) and key != "CLASSROOM_MANIFEST"}


@pytest.mark.parametrize("name, lang", [("decoder", "zh"), ("encoder", "en"), ("check", "en"), ("scenario", "zh")])
def test_a_fault_of_the_graders_own_is_never_the_students(tmp_path, name, lang):
    path, text, faulty, modules, hidden, place = INJECTED[name]
    grader = copy_grader(tmp_path / "grader")
    source = (grader / path).read_text(encoding="utf-8")
    assert source.count(text) == 1, f"{path} changed: the injection must follow it"
    (grader / path).write_text(source.replace(text, faulty), encoding="utf-8")
    submission = make_submission(tmp_path / "submission")
    results = tmp_path / "results.json"
    args = ["grade", "--submission", submission, "--results", results, "--seed", 11, "--lang", lang, "--verbose"]
    args += [option for module in modules for option in ("--module", module)]
    done = autograder_command(*args + ([] if hidden else ["--visible-only"]), cwd=grader, env=clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    data = json.loads(pathlib.Path(results).read_text(encoding="utf-8"))
    faulted = [test for test in data["tests"] if "grader_fault" in test["tags"]]
    graded = [test for test in data["tests"] if test not in faulted]
    assert faulted, done.stdout[-3000:]
    for test in faulted:
        fault = test["extra_data"]["grader_fault"]
        assert fault["where"].startswith(place) and fault["points"] > 0, fault
        assert (test["score"], test["max_score"], test["status"]) == (0, 0, "failed")
        assert all(words in test["output"] for words in WORDS[lang][:2]), test["output"]
    assert all(test["status"] == "passed" for test in graded), [test["name"] for test in graded
                                                                if test["status"] != "passed"]
    assert data["score"] == data["max_score"] == sum(test["max_score"] for test in graded)
    assert data["extra_data"]["grader_faults"] == len(faulted)
    assert sum(data["extra_data"]["not_graded"].values()) == sum(t["extra_data"]["grader_fault"]["points"]
                                                                 for t in faulted)
    assert WORDS[lang][2] in data["output"] and WORDS[lang][2] in done.stdout.replace("\n", "")
    shown = done.stdout + json.dumps(data, ensure_ascii=False)
    assert not any(words in shown for words in STUDENTS_FAULT[lang])
