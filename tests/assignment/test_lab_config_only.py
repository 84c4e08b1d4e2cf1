"""The lab's --config-only mode (an architecture with random weights) and the MFU fields,
on the CPU: cpu_smoke end to end with a tiny config.json, real_gpu with CUDA faked at the
boundary, and check-lab on what they write (valid, never credit; the MFU follows from the
record and the GPU table)."""
from __future__ import annotations

import copy
import json
import re

import pytest

from autograder.assignment.lab import check as lab_check, gpu_specs as lab_gpu_specs
from support.torch_threads import one_torch_thread  # noqa: F401 - the lab's small steps, run here
from support.lab_script import LAB_SCRIPT, FakeCuda, lab, lab_common, lab_flops, lab_models, read_strict

TINY_CONFIG = {"model_type": "qwen2", "vocab_size": 300, "hidden_size": 64, "intermediate_size": 128,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
               "max_position_embeddings": 128, "tie_word_embeddings": True, "rope_theta": 1e6,
               "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16", "auto_map": {"x": "evil.Model"}}


@pytest.fixture(autouse=True)
def english(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_LANG", "en")


@pytest.fixture
def tiny_config(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY_CONFIG), encoding="utf-8")
    return path


@pytest.mark.slow
def test_cpu_smoke_config_only_builds_the_architecture_with_seeded_tokens(tiny_config, tmp_path, monkeypatch,
                                                                         capsys):
    """In this process (test_gpu_lab.py runs cpu_smoke as a command): the lab's main from the run's folder."""
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    code = lab.main(["--run-mode", "cpu_smoke", "--config-only", str(tiny_config), "--output-dir", str(out),
                     "--seq-len", "16", "--repeats", "2"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "random weights" in printed.out and "earns no credit" in printed.out
    record = read_strict(out / "train-amp-backward_cpu_smoke.json")
    model = record["model"]
    assert model["resolution_source"] == "config_only" and model["resolved_commit"] is None
    assert model["id"] == "config:tiny" and model["config_source"] == "file tiny.json"
    # Only the keys that shape the model travel: no dtype, no code to load.
    assert "torch_dtype" not in model["config"] and "auto_map" not in model["config"]
    assert record["measurement"]["parameter_count"] < 200_000  # the tiny model, not Qwen
    assert record["measurement"]["num_layers"] == 2 and record["measurement"]["attention_width"] == 64
    assert record["evidence_level"] == "cpu_smoke_mechanism_check"
    for name in ("baseline", "candidate", "overflow"):  # MFU is a GPU figure
        assert record["metrics"][name]["mfu"] is None and record["metrics"][name]["model_tflops"] is None
    verdict = lab_check.check_record(record)
    assert verdict.valid, verdict.reasons
    assert not verdict.earns_credit
    assert any("config_only" in reason for reason in verdict.reasons)


def test_seeded_token_rows_follow_the_seed_alone():
    first = lab_models.seeded_token_rows(151936, 1, 128, 2026)
    assert first == lab_models.seeded_token_rows(151936, 1, 128, 2026)
    assert first != lab_models.seeded_token_rows(151936, 1, 128, 2027)
    assert len(first[0]) == 128 and all(0 <= token < 151936 for token in first[0])
    assert len(set(first[0])) > 100  # drawn, not the prompt repeated


@pytest.mark.slow
def test_builtin_config_is_qwen25_05b_and_builds_its_parameter_count():
    values, origin = lab_models.config_only_values("Qwen2.5-0.5B")
    assert origin.startswith("built-in")
    assert values == {"vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864,
                      "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
                      "max_position_embeddings": 32768, "rope_theta": 1e6, "rms_norm_eps": 1e-6,
                      "tie_word_embeddings": True}
    torch = lab_common.require_torch()
    from transformers import Qwen2Config, Qwen2ForCausalLM

    with torch.device("meta"):  # shapes only: no memory, no time
        model = Qwen2ForCausalLM(Qwen2Config(**values))
    assert lab_models.count_parameters(model) == lab_check.QWEN_PARAMETERS
    assert lab_flops.architecture_of(model.config) == (24, 896)


@pytest.mark.parametrize("extra, message", [
    (["--model-path", "."], "--model-path"),
    (["--model-revision", "main"], "--model-revision"),
    (["--local-files-only"], "--local-files-only"),
])
def test_config_only_refuses_checkpoint_options(extra, message, tmp_path, capsys):
    assert lab.main(["--config-only", "qwen2.5-0.5b", *extra, "--output-dir", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "--config-only" in error and message in error and "Traceback" not in error


def test_config_only_names_what_it_accepts(tmp_path, capsys):
    assert lab.main(["--config-only", "llama-7b", "--output-dir", str(tmp_path)]) == 2
    assert "qwen2.5-0.5b or a config.json file" in capsys.readouterr().err
    other = tmp_path / "gpt2.json"
    other.write_text('{"model_type": "gpt2"}', encoding="utf-8")
    assert lab.main(["--config-only", str(other), "--output-dir", str(tmp_path)]) == 2
    assert "builds Qwen2 models" in capsys.readouterr().err


def test_dry_run_with_config_only_says_random_weights_and_no_credit(tmp_path, capsys):
    assert lab.main(["--config-only", "qwen2.5-0.5b", "--output-dir", str(tmp_path)]) == 0
    plan = capsys.readouterr().out
    assert "architecture of Qwen/Qwen2.5-0.5B" in plan and "random weights" in plan and "no credit" in plan
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- real_gpu, CUDA faked

@pytest.fixture(scope="module")
def gpu_record_once(tmp_path_factory):
    """One faked real_gpu run for the module's tests: each reads its own copy (gpu_record)."""
    tmp_path = tmp_path_factory.mktemp("gpu_record")
    tiny_config = tmp_path / "tiny.json"
    tiny_config.write_text(json.dumps(TINY_CONFIG), encoding="utf-8")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("AUTOGRADER_LANG", "en")
        torch = lab_common.require_torch()
        FakeCuda().install(monkeypatch, torch)
        args = ["--run-mode", "real_gpu", "--config-only", str(tiny_config), "--run-label", "arch",
                "--output-dir", str(tmp_path / "out"), "--seq-len", "16", "--repeats", "3"]
        assert lab.main(args) == 0
    return read_strict(tmp_path / "out" / "train-amp-backward_arch.json")


@pytest.fixture
def gpu_record(gpu_record_once):
    return copy.deepcopy(gpu_record_once)


@pytest.mark.slow
def test_real_gpu_config_only_is_an_architecture_benchmark_never_credit(gpu_record):
    assert gpu_record["evidence_level"] == "architecture_benchmark_random_weights"
    assert gpu_record["model"]["resolution_source"] == "config_only"
    verdict = lab_check.check_record(gpu_record)
    assert verdict.valid and verdict.plausible, verdict.reasons
    assert not verdict.earns_credit
    assert any("architecture benchmark" in reason for reason in verdict.reasons)
    # Even the chapter's full workload on this record would not earn it: the evidence decides.
    full = copy.deepcopy(gpu_record)
    full["workload"].update(seq_len=128, repeats=20)
    assert not lab_check.check_record(full).earns_credit


@pytest.mark.slow
def test_gpu_record_states_model_flops_and_mfu_against_the_h200_peak(gpu_record):
    measurement, metrics = gpu_record["measurement"], gpu_record["metrics"]
    tokens = measurement["tokens_per_step"]
    assert measurement["attention_flops_per_step"] == 12 * 2 * 64 * 16 * tokens
    assert measurement["model_flops_per_step"] == (
        6 * measurement["parameter_count"] * tokens + measurement["attention_flops_per_step"])
    assert measurement["peak_gpu"] == "H200"
    base, cand, over = metrics["baseline"], metrics["candidate"], metrics["overflow"]
    # torch's default FP32 matmul precision 'highest': FP32 units, not TF32 tensor cores.
    assert (base["peak_tflops"], base["peak_kind"]) == (67.0, "fp32")
    assert (cand["peak_tflops"], cand["peak_kind"]) == (989.5, "fp16_bf16_tensor")
    for path in (base, cand):
        expected = measurement["model_flops_per_step"] * 1000 / path["step_median_ms"] / 1e12
        assert path["model_tflops"] == pytest.approx(expected)
        assert path["mfu"] == pytest.approx(expected / path["peak_tflops"])
    assert over["mfu"] is None and over["model_tflops"] is None  # never timed


@pytest.mark.slow
@pytest.mark.parametrize("change, reason", [
    (lambda r: r["metrics"]["candidate"].update(mfu=r["metrics"]["candidate"]["mfu"] * 2), "mfu"),
    (lambda r: r["metrics"]["candidate"].update(peak_tflops=500.0,
                                                mfu=r["metrics"]["candidate"]["model_tflops"] / 500.0),
     "peak_tflops 500"),
    (lambda r: r["metrics"]["baseline"].update(peak_kind="fp16_bf16_tensor"), "peak_kind"),
    (lambda r: r["metrics"]["baseline"].update(peak_kind="tf32", peak_tflops=494.5), "tf32"),
    (lambda r: r["metrics"]["baseline"].update(model_tflops=r["metrics"]["baseline"]["model_tflops"] * 3),
     "model_tflops"),
    (lambda r: r["measurement"].update(attention_flops_per_step=1), "attention_flops_per_step"),
    (lambda r: r["measurement"].update(model_flops_per_step=1e9), "model_flops_per_step"),
    (lambda r: r["hardware"].update(name="Fake Mystery GPU"), "does not know"),
    (lambda r: r["model"].update(resolution_source="huggingface_hub.model_info"), "config-only"),
    (lambda r: r.update(evidence_level="real_model_mechanism_benchmark"), "random weights"),
])
def test_check_lab_refuses_mfu_or_provenance_that_does_not_follow(gpu_record, change, reason):
    record = copy.deepcopy(gpu_record)
    change(record)
    verdict = lab_check.check_record(record)
    assert not verdict.earns_credit
    assert not (verdict.valid and verdict.plausible), verdict.reasons
    assert any(reason in text for text in verdict.reasons), verdict.reasons


@pytest.mark.slow
def test_records_without_the_mfu_fields_stay_valid(gpu_record):
    record = copy.deepcopy(gpu_record)
    for path in record["metrics"].values():
        for key in ("model_tflops", "peak_tflops", "peak_kind", "mfu"):
            del path[key]
    for key in ("model_flops_per_step", "attention_flops_per_step", "num_layers", "attention_width"):
        del record["measurement"][key]
    assert lab_check.check_record(record).valid


def test_the_labs_peaks_are_the_checkers():
    """The lab is standalone, so it carries its own small table: every row is check-lab's, and a
    GPU's name finds the same row in both (gpu_specs.py says why the checker keeps its own)."""
    checker = {spec.label: (spec.label, spec.pattern, spec.fp32, spec.tf32, spec.half)
               for spec in lab_gpu_specs.GPU_SPECS}
    assert [checker.get(row[0]) for row in lab_flops.PEAKS] == list(lab_flops.PEAKS)
    for name in ("NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 5070 Ti", "NVIDIA A100-SXM4-40GB"):
        assert lab_flops.find_peak(name)[0] == lab_gpu_specs.lookup(name)[0].label
    assert lab_flops.find_peak("NVIDIA GeForce RTX 4090 Laptop GPU") is None


def test_readme_states_the_flops_formula():
    readme = (LAB_SCRIPT.parent / "README.md").read_text(encoding="utf-8")
    assert re.search(r"6\s*[×x*]\s*N\s*[×x*]\s*T\s*\+\s*12\s*[×x*]\s*L\s*[×x*]\s*H\s*[×x*]\s*S\s*[×x*]\s*T", readme)
