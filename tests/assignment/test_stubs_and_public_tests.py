"""The student's first hour: stubs generated from the solutions, importable, every
TODO named; the public tests fail on the stubs with the TODO's message and pass on
the solutions."""
import ast
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from support.helpers import MODULES, ROOT

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


def test_make_stub_rejects_unbalanced_fences():
    with pytest.raises(ValueError):
        make_stubs.make_stub("x = 1\n# >>> TODO 1: a\ny = 2\n")
    with pytest.raises(ValueError):
        make_stubs.make_stub("# >>> TODO 1: a\n# <<< TODO 2\n")


def run_public_tests(directory, tmp_path):
    report = tmp_path / "junit.xml"
    env = dict(os.environ, AMP_EXERCISES_DIR=str(ROOT / directory))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "exercises" / "tests"),
                           f"--junitxml={report}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    cases = ET.parse(report).getroot().iter("testcase")
    return done, {case.get("name"): case.find("failure") for case in cases}


@pytest.mark.slow
def test_public_tests_pass_on_solutions(tmp_path):
    done, cases = run_public_tests("solutions", tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert len(cases) >= 12 and not any(failure is not None for failure in cases.values())


@pytest.mark.slow
def test_public_tests_fail_on_stubs_naming_the_todo(tmp_path):
    done, cases = run_public_tests("exercises", tmp_path)
    assert done.returncode == 1
    assert cases and all(failure is not None for failure in cases.values()), "a public test passes on the stubs"
    for name, failure in cases.items():
        text = (failure.get("message") or "") + (failure.text or "")
        assert "NotImplementedError" in text and re.search(r"TODO \d+", text), name


@pytest.mark.slow
def test_the_public_tests_stop_an_endless_loop_when_the_grader_would(tmp_path):
    """A public test gets the grader's limit of one call (20 s), not the 300 s of this
    repository's own tests: a loop fails there as it fails in the grade."""
    from autograder.sandbox.client import Limits

    conftest = (ROOT / "exercises" / "tests" / "conftest.py").read_text(encoding="utf-8")
    assert re.search(r"^TIMEOUT_S = (\d+)$", conftest, re.M).group(1) == f"{Limits().call_timeout:g}"
    folder = tmp_path / "looping"
    folder.mkdir()
    for module in ("amp_update", "loss_scaler", "amp_training_step"):
        (folder / f"{module}.py").write_text((ROOT / "solutions" / f"{module}.py").read_text(encoding="utf-8"))
    (folder / "amp_update.py").write_text("def unscale_gradients(scaled_gradients, scale):\n    while True:\n"
                                          "        pass\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "test_unscale_without_mutation",
                           str(ROOT / "exercises" / "tests" / "test_amp_update.py")], cwd=ROOT,
                          env=dict(os.environ, AMP_EXERCISES_DIR=str(folder)), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 1 and "Timeout" in done.stdout, done.stdout[-2000:]
    per_test = (time.monotonic() - started) / max(done.stdout.count("Timeout"), 1)
    assert per_test < 60, f"{per_test:.0f} s per looping test"
