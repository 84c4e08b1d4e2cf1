"""The student's first hour: stubs generated from the solutions, importable, every
TODO named; the public tests fail on the stubs with the TODO's message and pass on
the solutions."""
import ast
import re
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

from support.helpers import MODULES, ROOT, public_tests_run
from support.forked_runs import pytest_exit_codes

sys.path.insert(0, str(ROOT / "tools"))
import make_stubs  # noqa: E402

EXPECTED_TODOS = {"amp_update": [1, 2, 3], "loss_scaler": [4, 5, 6, 7, 8, 9],
                  "amp_training_step": [10, 11, 12, 13]}


def test_stubs_are_generated_from_solutions():
    assert make_stubs.main(["--check"]) == 0, "run: python tools/make_stubs.py"


@pytest.mark.parametrize("module", MODULES)
def test_stub_keeps_signatures_and_numbers_todos(module):
    stub = ast.parse((ROOT / "exercises" / f"{module}.py").read_text(encoding="utf-8"))
    solution = ast.parse((ROOT / "solutions" / f"{module}.py").read_text(encoding="utf-8"))

    def signatures(tree):
        return {node.name: ast.dump(node.args) for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert signatures(stub) == signatures(solution)
    raised = [node.exc.args[0].value for node in ast.walk(stub)
              if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
              and getattr(node.exc.func, "id", "") == "NotImplementedError"]
    numbers = [int(re.match(r"TODO (\d+):", message).group(1)) for message in raised]
    assert sorted(numbers) == EXPECTED_TODOS[module]


@pytest.mark.parametrize("module", MODULES)
def test_each_todo_is_found_where_the_stub_puts_it(module):
    """The description's TODO_FUNCTIONS name the function holding each stub's raise, and a
    line of a student's file maps to its TODO (issue 45: where a loop runs), from the stub's
    comments or, where a student deleted them, from the function alone."""
    from autograder import active_assignment
    from autograder.judging import todo_graph

    declared = active_assignment.current().todo_functions
    stub = (ROOT / "exercises" / f"{module}.py").read_text(encoding="utf-8")
    places = todo_graph.places(stub, module)
    for number, line in enumerate(stub.splitlines(), 1):
        found = re.search(r"NotImplementedError\('TODO (\d+):", line)
        if found:
            todo = int(found.group(1))
            assert places.function_at(number)[2] == declared[todo], f"TODO {todo} of {module}"
            assert places.todo_at(number) == todo
    # in the solution, every line between a TODO's fences is that TODO's; the function's first
    # lines (the stub's given checks) are no TODO's
    solution = (ROOT / "solutions" / f"{module}.py").read_text(encoding="utf-8")
    places, fence = todo_graph.places(solution, module), None
    for number, line in enumerate(solution.splitlines(), 1):
        opening, closing = re.search(r"# >>> TODO (\d+):", line), re.search(r"# <<< TODO \d+", line)
        fence = int(opening.group(1)) if opening else None if closing else fence
        if fence is not None:
            assert places.todo_at(number) == fence, f"{module} line {number}: {line}"
        elif places.function_at(number) and not line.strip().startswith("#"):
            first = min((n for n in places.marks if places.function_at(n) == places.function_at(number)), default=0)
            if number < first:
                assert places.todo_at(number) == 0, f"{module} line {number}: {line}"
    # no comment left: a function holding one TODO still names it, one holding several does not guess
    bare = "\n".join(line for line in make_stubs.make_stub(solution, set()).splitlines()
                     if not re.match(r"\s*#", line)) + "\n"
    places = todo_graph.places(bare, module)
    for todo, function in declared.items():
        if todo in EXPECTED_TODOS[module]:
            line = next(number for number, text in enumerate(bare.splitlines(), 1)
                        if re.match(rf"\s*def {function.rsplit('.', 1)[-1]}\(", text)) + 1
            alone = list(declared.values()).count(function) == 1
            assert places.todo_at(line) == (todo if alone else None), f"TODO {todo}"


def test_make_stub_rejects_unbalanced_fences():
    with pytest.raises(ValueError):
        make_stubs.make_stub("x = 1\n# >>> TODO 1: a\ny = 2\n")
    with pytest.raises(ValueError):
        make_stubs.make_stub("# >>> TODO 1: a\n# <<< TODO 2\n")


LOOP_LIMIT_S = 2  # the looping run's limit: the grader's 20 s is checked as a number, not waited for
BACKSTOP_S = 30  # pytest-timeout's default there (this repository's is 300): a loop the conftest misses ends too


def public_test_run(directory, tmp_path, name, *args):
    """The public tests on the modules in ``directory`` with ``args``, their junit report in ``tmp_path``."""
    return public_tests_run(ROOT / directory, *args, f"--junitxml={tmp_path / f'{name}.xml'}")


def looping_copy(tmp_path):
    """A copy of the public tests with a limit of LOOP_LIMIT_S instead of the grader's, and a
    submission whose unscale_gradients never returns."""
    tests = tmp_path / "public_tests"
    shutil.copytree(ROOT / "exercises" / "tests", tests, ignore=shutil.ignore_patterns("__pycache__"))
    conftest = (tests / "conftest.py").read_text(encoding="utf-8")
    limit = re.compile(r"^TIMEOUT_S = \d+$", re.M)
    assert len(limit.findall(conftest)) == 1
    (tests / "conftest.py").write_text(limit.sub(f"TIMEOUT_S = {LOOP_LIMIT_S}", conftest), encoding="utf-8")
    folder = tmp_path / "looping"
    folder.mkdir()
    for module in ("amp_update", "loss_scaler", "amp_training_step"):
        (folder / f"{module}.py").write_text((ROOT / "solutions" / f"{module}.py").read_text(encoding="utf-8"))
    (folder / "amp_update.py").write_text("def unscale_gradients(scaled_gradients, scale):\n    while True:\n"
                                          "        pass\n")
    return tests, folder


@pytest.fixture(scope="module")
def public_runs(tmp_path_factory):
    """name -> (exit code, output, seconds, junit cases) of the public tests on the solutions, on
    the stubs and (test_amp_update's loop test only) on a looping submission, each as a fresh
    `python -m pytest` would run it, all three in one interpreter start (tests/support/forked_runs.py)."""
    tmp_path = tmp_path_factory.mktemp("public")
    tests, looping = looping_copy(tmp_path)
    runs = {"solutions": public_test_run("solutions", tmp_path, "solutions", str(ROOT / "exercises" / "tests")),
            "exercises": public_test_run("exercises", tmp_path, "exercises", str(ROOT / "exercises" / "tests")),
            "looping": public_test_run(looping, tmp_path, "looping", "-o", f"timeout={BACKSTOP_S}",
                                       "-k", "test_unscale_without_mutation",
                                       str(tests / "test_amp_update.py"))}
    results = {}
    for name, (code, output, seconds) in zip(runs, pytest_exit_codes(list(runs.values()))):
        cases = ET.parse(tmp_path / f"{name}.xml").getroot().iter("testcase")
        results[name] = (code, output, seconds, {case.get("name"): case.find("failure") for case in cases})
    return results


@pytest.mark.slow
def test_public_tests_pass_on_solutions(public_runs):
    code, output, _seconds, cases = public_runs["solutions"]
    assert code == 0, output[-3000:]
    assert len(cases) >= 12 and not any(failure is not None for failure in cases.values())


@pytest.mark.slow
def test_public_tests_fail_on_stubs_naming_the_todo(public_runs):
    code, _output, _seconds, cases = public_runs["exercises"]
    assert code == 1
    assert cases and all(failure is not None for failure in cases.values()), "a public test passes on the stubs"
    for name, failure in cases.items():
        text = (failure.get("message") or "") + (failure.text or "")
        assert "NotImplementedError" in text and re.search(r"TODO \d+", text), name


@pytest.mark.slow
def test_the_public_tests_stop_an_endless_loop_when_the_grader_would(public_runs):
    """A public test gets the grader's limit of one call (20 s), not the 300 s of this
    repository's own tests: a loop fails there as it fails in the grade. The loop runs
    against a copy of the public tests whose limit is LOOP_LIMIT_S: the conftest's
    limit is what stops it, whatever the number."""
    from autograder.sandbox.client import Limits

    conftest = (ROOT / "exercises" / "tests" / "conftest.py").read_text(encoding="utf-8")
    assert re.search(r"^TIMEOUT_S = (\d+)$", conftest, re.M).group(1) == f"{Limits().call_timeout:g}"
    code, output, seconds, _cases = public_runs["looping"]
    assert code == 1 and "Timeout" in output, output[-2000:]
    per_test = seconds / max(output.count("Timeout"), 1)
    assert per_test < LOOP_LIMIT_S + 10, f"{per_test:.0f} s per looping test"
