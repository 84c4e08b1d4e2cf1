"""The seam between engine and assignment: a second, tiny assignment
(tests/toy_assignment: one module, two TODOs, one visible and one hidden
test, a Chinese catalog) graded by the same engine through every path a
chapter uses -- a single grade, a class, the Classroom payload and the
student template -- with ``$AUTOGRADER_ASSIGNMENT`` the only switch.

Nothing here may need the chapter: the toy's grades, feedback and template
must hold none of its modules, and the chapter's must hold none of the toy's.
"""
import base64
import csv
import json
import os
import pathlib
import shutil

import pytest

from support import classroom_reporter as reporter  # noqa: E402
from support.cli import autograder_command, autograder_commands  # noqa: E402
from support.helpers import ROOT  # noqa: E402
from support import toy  # noqa: E402

TOY = toy.FOLDER
CHAPTER_MODULES = ("amp_update", "loss_scaler", "amp_training_step")
WRONG_TOTAL = ("def add(a, b):\n    return a + b\n\n\n"
               "def total(numbers):\n    return sum(numbers[1:])\n")


def toy_env(**extra):
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("GITHUB_", "AUTOGRADER_")) and key != "CLASSROOM_MANIFEST"}
    return toy.env(env) | extra


def autograder(*args, cwd=ROOT, env=None, timeout=600):
    return autograder_command(*args, cwd=cwd, env=env if env is not None else toy_env(), timeout=timeout)


def submission(folder, source):
    folder.mkdir(parents=True)
    (folder / "toy_sum.py").write_text(source, encoding="utf-8")
    return folder


def grade(folder, results, *extra, env=None):
    done = autograder("grade", "--submission", folder, "--results", results, "--seed", 3, *extra, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(pathlib.Path(results).read_text(encoding="utf-8")), done.stdout


@pytest.fixture(scope="module")
def students(tmp_path_factory):
    root = tmp_path_factory.mktemp("toy-class")
    return {
        "ada": submission(root / "ada" / "exercises", toy.SOLUTION),
        "bo": submission(root / "bo" / "exercises", WRONG_TOTAL),
        "cy": submission(root / "cy" / "exercises", toy.STUB),
    }


@pytest.fixture(scope="module")
def single(students, tmp_path_factory):
    """Each student's `grade` (two at a time)."""
    out = tmp_path_factory.mktemp("toy-single")
    done = autograder_commands(*[("grade", "--submission", folder, "--results", out / f"{name}.json", "--seed", 3)
                                 for name, folder in students.items()], env=toy_env())
    graded = {}
    for name, proc in zip(students, done):
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        graded[name] = (json.loads((out / f"{name}.json").read_text(encoding="utf-8")), proc.stdout)
    return graded


@pytest.mark.slow
def test_a_correct_toy_submission_earns_every_point(single):
    data, stdout = single["ada"]
    assert (data["score"], data["max_score"]) == (5, 5)
    assert {test["tags"][0] for test in data["tests"]} == {"toy_sum"}
    assert {test["visibility"] for test in data["tests"]} == {"visible", "hidden"}
    assert not any(module in stdout for module in CHAPTER_MODULES)


@pytest.mark.slow
def test_a_wrong_total_loses_the_hidden_test_and_names_its_todo(single):
    data, stdout = single["bo"]
    assert (data["score"], data["max_score"]) == (3, 5)
    failed = [test for test in data["tests"] if test["status"] == "failed"]
    assert len(failed) == 1 and "TODO 2" in failed[0]["output"]
    assert "add every item with add" in failed[0]["output"]   # the test's hint, from the toy's suite


@pytest.mark.slow
def test_the_stub_is_diagnosed_by_the_toy_todo_graph(single):
    data, stdout = single["cy"]
    assert data["score"] == 0
    outputs = {test["name"]: test["output"] for test in data["tests"]}
    assert any("TODO 1" in text and "NotImplementedError" in text for text in outputs.values())
    assert "toy_sum" in stdout and "0 / 5" in stdout


@pytest.mark.slow
def test_the_toy_catalog_translates_its_own_messages(students, tmp_path):
    data, stdout = grade(students["cy"], tmp_path / "zh.json", "--lang", "zh")
    assert "add(2, 3) 等于 5" in stdout            # the toy's catalog (a test title)
    assert "还没有实现" in stdout                   # the engine's catalog, still there
    names = [test["name"] for test in data["tests"]]
    assert any("add(2, 3) 等于 5" in name for name in names)


@pytest.mark.slow
def test_only_the_toy_module_is_a_choice_of_module(students, tmp_path):
    data, _ = grade(students["ada"], tmp_path / "one.json", "--module", "toy_sum")
    assert data["score"] == 5
    refused = autograder("grade", "--submission", students["ada"], "--module", "amp_update")
    assert refused.returncode == 2 and "toy_sum" in refused.stderr


@pytest.mark.slow
def test_a_class_grades_like_single_grades(students, single, tmp_path):
    out = tmp_path / "class"
    done = autograder("grade-many", students["ada"].parents[1], "-o", out, "--seed", 3, "--jobs", 2,
                      "--no-similarity", timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(out / "scores.csv", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert set(rows) == set(students)
    for name in students:
        assert float(rows[name]["total"]) == single[name][0]["score"], name
    assert "toy_sum" in rows["ada"] and not any(module in rows["ada"] for module in CHAPTER_MODULES)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Toy Sums" in page and "amp_update" not in page


@pytest.mark.slow
def test_the_classroom_payload_meets_the_reporter_contract(students, tmp_path):
    output = tmp_path / "github_output"
    output.write_text("", encoding="utf-8")
    env = toy_env(GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    grade(students["bo"], tmp_path / "results.json", "--classroom", "--quiet", env=env)
    (encoded,) = reporter.read_github_output(output)
    payload = json.loads(base64.b64decode(encoded, validate=True))
    assert reporter.contract_problems(payload, encoded) == []
    read = reporter.read_results("grade", {"GRADE_RESULTS": encoded})
    assert reporter.points(read) == (3, 5)
    assert {test["name"].split(":")[0] for test in payload["tests"]} == {"toy_sum"}


@pytest.mark.slow
def test_the_template_carries_the_toy_and_nothing_hidden(tmp_path):
    template = tmp_path / "template"
    done = autograder("export-template", template)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == "" and len(done.stdout.splitlines()) == 1, done.stdout + done.stderr  # no warning
    assignment = template / "autograder" / "assignment"
    assert (template / "exercises" / "toy_sum.py").read_text() == (TOY / "exercises" / "toy_sum.py").read_text()
    assert (assignment / "description.py").read_text() == (TOY / "description.py").read_text()
    assert not list(assignment.rglob("test_hidden*")) and not (assignment / "solutions").exists()
    assert not (template / "solutions").exists() and not (template / "tests").exists()
    assert not any(template.rglob("amp_update*")) and not (template / "gpu_lab").exists()
    # The template's own grader needs no switch: its assignment is the toy.
    env = toy_env()
    env.pop("AUTOGRADER_ASSIGNMENT")
    local = autograder("grade", "--lang", "en", cwd=template, env=env)
    assert local.returncode == 0, local.stdout[-3000:] + local.stderr[-3000:]
    data = json.loads((template / "results.json").read_text(encoding="utf-8"))
    assert (data["score"], data["max_score"]) == (0, 3)
    assert data["extra_data"]["hidden_not_run"] == {"toy_sum": 2}
    shutil.rmtree(template)


def test_the_chapter_is_untouched_by_the_toy():
    """Without the switch the engine grades the chapter (the default assignment)."""
    env = toy_env()
    env.pop("AUTOGRADER_ASSIGNMENT")
    done = autograder("grade", "--help", env=env)
    assert done.returncode == 0 and "amp_update" in done.stdout and "toy_sum" not in done.stdout
