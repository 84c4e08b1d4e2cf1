"""The grader's command line as TAs, CI and students call it (contract:
docs/assignment.md): results file, exit codes, tags, classroom output."""
import base64
import json
import os
import subprocess
import sys

import pytest

from support import toy
from support.cli import autograder_command
from support.helpers import ROOT, copy_grader, make_submission

MODULE_TAGS = {"amp_update", "loss_scaler", "amp_training_step"}


def grade(*args, cwd=ROOT, env=None, timeout=300):
    return autograder_command("grade", *args, cwd=cwd, env=dict(os.environ, **(env or {})), timeout=timeout)


@pytest.fixture(scope="module")
def solutions_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("solutions_run")
    output = folder / "github_output"
    output.write_text("")
    done = grade("--submission", "solutions", "--results", str(folder / "results.json"), "--classroom",
                 "--seed", "77", env={"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(folder / "summary.md")})
    return done, json.loads((folder / "results.json").read_text()), output.read_text(), folder


@pytest.mark.slow
def test_solutions_get_full_marks(solutions_run):
    done, results, _, _ = solutions_run
    assert done.returncode == 0, done.stderr
    assert results["score"] == results["max_score"] == 100
    assert "TOTAL" in done.stdout and "100 / 100" in done.stdout


def test_results_follow_the_contract(solutions_run):
    _, results, _, _ = solutions_run
    assert {"score", "max_score", "tests"} <= set(results)
    assert results["extra_data"]["seed"] == 77
    tags = set()
    for test in results["tests"]:
        assert {"name", "score", "max_score", "status", "output", "visibility", "tags"} <= set(test)
        assert test["status"] in ("passed", "failed") and test["visibility"] in ("visible", "hidden")
        tags |= set(test["tags"]) & MODULE_TAGS
    assert tags == MODULE_TAGS
    assert sum(t["score"] for t in results["tests"]) == results["score"]
    assert {t["visibility"] for t in results["tests"]} == {"visible", "hidden"}


def test_classroom_output_matches_results(solutions_run):
    _, results, github_output, folder = solutions_run
    lines = [line for line in github_output.splitlines() if line.startswith("result=")]
    assert len(lines) == 1
    payload = json.loads(base64.b64decode(lines[0][len("result="):]))
    assert payload["max_score"] == results["max_score"]
    assert sum(t["score"] for t in payload["tests"]) == results["score"]
    assert all(t["line_no"] == 0 and "test_code" not in t for t in payload["tests"])
    assert "## Autograding: 100 / 100" in (folder / "summary.md").read_text()


@pytest.mark.slow
def test_stubs_score_zero_with_todo_feedback(grade_dir):
    """Graded in this process (the command line's results are solutions_run's)."""
    stubs = {module: (ROOT / "exercises" / f"{module}.py").read_text(encoding="utf-8") for module in MODULE_TAGS}
    results = grade_dir(stubs, seed=5).to_gradescope()
    assert results["score"] == 0 and results["max_score"] == 100
    assert all("TODO" in t["output"] for t in results["tests"])


@pytest.mark.slow
def test_same_seed_same_results(solutions_run, tmp_path):
    """A second grade at solutions_run's seed, in a process of its own: the same tests, scores and words."""
    second = grade("--submission", "solutions", "--results", str(tmp_path / "b.json"), "--seed", "77", "--quiet")
    assert solutions_run[0].returncode == second.returncode == 0
    strip = lambda r: [(t["name"], t["score"], t["output"]) for t in r["tests"]]  # noqa: E731
    assert strip(solutions_run[1]) == strip(json.loads((tmp_path / "b.json").read_text()))


def test_missing_folder_is_bad_usage_but_writes_results(tmp_path):
    done = grade("--submission", str(tmp_path / "nope"), "--results", str(tmp_path / "r.json"))
    assert done.returncode == 2
    assert "no such folder" in done.stderr
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["score"] == 0 and results["tests"]


@pytest.mark.slow
def test_partial_submission_costs_only_missing_modules(grade_dir):
    results = grade_dir(omit=("loss_scaler",), seed=3).to_gradescope()
    modules = results["extra_data"]["modules"]
    assert modules["loss_scaler"]["score"] == 0 and modules["amp_update"]["score"] == modules["amp_update"]["max_score"]
    outputs = [t["output"] for t in results["tests"] if "loss_scaler" in t["tags"]]
    assert "loss_scaler.py is missing" in outputs[0], "said once, on the module's first test"
    assert all("could not be used" in output for output in outputs[1:])
    assert results["extra_data"]["diagnosis"]["loss_scaler"]["todo"] == 4


def _reachable_by_others(path):
    path = os.path.realpath(path)
    while path != os.path.dirname(path):
        if not os.stat(path).st_mode & 0o001:
            return False
        path = os.path.dirname(path)
    return True


@pytest.mark.slow
def test_spawn_sandbox_grades_the_same(tmp_path):
    """The macOS/Windows code path (a fresh interpreter per worker) gives the same
    scores; as root it runs workers under a uid of their own, and refuses -- with a
    message that blames the grader, not the student -- where that uid cannot reach
    the interpreter."""
    import sys

    done = grade("--submission", "solutions", "--results", str(tmp_path / "r.json"), "--seed", "77", "--quiet",
                 "--allow-unconfined", env={"AUTOGRADER_SANDBOX": "spawn"})
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "r.json").read_text())
    if os.name == "posix" and os.geteuid() == 0 and not _reachable_by_others(sys.executable):
        assert results["score"] == 0
        for module in ("amp_update", "loss_scaler", "amp_training_step"):
            outputs = [t["output"] for t in results["tests"] if module in t["tags"]]
            assert "could not start a sandbox" in outputs[0], outputs[0]
            assert all("could not be used" in output for output in outputs[1:])
    else:
        assert results["score"] == 100


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="elsewhere spawning is the only path")
def test_spawn_sandbox_on_linux_refuses_to_grade_unconfined_unless_allowed(tmp_path):
    """AUTOGRADER_SANDBOX=spawn gives workers rlimits only; as grade-many does for a class,
    grade then refuses (exit 2) with results that say why, and runs no student code."""
    marker = tmp_path / "ran"
    toy.submission(tmp_path / "sub", f"open({str(marker)!r}, 'w').close()\n")  # the refusal is the engine's
    done = grade("--submission", str(tmp_path / "sub"), "--results", str(tmp_path / "r.json"), "--quiet",
                 env=toy.env({"AUTOGRADER_SANDBOX": "spawn"}))
    assert done.returncode == 2, done.stderr
    assert "--allow-unconfined" in done.stderr
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["score"] == 0 and "AUTOGRADER_SANDBOX=spawn" in results["tests"][0]["output"]
    assert not marker.exists()


@pytest.mark.slow
def test_shadowing_modules_in_the_repository_root_are_ignored(tmp_path):
    """A torch.py or pytest.py next to exercises/ must not replace the real packages in the judge."""
    copy_grader(tmp_path)
    make_submission(tmp_path / "exercises")
    for name in ("torch.py", "pytest.py"):
        (tmp_path / name).write_text("raise SystemExit('shadow module imported')\n")
    done = grade("--quiet", "--seed", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "results.json").read_text())["score"] == 100


@pytest.mark.parametrize("private_helper", [True, False])
@pytest.mark.parametrize("returned, code", [(None, 0), (0, 0), (2, 2), (130, 130), ("bad input", 1)])
def test_the_command_line_ends_with_its_code_its_exit_handlers_run_and_its_output_whole(returned, code,
                                                                                       private_helper):
    """``python -m autograder`` skips the interpreter's module teardown at the end:
    what sys.exit would do must still happen (handlers, buffered output, the code),
    also on an interpreter without CPython's private ``atexit._run_exitfuncs``."""
    script = ("import atexit, sys\nfrom autograder import __main__ as cli\n"
              + ("" if private_helper else "del atexit._run_exitfuncs\n") +
              "atexit.register(lambda: print('handler ran'))\n"
              "sys.stdout.write('x' * 100000)\n"
              f"cli._end({returned!r})\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == code
    assert done.stdout == "x" * 100000 + "handler ran\n"
    assert (returned if isinstance(returned, str) else "") in done.stderr
