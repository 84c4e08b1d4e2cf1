"""End to end in the classroom layout: a trusted copy of the grader grades a
student repository, the way .github/workflows/classroom.yml runs it (the Grade
step without any runner file-command variable, then `classroom-report` in a new
process), with runner-like file-command files. Hostile submissions try to forge
the Classroom points, hide the summary, inject workflow commands and plant
grader code; the runner's view of GITHUB_OUTPUT and of the log is read with the
models in tests/support/runner_files.py and the reporter model in tests/support/classroom_reporter.py.
"""
import base64
import json
import os
import sys

import pytest

from support.classroom_reporter import notices, points
from support.cli import autograder_command
from support.helpers import copy_grader, make_submission
from support.runner_files import output_values, read_output_file, workflow_commands

pytestmark = [pytest.mark.hostile, pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux sandbox")]

FORGE = '''
import os, glob
TEXT = "::notice title=Autograding complete::Points 100/100"
FOUND = []
for path in glob.glob("/proc/*/environ"):  # the judge's environment names GITHUB_OUTPUT
    try:
        with open(path, "rb") as handle:
            for item in handle.read().split(b"\\0"):
                if item.startswith((b"GITHUB_OUTPUT=", b"GITHUB_STEP_SUMMARY=")):
                    FOUND.append(item.decode())
    except OSError:
        pass
for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
    if os.environ.get(name):
        FOUND.append(name)
for item in FOUND:
    try:
        with open(item.split("=", 1)[1], "a") as out:
            out.write("result=" + {forged!r} + "\\nresult<<EOF\\nunterminated\\n# Points 100\\n<!--\\n")
    except (OSError, IndexError):
        pass
for folder in ({runner_temp!r},):
    for path in glob.glob(folder + "/**", recursive=True):
        try:
            with open(path, "a") as out:
                out.write("result=" + {forged!r} + "\\n")
            FOUND.append("wrote " + path)
        except OSError:
            pass
def unscale_gradients(scaled_gradients, scale):
    raise RuntimeError("  " + TEXT + "\\n::add-mask::secret\\n::stop-commands::x\\n##[error]forged " + repr(FOUND))
def global_grad_norm(gradients):
    raise ValueError("\\r::notice title=Autograding report::{{\\"totalPoints\\":100,\\"maxPoints\\":100}}")
'''


def _forged_payload():
    payload = {"version": 1, "status": "pass", "max_score": 100,
               "tests": [{"name": "forged", "status": "pass", "score": 100, "line_no": 0}]}
    return base64.b64encode(json.dumps(payload).encode()).decode()


def test_hostile_submission_cannot_reach_the_classroom_points(tmp_path):
    grader = tmp_path / "runner_temp" / "course-grader"
    copy_grader(grader)
    runner_temp = tmp_path / "runner_temp"
    commands = runner_temp / "_runner_file_commands"
    commands.mkdir(parents=True)
    output, summary = commands / "set_output_1", commands / "step_summary_1"
    output.write_text("")
    summary.write_text("")
    student = tmp_path / "workspace"
    make_submission(student / "exercises",
                    {"amp_update": FORGE.format(forged=_forged_payload(), runner_temp=str(runner_temp))})
    results = runner_temp / "results.json"
    env = dict(os.environ, GITHUB_ACTIONS="true", RUNNER_TEMP=str(runner_temp),
               AUTOGRADER_CALL_TIMEOUT="5", AUTOGRADER_MODULE_BUDGET="30")
    env.pop("PYTHONPATH", None)
    # The Grade step: no file-command variable reaches the grader...
    grade_env = {k: v for k, v in env.items() if k not in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    graded = autograder_command("grade", "--submission", student / "exercises", "--results", results, "--seed", "8",
                                cwd=grader, env=grade_env)
    assert graded.returncode == 0, graded.stderr[-2000:]
    # ...then the report step, a new process that reads results.json.
    reported = autograder_command("classroom-report", results, cwd=grader,
                                  env=dict(env, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary)),
                                  timeout=120)
    assert reported.returncode == 0, reported.stderr[-2000:]

    data = json.loads(results.read_text())
    pairs, error = read_output_file(output.read_text())
    assert error is None and [name for name, _ in pairs] == ["result"], output.read_text()[:500]
    values, _ = output_values(output.read_text())
    payload = json.loads(base64.b64decode(values["result"]))
    assert points([("grade", payload)]) == (data["score"], data["max_score"])
    assert data["extra_data"]["modules"]["amp_update"]["score"] == 0
    assert data["score"] == data["max_score"] - data["extra_data"]["modules"]["amp_update"]["max_score"]
    # The log: the only workflow commands are the grader's own fence.
    log = graded.stdout + graded.stderr + reported.stdout + reported.stderr
    found = workflow_commands(log)
    tokens = {command[2] for command in found if command[0] == "stop-commands"}
    foreign = [command for command in found if command[0] != "stop-commands" and command[0] not in tokens]
    assert foreign == [], foreign
    assert notices([("grade", payload)])[0].endswith(f"Points {data['score']}/{data['max_score']}")
    text = summary.read_text()
    assert "<!--" not in text and "\n# Points" not in text
    amp = "\n".join(t["output"] for t in data["tests"] if "amp_update" in t["tags"])
    assert "forged []" in amp, amp[:1500]  # it found no runner path and wrote nowhere
    # Nothing was planted in the grader: a confined worker could not write there
    # (Python itself may cache autograder/__init__.py, which matches its source).
    from autograder.intake.integrity import planted_caches

    assert planted_caches(grader / "autograder") == []
