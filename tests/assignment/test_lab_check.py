"""check-lab: strict JSON, complete layout, internal consistency, physical plausibility (the
fixtures; the rules themselves: test_lab_plausibility.py), the GPU credit decision and the
command line. Reading hostile files: test_lab_files.py."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from support.cli import autograder_command
from support.helpers import ROOT
from support.lab_records import RECORDS, chapter_record, check_lab

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from autograder.assignment.lab import check as lab_check  # noqa: E402

MANIFEST = json.loads((RECORDS / "manifest.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- fixtures on disk

@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_fixture_verdicts_match_the_manifest(name):
    expected = MANIFEST[name]
    verdict = lab_check.check_file(RECORDS / name)
    assert verdict.valid is expected["valid"], verdict.reasons
    assert verdict.plausible is expected["plausible"], verdict.reasons
    assert verdict.earns_credit is expected["earns_credit"], verdict.reasons
    if expected["earns_credit"]:
        assert verdict.reasons == []
    else:
        assert verdict.reasons, "a refusal must say why"
        assert any(expected["reason"] in reason for reason in verdict.reasons), verdict.reasons


def test_bad_fixtures_do_not_cascade():
    # One change should be reported as one or two precise problems, not a wall of follow-ups.
    for name in MANIFEST:
        if name.startswith("bad_"):
            verdict = lab_check.check_file(RECORDS / name)
            assert 1 <= len(verdict.reasons) <= 2, (name, verdict.reasons)


def test_impossible_fixtures_break_one_bound_and_nothing_else():
    names = [name for name in MANIFEST if name.startswith("impossible_")]
    assert len(names) >= 10
    for name in names:
        verdict = lab_check.check_file(RECORDS / name)
        assert verdict.valid and not verdict.plausible and not verdict.earns_credit, name
        # The chapter's workload otherwise: the only reason is the broken bound.
        assert len(verdict.reasons) == 1, (name, verdict.reasons)
        assert verdict.summary.startswith("physically impossible record (1 problem)"), verdict.summary


def test_manifest_covers_every_record_file():
    on_disk = {p.name for p in RECORDS.glob("*.json")} - {"manifest.json"}
    assert on_disk == set(MANIFEST)


def test_chapter_record_is_accepted_with_its_published_figures():
    record = chapter_record()
    verdict = lab_check.check_record(record)
    assert verdict.valid and verdict.earns_credit, verdict.reasons
    base, cand = record["metrics"]["baseline"], record["metrics"]["candidate"]
    # The chapter's 5.4 numbers, so the fixture cannot drift from the text it reconstructs.
    assert (base["step_median_ms"], cand["step_median_ms"]) == (96.50, 94.21)
    assert (round(base["peak_allocated_mb"]), round(cand["peak_allocated_mb"])) == (4841, 4322)
    assert 1 - cand["peak_allocated_mb"] / base["peak_allocated_mb"] == pytest.approx(0.107, abs=5e-4)
    assert (cand["scale_initial"], cand["scale_after"], cand["scale_backoff_steps"]) == (65536.0, 1024.0, 6)
    assert "96.50" in verdict.summary and "94.21" in verdict.summary
    # Plausible with room to spare: about 2% of the card's FP16 tensor peak, 9% of its FP32 peak.
    assert verdict.plausible
    assert any("2.3% of the RTX 5070 Ti's FP16 dense tensor peak" in note
               for note in verdict.plausibility), verdict.plausibility
    assert any("9.0% of the RTX 5070 Ti's FP32/TF32 peak" in note
               for note in verdict.plausibility), verdict.plausibility
    assert verdict.hardware == {"name": "NVIDIA GeForce RTX 5070 Ti", "device": "cuda",
                                "total_memory_mb": 16302.5, "capability": "12.0"}


def test_smoke_sample_is_valid_but_refused_for_gpu_credit():
    verdict = lab_check.check_file(RECORDS / "cpu_smoke_sample.json")
    assert verdict.valid, verdict.reasons
    assert not verdict.earns_credit
    assert any("cpu_smoke_mechanism_check" in r and "no GPU credit" in r for r in verdict.reasons)


# --------------------------------------------------------------------------- single mutations

def _required_key_paths():
    paths = [(key,) for key in lab_check.TOP_KEYS]
    paths += [("model", key) for key in lab_check.MODEL_KEYS]
    paths += [("workload", key) for key in lab_check.WORKLOAD_KEYS]
    paths += [("hardware", key) for key in lab_check.HARDWARE_KEYS]
    paths += [("metrics", name, key) for name in lab_check.PATH_NAMES for key in lab_check.PATH_KEYS]
    return paths


@pytest.mark.parametrize("key_path", _required_key_paths(), ids=".".join)
def test_removing_any_required_key_is_refused_by_name(key_path):
    record = chapter_record()
    target = record
    for key in key_path[:-1]:
        target = target[key]
    del target[key_path[-1]]
    verdict = lab_check.check_record(record)
    assert not verdict.valid and not verdict.earns_credit
    assert any(key_path[-1] in reason and "missing" in reason for reason in verdict.reasons), verdict.reasons


@pytest.mark.parametrize("path_name", lab_check.PATH_NAMES)
@pytest.mark.parametrize("flag", ["grad_is_finite", "step_applied"])
def test_flipping_a_boolean_is_refused(path_name, flag):
    record = chapter_record()
    record["metrics"][path_name][flag] = not record["metrics"][path_name][flag]
    verdict = lab_check.check_record(record)
    assert not verdict.valid, (path_name, flag)


OFF_BY_ONE = [
    (path_name, counter, change)
    for path_name in lab_check.PATH_NAMES
    for counter in ("attempted_steps", "successful_steps", "scale_backoff_steps")
    for change in (-1, +1)
    # The overflow's backoff count may be 0 (the chapter's loop) or 1 (counting its one skip).
    if (path_name, counter, change) != ("overflow", "scale_backoff_steps", +1)
]


@pytest.mark.parametrize("path_name, counter, change", OFF_BY_ONE)
def test_off_by_one_counters_are_refused(path_name, counter, change):
    record = chapter_record()
    record["metrics"][path_name][counter] += change
    verdict = lab_check.check_record(record)
    assert not verdict.valid, (path_name, counter, change)


@pytest.mark.parametrize("key", ["scale_initial", "scale_before", "scale_after"])
@pytest.mark.parametrize("path_name", lab_check.PATH_NAMES)
def test_doubling_a_scale_is_refused(path_name, key):
    record = chapter_record()
    record["metrics"][path_name][key] *= 2
    assert not lab_check.check_record(record).valid


def test_non_finite_floats_in_a_dict_are_refused():
    record = chapter_record()
    record["metrics"]["candidate"]["grad_norm"] = math.nan
    verdict = lab_check.check_record(record)
    assert not verdict.valid
    assert any("metrics.candidate.grad_norm" in r for r in verdict.reasons)


def test_gate_failure_with_accept_names_the_failed_condition():
    record = chapter_record()
    record["metrics"]["overflow"]["scale_after"] = 65536.0
    verdict = lab_check.check_record(record)
    assert not verdict.valid
    assert any("accept" in r and "no backoff" in r for r in verdict.reasons)


def test_step_times_must_agree_with_median_and_p95():
    record = chapter_record()
    times = [90.0 + i for i in range(20)]  # median 99.5, nearest-rank P95 = 19th value = 108.0
    cand = record["metrics"]["candidate"]
    cand.update(step_times_ms=times, step_median_ms=99.5, step_p95_ms=108.0)
    assert lab_check.check_record(record).valid
    cand["step_p95_ms"] = 109.0
    verdict = lab_check.check_record(record)
    assert not verdict.valid and any("nearest-rank P95" in r for r in verdict.reasons)
    cand.update(step_p95_ms=108.0, step_times_ms=times[:-1])
    assert not lab_check.check_record(record).valid


def test_tokens_per_second_must_follow_from_the_median():
    record = chapter_record()
    base = record["metrics"]["baseline"]
    base["tokens_per_second"] = 128 * 1000.0 / base["step_median_ms"]
    assert lab_check.check_record(record).valid
    base["tokens_per_second"] *= 1.5
    assert not lab_check.check_record(record).valid


@pytest.mark.parametrize("garbage", [None, [], "record", 3, {"metrics": 5},
                                     {key: None for key in lab_check.TOP_KEYS}])
def test_garbage_never_raises(garbage):
    verdict = lab_check.check_record(garbage)
    assert not verdict.valid and verdict.reasons


def test_partially_broken_metrics_never_raise():
    record = chapter_record()
    record["metrics"]["baseline"] = None
    record["workload"]["repeats"] = "twenty"
    verdict = lab_check.check_record(record)
    assert not verdict.valid
    assert any("metrics.baseline" in r for r in verdict.reasons)
    assert any("workload.repeats" in r for r in verdict.reasons)


def test_file_name_not_matching_run_label_is_noted(tmp_path):
    path = tmp_path / "train-amp-backward_other.json"
    path.write_text(json.dumps(chapter_record()), encoding="utf-8")
    verdict = lab_check.check_file(path)
    assert verdict.earns_credit
    assert any("run_label" in note for note in verdict.notes)


def test_unreadable_paths_are_reported_not_raised(tmp_path):
    missing = lab_check.check_file(tmp_path / "nope.json")
    folder = lab_check.check_file(tmp_path)
    for verdict in (missing, folder):
        assert not verdict.readable and not verdict.valid and verdict.reasons
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    verdict = lab_check.check_file(binary)
    assert verdict.readable and not verdict.valid


# --------------------------------------------------------------------------- find_records

def test_find_records_looks_in_the_results_folder_and_the_root(tmp_path):
    results = tmp_path / "benchmarks" / "results" / "train_mixed_precision_backward"
    results.mkdir(parents=True)
    wanted = [results / "train-amp-backward_a.json", results / "train-amp-backward_b.json",
              tmp_path / "train-amp-backward_root.json"]
    for path in wanted:
        path.write_text("{}", encoding="utf-8")
    (results / "other.json").write_text("{}", encoding="utf-8")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "train-amp-backward_deep.json").write_text("{}", encoding="utf-8")
    (results / "train-amp-backward_dir.json").mkdir()
    assert lab_check.find_records(tmp_path) == wanted
    assert lab_check.find_records(tmp_path / "missing") == []


# --------------------------------------------------------------------------- command line

def test_cli_exit_codes(capsys):
    code, out = check_lab([RECORDS / "chapter_default14.json"], capsys, lang="en")
    assert code == 0 and "earns the optional GPU credit" in out
    assert "plausibility: candidate: 4.03 TFLOP/s, 2.3% of the RTX 5070 Ti's" in out
    assert "self-reported" in out  # the command says what it cannot prove
    code, out = check_lab([RECORDS / "impossible_fp32_faster_than_gpu.json"], capsys, lang="en")
    assert code == 1 and "physically impossible record" in out
    assert "faster than the RTX 5070 Ti can compute it" in out
    code, out = check_lab([RECORDS / "cpu_smoke_sample.json"], capsys, lang="en")
    assert code == 1 and "no GPU credit" in out
    code, out = check_lab([RECORDS / "bad_nan_literal.json"], capsys, lang="en")
    assert code == 1 and "NaN" in out
    code, out = check_lab([RECORDS / "chapter_default14.json", RECORDS / "bad_p95_below_median.json"], capsys,
                          lang="en")
    assert code == 1 and "below step_median_ms" in out
    code, out = check_lab([RECORDS / "chapter_default14.json", RECORDS / "does_not_exist.json"], capsys, lang="en")
    assert code == 2 and "cannot read" in out


def test_cli_speaks_chinese_with_the_same_exit_codes(capsys):
    code, out = check_lab([RECORDS / "chapter_default14.json"], capsys, lang="zh")
    assert code == 0 and "获得可选 GPU 加分" in out and "96.50 ms" in out
    assert "RTX 5070 Ti 的 FP16 稠密张量核峰值" in out and "自行提交" in out
    code, out = check_lab([RECORDS / "impossible_fp32_faster_than_gpu.json"], capsys, lang="zh")
    assert code == 1 and "物理上不可能" in out and "metrics.baseline.step_median_ms" in out
    code, out = check_lab([RECORDS / "bad_backoffs_vs_scale.json", RECORDS / "does_not_exist.json"],
                          capsys, lang="zh")
    assert code == 2 and "scale 轨迹" in out and "无法读取" in out
    assert not any(word in out for word in ("INVALID", "problem", "credit", "cannot read", "note:"))


def test_verdicts_render_later_in_either_language():
    lazy = lab_check.check_file(RECORDS / "cpu_smoke_sample.json", lang=None)
    english, chinese = lazy.rendered("en"), lazy.rendered("zh")
    assert english.summary == lab_check.check_file(RECORDS / "cpu_smoke_sample.json").summary
    assert english.reasons == lab_check.check_record(
        json.loads((RECORDS / "cpu_smoke_sample.json").read_text(encoding="utf-8"))).reasons
    assert "no GPU credit" in english.summary and "不获得 GPU 加分" in chinese.summary
    assert len(chinese.reasons) == len(english.reasons) and chinese.reasons != english.reasons
    assert all(isinstance(text, str) for text in chinese.reasons + [chinese.summary])


def test_python_dash_m_autograder_check_lab_without_torch():
    probe = (  # the command line ends the process itself, exit handlers first
        "import atexit, sys, runpy\n"
        "atexit.register(lambda: print('TORCH', 'torch' in sys.modules))\n"
        "sys.argv = ['autograder', 'check-lab', sys.argv[1]]\n"
        "runpy.run_module('autograder', run_name='__main__')\n"
    )
    english = dict(os.environ, AUTOGRADER_LANG="en")
    result = subprocess.run([sys.executable, "-c", probe, str(RECORDS / "chapter_default14.json")],
                            cwd=ROOT, capture_output=True, text=True, timeout=60, env=english)
    assert result.returncode == 0 and result.stdout.endswith("TORCH False\n"), result.stdout + result.stderr
    result = autograder_command("check-lab", RECORDS / "bad_backoffs_vs_scale.json", env=english, timeout=60)
    assert result.returncode == 1 and "scale trajectory" in result.stdout
