"""Where the machine cannot confine student code, the grade says so loudly and
class grading refuses to run unless told otherwise. The missing layers are
switched off with AUTOGRADER_SANDBOX_DISABLE (a test hook); only honest code is
graded here, since nothing would contain anything else."""
import json
import os
import sys

import pytest

from support.cli import autograder_command
from support.helpers import ROOT, make_submission

from autograder.i18n import render_data

# Slow: each test grades with layers switched off, or runs grade-many. The command line's
# own warnings are checked through it; the isolation report's words in this process.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux sandbox")]


def _run(args, **env):
    return autograder_command(*args, env=dict(os.environ, PYTHONPATH=str(ROOT), **env))


def test_unconfined_grade_warns_everywhere_and_stays_fair(tmp_path):
    make_submission(tmp_path / "exercises")
    results = tmp_path / "results.json"
    done = _run(["grade", "--submission", tmp_path / "exercises", "--results", results, "--seed", 3],
                AUTOGRADER_SANDBOX_DISABLE="namespaces,landlock")
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(results.read_text())
    isolation = data["extra_data"]["isolation"]
    assert isolation["confined"] is False
    assert any("Landlock" in problem for problem in isolation["problems"])
    assert any("namespaces" in problem for problem in isolation["problems"])
    assert "WITHOUT" in done.stdout.upper() or "NOT CONFINED" in done.stdout.upper()
    assert data["score"] == data["max_score"] == 100  # confinement never changes a verdict
    if os.geteuid() == 0:  # never root, even unconfined
        assert "of its own" in isolation["uid"]


def _isolation(toy_grade, monkeypatch, disabled, seed):
    """The isolation report results.json would hold for a visible-only grade with the
    ``disabled`` layers switched off (in this process: the judge reads the switch for
    each box it asks the zygote for). The box is what is confined, whatever the
    assignment: a toy's grade shows it."""
    monkeypatch.setenv("AUTOGRADER_SANDBOX_DISABLE", disabled)
    return toy_grade(seed=seed, include_hidden=False).to_gradescope()["extra_data"]["isolation"]


@pytest.mark.parametrize("disabled, expect_fs", [("landlock", "read-only"), ("namespaces", "Landlock")])
def test_one_missing_layer_is_named(toy_grade, monkeypatch, disabled, expect_fs):
    isolation = _isolation(toy_grade, monkeypatch, disabled, seed=4)
    assert isolation["confined"] is False
    assert expect_fs in isolation["fs"]
    assert any(disabled.lower() in problem.lower() for problem in isolation["problems"])


def test_grade_many_refuses_to_run_unconfined_unless_allowed(tmp_path):
    root = tmp_path / "class"
    make_submission(root / "alice" / "exercises")
    out = tmp_path / "out"
    refused = _run(["grade-many", root, "-o", out, "--no-progress", "--visible-only"],
                   AUTOGRADER_SANDBOX_DISABLE="namespaces,landlock")
    assert refused.returncode == 2
    assert "--allow-unconfined" in refused.stderr and "Landlock" in refused.stderr
    assert not (out / "alice" / "results.json").exists()
    allowed = _run(["grade-many", root, "-o", out, "--no-progress", "--visible-only", "--allow-unconfined"],
                   AUTOGRADER_SANDBOX_DISABLE="namespaces,landlock")
    assert allowed.returncode == 0, allowed.stderr[-2000:]
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["isolation"]["confined"] is False
    assert any("WITHOUT full confinement" in render_data(warning, "en") for warning in manifest["warnings"])
    report = (out / "report.md").read_text()
    assert "NOT CONFINED" in report


def test_without_minimal_root_and_filter_pathname_sockets_are_open_and_said(toy_grade, monkeypatch):
    """Either layer alone closes the pathname-socket hole; without both the box is
    not confined, and the report names each missing one."""
    isolation = _isolation(toy_grade, monkeypatch, "minimal_root,seccomp", seed=6)
    assert isolation["confined"] is False
    assert isolation["root"] == "the machine's, read-only" and isolation["syscalls"] == "not filtered"
    problems = " ".join(isolation["problems"])
    assert "minimal root: disabled" in problems and "syscall filter: disabled" in problems
