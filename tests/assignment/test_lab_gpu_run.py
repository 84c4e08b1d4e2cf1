"""gpu_lab/gpu_run.sh, the prepared script for a GPU machine without network, rehearsed on the
CPU: the same two lab runs (FP16 and BF16 candidates, each with its FP32 baseline and the injected
overflow), records, charts, check-lab verdicts and a log in one folder; nothing installed."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.assignment.lab import check as lab_check
from support.helpers import ROOT

SCRIPT = ROOT / "gpu_lab" / "gpu_run.sh"


def run_script(out, *extra, env_extra=None, timeout=400):
    env = {key: value for key, value in os.environ.items() if key != "AUTOGRADER_LANG"}
    env.update(LAB_PYTHON=sys.executable, LAB_LABEL_PREFIX="rehearsal", **(env_extra or {}))
    return subprocess.run(["bash", str(SCRIPT), str(out), *extra], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_rehearsal_runs_both_candidates_and_writes_everything_to_outdir(tmp_path):
    out = tmp_path / "out"
    result = run_script(out, "--rehearse")
    assert result.returncode == 0, result.stdout + result.stderr
    names = sorted(path.name for path in out.iterdir())
    assert names == ["check-lab_rehearsal-bf16.txt", "check-lab_rehearsal-fp16.txt", "gpu_run.log",
                     "train-amp-backward_rehearsal-bf16.json", "train-amp-backward_rehearsal-bf16.png",
                     "train-amp-backward_rehearsal-fp16.json", "train-amp-backward_rehearsal-fp16.png"]
    for dtype, label in (("float16", "fp16"), ("bfloat16", "bf16")):
        record = lab_check.parse_strict_json(
            (out / f"train-amp-backward_rehearsal-{label}.json").read_text(encoding="utf-8"))
        assert record["workload"]["candidate_dtype"] == dtype
        assert record["model"]["resolution_source"] == "config_only"
        over = record["metrics"]["overflow"]
        assert over["step_applied"] is False and over["scale_after"] < over["scale_before"]
        verdict = lab_check.check_record(record)
        assert verdict.valid and not verdict.earns_credit, verdict.reasons
        assert "valid record, no GPU credit" in (out / f"check-lab_rehearsal-{label}.txt").read_text()
    log = (out / "gpu_run.log").read_text(encoding="utf-8")
    assert "installing" not in log  # transformers imports here: nothing is installed
    assert "== done, status 0" in log and log.count("== lab exit code 0") == 2


def test_without_transformers_or_wheels_it_stops_and_says_what_to_carry(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "transformers.py").write_text("raise ImportError('hidden by the test')\n")
    result = run_script(tmp_path / "out", "--rehearse",
                        env_extra={"PYTHONPATH": str(blocker), "LAB_WHEELS": str(tmp_path / "none")})
    assert result.returncode == 2
    assert "transformers does not import and no wheels" in result.stdout
    assert not list((tmp_path / "out").glob("*.json"))


def test_usage_errors(tmp_path):
    assert run_script(tmp_path / "o", "--bogus").returncode == 2
