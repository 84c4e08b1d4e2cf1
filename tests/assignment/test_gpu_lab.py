"""The GPU lab without a GPU: cpu_smoke end to end, dry_run, --show, and real_gpu with CUDA faked
at the boundary (events, synchronize, allocator statistics, device properties, model loader)."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import math
import subprocess
import sys
import time
import types

import pytest
from support.helpers import ROOT
from support.torch_threads import one_torch_thread  # noqa: F401 - the lab's small steps, run here

from support.lab_script import (LAB_SCRIPT, FakeCuda, lab, lab_check, lab_common, lab_config, lab_device,
                                lab_layout, lab_measure, lab_models, lab_record, lab_stats, read_strict)

FAKE_COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module", autouse=True)
def frozen_heap():
    """The lab collects garbage after each precision path (gc.collect). In the test process
    each collection would scan all that pytest, torch and transformers hold (~0.2 s, some twenty
    times in this module); frozen, what was made before is left out, and what the lab makes is
    collected as in its own process (autograder/sandbox/zygote.py freezes its heap alike)."""
    import gc

    from transformers import Qwen2ForCausalLM  # noqa: F401 - the model classes, made before the freeze

    gc.freeze()  # no collection first: one costs as much as it would save
    yield
    gc.unfreeze()


def run_lab(*args, cwd, timeout=180):
    return subprocess.run([sys.executable, str(LAB_SCRIPT), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


# --------------------------------------------------------------------------- cpu_smoke, end to end

@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("smoke")
    started = time.perf_counter()
    result = run_lab("--run-mode", "cpu_smoke", "--output-dir", "out", cwd=workdir)
    seconds = time.perf_counter() - started
    print(f"\ncpu_smoke wall time: {seconds:.1f} s")
    return workdir, result, seconds


@pytest.mark.slow
def test_cpu_smoke_writes_a_valid_record_that_earns_no_gpu_credit(smoke_run):
    workdir, result, seconds = smoke_run
    assert result.returncode == 0, result.stderr
    assert seconds < 60, f"cpu_smoke took {seconds:.0f} s"
    record_path = workdir / "out" / "train-amp-backward_cpu_smoke.json"
    # Writes only its record (strict JSON) inside its output folder.
    assert sorted(p.relative_to(workdir).as_posix() for p in workdir.rglob("*")) == [
        "out", "out/train-amp-backward_cpu_smoke.json"]
    record = read_strict(record_path)
    verdict = lab_check.check_record(record)
    assert verdict.valid, verdict.reasons
    assert not verdict.earns_credit
    assert any("cpu_smoke_mechanism_check" in reason for reason in verdict.reasons)
    assert record["evidence_level"] == "cpu_smoke_mechanism_check"
    assert record["hardware"]["device"] == "cpu"


@pytest.mark.slow
def test_cpu_smoke_record_shows_the_update_semantics(smoke_run):
    workdir, _, _ = smoke_run
    record = read_strict(workdir / "out" / "train-amp-backward_cpu_smoke.json")
    workload, metrics = record["workload"], record["metrics"]
    base, cand, over = metrics["baseline"], metrics["candidate"], metrics["overflow"]
    assert (base["dtype"], cand["dtype"], over["dtype"]) == ("torch.float32", "torch.float16", "torch.float16")
    for path in (base, cand):
        assert path["status"] == "measured" and path["step_applied"] and path["grad_is_finite"]
        assert path["successful_steps"] == workload["warmup"] + workload["repeats"]
        assert len(path["step_times_ms"]) == workload["repeats"]
        assert path["step_p95_ms"] >= path["step_median_ms"] > 0
        assert path["parameter_delta_max"] > 0
        assert path["probe_parameter"].endswith("self_attn.q_proj.weight")
        assert path["tokens_per_second"] == pytest.approx(
            workload["batch_size"] * workload["seq_len"] * 1000 / path["step_median_ms"])
    assert base["scale_initial"] == base["scale_after"] == 1.0
    assert cand["scale_initial"] == 65536.0
    assert over["step_applied"] is False and over["parameter_delta_max"] == 0.0
    assert over["scale_after"] == over["scale_before"] / 2
    assert record["decision"] == "accept" and record["failure"] is None
    measurement = record["measurement"]
    assert measurement["flops_per_step_estimate"] == 6 * measurement["parameter_count"] * measurement["tokens_per_step"]


@pytest.mark.slow
def test_show_prints_the_summary_and_writes_a_chart(smoke_run, tmp_path):
    workdir, _, _ = smoke_run
    record_path = tmp_path / "train-amp-backward_cpu_smoke.json"
    record_path.write_bytes((workdir / "out" / record_path.name).read_bytes())
    result = run_lab("--show", str(record_path), cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("FP32: median=") and "update=True" in lines[0]
    assert lines[1].startswith("AMP:  median=") and "backoff=0" in lines[1]
    assert lines[2] == "overflow: step=False, scale=65536.0 -> 32768.0"
    assert any(line.startswith("decision=accept | evidence=cpu_smoke_mechanism_check") for line in lines)
    png = record_path.with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_show_without_matplotlib_still_prints(monkeypatch, capsys, tmp_path):
    record_path = tmp_path / "train-amp-backward_default14.json"
    record_path.write_bytes((ROOT / "tests/data/lab_records/chapter_default14.json").read_bytes())
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real_find_spec(name, *a))
    assert lab.main(["--show", str(record_path)]) == 0
    out = capsys.readouterr().out
    assert "FP32: median=96.50 ms" in out and "backoff=6" in out
    assert "peak memory change AMP vs FP32: -10.7%" in out
    assert "chart skipped" in out and not record_path.with_suffix(".png").exists()


def test_show_reports_a_missing_record_without_traceback(tmp_path, capsys):
    assert lab.main(["--show", str(tmp_path / "nope.json")]) == 2
    assert "record not found" in capsys.readouterr().err


# --------------------------------------------------------------------------- dry_run and errors

def test_dry_run_prints_the_plan_without_importing_torch(tmp_path):
    result = subprocess.run([sys.executable, "-X", "importtime", str(LAB_SCRIPT), "--seq-len", "64"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert "dry run" in result.stdout and "seq_len 64" in result.stdout
    assert "train-amp-backward_default.json" in result.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "torch" not in imported and "transformers" not in imported
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(lab_common.require_torch().cuda.is_available(), reason="needs a machine without CUDA")
def test_real_gpu_without_cuda_says_so_without_traceback(tmp_path, capsys):
    # its main in this process (torch is imported here already); a traceback would fail the test
    assert lab.main(["--run-mode", "real_gpu", "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "CUDA is not available" in err and "cpu_smoke" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("label", ["../escape", "with space", ""])
def test_unsafe_run_labels_are_refused(label, tmp_path, capsys):
    assert lab.main(["--run-mode", "cpu_smoke", "--run-label", label, "--output-dir", str(tmp_path)]) == 2
    assert "--run-label" in capsys.readouterr().err


def test_statistics_definitions():
    assert lab_stats.median([3.0, 1.0, 2.0]) == 2.0
    assert lab_stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    values = [float(v) for v in range(1, 21)]
    assert lab_stats.percentile_nearest_rank(values, 95) == 19.0  # ceil(0.95 * 20) = 19th value
    assert lab_stats.percentile_nearest_rank([5.0], 95) == 5.0
    assert lab_stats.percentile_nearest_rank(values[:10], 95) == 10.0
    for n in range(1, 40):
        sample = [math.sin(i) * 10 + 50 for i in range(n)]
        assert lab_stats.percentile_nearest_rank(sample, 95) >= lab_stats.median(sample)


def test_run_attempts_excludes_warmup_and_backoffs_from_timing():
    workload = {"warmup": 1, "repeats": 3, "max_scale_backoff_steps": 4}
    outcomes = iter([(False, 1.0), (True, 100.0), (False, 2.0), (True, 10.0), (True, 11.0), (True, 12.0)])

    def step():
        finite, elapsed = next(outcomes)
        return lab_measure.Attempt(elapsed, 1.0 if finite else None, finite, 1e-6 if finite else 0.0,
                           finite, 8.0, 8.0 if finite else 4.0)

    tally = lab_measure.run_attempts(step, workload, inject_overflow=False)
    assert (tally.attempted, tally.successful, tally.backoffs) == (6, 4, 2)
    assert tally.times_ms == [10.0, 11.0, 12.0]  # warm-up (100 ms) and backoffs left out

    def always_overflow():
        return lab_measure.Attempt(1.0, None, False, 0.0, False, 1.0, 0.5)

    tally = lab_measure.run_attempts(always_overflow, workload, inject_overflow=False)
    assert (tally.attempted, tally.successful, tally.backoffs) == (8, 0, 8)
    tally = lab_measure.run_attempts(always_overflow, workload, inject_overflow=True)
    assert (tally.attempted, tally.backoffs, tally.applied_flags) == (1, 0, [False])


# --------------------------------------------------------------------------- real models on the CPU

def tiny_qwen2(seq_len=64):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return Qwen2ForCausalLM(Qwen2Config(**dict(lab_models.TINY_QWEN2, max_position_embeddings=seq_len)))


class OverflowFirst(__import__("torch").nn.Module):
    """The tiny model, with the loss made infinite for the first `count` forwards."""

    def __init__(self, count):
        super().__init__()
        self.inner = tiny_qwen2()
        self.remaining = count

    def forward(self, **batch):
        loss = self.inner(**batch).loss
        if self.remaining > 0:
            self.remaining -= 1
            loss = loss * float("inf")
        return types.SimpleNamespace(loss=loss)


def smoke_workload(**changes):
    args = types.SimpleNamespace(candidate_dtype="float16", seq_len=16, repeats=3)
    workload = lab_config.build_workload(args, "cpu_smoke")
    workload.update(changes)
    return workload


def run_three_paths(workload, overflowing_attempts):
    torch = lab_common.require_torch()
    ops = lab_device.CpuOps(torch.device("cpu"))
    normal = lab_models.tiny_model_source(workload)
    flaky = lab_models.ModelSource(info=normal.info, token_rows=normal.token_rows,
                            load=lambda device: OverflowFirst(overflowing_attempts))
    batch = lab_models.build_causal_lm_batch(normal.token_rows, 1, workload["seq_len"], ops.device)
    metrics = {
        "baseline": lab_measure.run_precision_path(lab_measure.PathSpec("fp32", None), normal, batch, workload, ops),
        "candidate": lab_measure.run_precision_path(lab_measure.PathSpec("amp", "float16"), flaky, batch, workload, ops),
        "overflow": lab_measure.run_precision_path(lab_measure.PathSpec("overflow", "float16", True), normal, batch, workload, ops),
    }
    return lab_record.build_record("unit", "cpu_smoke", flaky, workload, ops.hardware_snapshot(), metrics,
                            ops, lab_layout.EVIDENCE_SMOKE)


def test_fp16_backoffs_follow_the_scale_trajectory():
    workload = smoke_workload()
    record = run_three_paths(workload, overflowing_attempts=3)
    cand = record["metrics"]["candidate"]
    assert cand["scale_backoff_steps"] == 3
    assert cand["attempted_steps"] == workload["warmup"] + workload["repeats"] + 3
    assert cand["scale_after"] == cand["scale_before"] == 65536.0 / 2**3
    assert len(cand["step_times_ms"]) == workload["repeats"]
    assert record["decision"] == "accept"
    verdict = lab_check.check_record(record)
    assert verdict.valid, verdict.reasons


def test_failing_to_stabilise_rejects_the_candidate_consistently():
    workload = smoke_workload(max_scale_backoff_steps=2)
    record = run_three_paths(workload, overflowing_attempts=3)  # one more than allowed
    cand = record["metrics"]["candidate"]
    assert cand["status"] == "failed_to_stabilize"
    assert cand["attempted_steps"] == workload["warmup"] + workload["repeats"] + 2
    assert cand["successful_steps"] == workload["warmup"] + workload["repeats"] - 1
    assert len(cand["step_times_ms"]) == workload["repeats"] - 1 and cand["step_applied"]
    assert record["decision"] == "reject"
    assert record["failure"]["type"] == "training_update_gate_failed"
    verdict = lab_check.check_record(record)
    assert verdict.valid and not verdict.earns_credit, verdict.reasons
    assert any("decision is 'reject'" in reason for reason in verdict.reasons)


# --------------------------------------------------------------------------- real_gpu, CUDA faked

class ByteTokenizer:
    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": list(text.encode("utf-8"))}


@pytest.fixture
def fake_cuda(monkeypatch):
    torch = lab_common.require_torch()
    fake = FakeCuda()
    fake.install(monkeypatch, torch)
    return fake


@pytest.fixture
def fake_hub(monkeypatch):
    """Replace the Hugging Face loaders (not the lab's code around them) and capture their calls."""
    import transformers

    seen = {"model": [], "tokenizer": []}

    def model_from_pretrained(model_id, **kwargs):
        seen["model"].append((model_id, kwargs))
        return tiny_qwen2()

    def tokenizer_from_pretrained(model_id, **kwargs):
        seen["tokenizer"].append((model_id, kwargs))
        return ByteTokenizer()

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", model_from_pretrained)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", tokenizer_from_pretrained)
    return seen


def real_gpu_args(tmp_path, *extra):
    return ["--run-mode", "real_gpu", "--run-label", "fake", "--output-dir", str(tmp_path),
            "--seq-len", "16", "--repeats", "3", "--model-revision", FAKE_COMMIT, *extra]


def test_real_gpu_path_with_faked_cuda_builds_a_consistent_record(fake_cuda, fake_hub, tmp_path, capsys):
    torch = lab_common.require_torch()
    assert lab.main(real_gpu_args(tmp_path, "--local-files-only")) == 0, capsys.readouterr().err
    record = read_strict(tmp_path / "train-amp-backward_fake.json")

    # Loader boundary: the resolved commit, FP32 weights, offline flag, one load per path.
    assert [call[0] for call in fake_hub["model"]] == [lab_layout.MODEL_ID] * 3
    for _, kwargs in fake_hub["model"]:
        assert kwargs["revision"] == FAKE_COMMIT and kwargs["local_files_only"] is True
        assert kwargs[lab_models.dtype_keyword()] is torch.float32
    assert record["model"] == {"id": lab_layout.MODEL_ID, "requested_revision": FAKE_COMMIT,
                               "resolved_commit": FAKE_COMMIT, "resolution_source": "requested_commit",
                               "tokenizer_class": "ByteTokenizer"}
    # CUDA boundary: peak reset before each path's read, events read after synchronize.
    assert [c for c in fake_cuda.calls if c != "elapsed"] == ["reset", "peak"] * 3
    assert fake_cuda.calls.count("elapsed") == 2 * (1 + 3) + 1  # overflow: one attempt
    metrics = record["metrics"]
    assert [metrics[k]["peak_allocated_mb"] for k in ("baseline", "candidate", "overflow")] == [900.0, 700.0, 710.0]
    assert record["hardware"] == {"device": "cuda", "name": "Fake H200", "total_memory_mb": 141 * 1024.0,
                                  "capability": [9, 0], "torch": torch.__version__, "cuda": "12.8"}
    assert record["evidence_level"] == "real_model_mechanism_benchmark"
    assert record["measurement"]["timing_method"] == "torch.cuda.Event.elapsed_time"
    for key in ("baseline", "candidate"):
        expected = record["measurement"]["flops_per_step_estimate"] * 1000 / metrics[key]["step_median_ms"] / 1e12
        assert metrics[key]["achieved_tflops"] == pytest.approx(expected)
    assert metrics["overflow"]["achieved_tflops"] is None

    verdict = lab_check.check_record(record)
    assert verdict.valid, verdict.reasons
    # Consistent CUDA evidence; refused only for the shortened workload and the tiny model's memory.
    assert not verdict.earns_credit
    assert any("workload.seq_len is 16" in r for r in verdict.reasons)
    assert any("workload.repeats is 3" in r for r in verdict.reasons)
    assert not any("evidence_level" in r or "hardware" in r for r in verdict.reasons)


def test_real_gpu_bfloat16_candidate_runs_without_a_scaler(fake_cuda, fake_hub, tmp_path):
    assert lab.main(real_gpu_args(tmp_path, "--candidate-dtype", "bfloat16")) == 0
    record = read_strict(tmp_path / "train-amp-backward_fake.json")
    cand = record["metrics"]["candidate"]
    assert cand["dtype"] == "torch.bfloat16"
    assert (cand["scale_initial"], cand["scale_after"], cand["scale_backoff_steps"]) == (1.0, 1.0, 0)
    assert lab_check.check_record(record).valid


def test_real_gpu_refuses_bfloat16_on_a_gpu_without_it(monkeypatch, fake_hub, tmp_path, capsys):
    FakeCuda(bf16=False).install(monkeypatch, lab_common.require_torch())
    assert lab.main(real_gpu_args(tmp_path, "--candidate-dtype", "bfloat16")) == 2
    err = capsys.readouterr().err
    assert "does not support bfloat16" in err and "--candidate-dtype float16" in err
    assert not fake_hub["model"] and not list(tmp_path.iterdir())


class OutOfMemoryModel(__import__("torch").nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = tiny_qwen2()

    def forward(self, **batch):
        raise __import__("torch").OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")


@pytest.mark.parametrize("seq_len, advice", [("128", "--seq-len 64"), ("64", "larger GPU")])
def test_real_gpu_out_of_memory_suggests_the_fallback(fake_cuda, fake_hub, monkeypatch, tmp_path, capsys,
                                                      seq_len, advice):
    import transformers

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained",
                        lambda *a, **k: OutOfMemoryModel())
    args = real_gpu_args(tmp_path)
    args[args.index("--seq-len") + 1] = seq_len
    assert lab.main(args) == 3
    err = capsys.readouterr().err
    assert "ran out of memory in the fp32 path" in err and advice in err
    assert "Traceback" not in err and not list(tmp_path.iterdir())


def test_real_gpu_model_load_failure_is_one_clear_line(fake_cuda, fake_hub, monkeypatch, tmp_path, capsys):
    import transformers

    def unreachable(*args, **kwargs):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", unreachable)
    assert lab.main(real_gpu_args(tmp_path)) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert f"could not load {lab_layout.MODEL_ID}@{FAKE_COMMIT}" in err and "OSError" in err
    assert "HF_ENDPOINT=https://hf-mirror.com" in err and "--model-path" in err  # the two ways round
    assert not list(tmp_path.iterdir())


def test_real_gpu_offline_without_cache_explains_local_files_only(fake_cuda, monkeypatch, tmp_path, capsys):
    # The real huggingface_hub resolution against an empty cache: no network, no download.
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "out"
    assert lab.main(["--run-mode", "real_gpu", "--output-dir", str(out), "--local-files-only"]) == 2
    err = capsys.readouterr().err
    assert f"could not load {lab_layout.MODEL_ID}@main" in err and "run once online first" in err
    assert not out.exists()


def test_real_gpu_keeps_an_existing_record(fake_cuda, fake_hub, tmp_path, capsys):
    existing = tmp_path / "train-amp-backward_fake.json"
    existing.write_text("{}", encoding="utf-8")
    assert lab.main(real_gpu_args(tmp_path)) == 2
    assert "already exists" in capsys.readouterr().err
    assert existing.read_text(encoding="utf-8") == "{}" and not fake_hub["model"]
    assert lab.main(real_gpu_args(tmp_path, "--overwrite")) == 0
    assert json.loads(existing.read_text(encoding="utf-8"))["run_label"] == "fake"


def test_cpu_smoke_never_replaces_real_evidence(tmp_path, capsys):
    real = tmp_path / "train-amp-backward_default14.json"
    real.write_bytes((ROOT / "tests/data/lab_records/chapter_default14.json").read_bytes())
    before = real.read_bytes()
    args = ["--run-mode", "cpu_smoke", "--run-label", "default14", "--output-dir", str(tmp_path)]
    assert lab.main(args) == 2
    assert "already exists" in capsys.readouterr().err and real.read_bytes() == before


# --------------------------------------------------------------------------- --model-path: a local checkpoint

LOCAL_LAYERS = 1  # differs from TINY_QWEN2 (2 layers): the record shows which model was trained


def byte_level_tokenizer():
    """A real tokenizer (fast, byte level, no merges) whose ids fit the tiny 256-entry vocabulary."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokenizer = Tokenizer(models.BPE(vocab={char: index for index, char in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer)


@pytest.fixture(scope="module")
def local_checkpoint(tmp_path_factory):
    """A checkpoint folder as a download from elsewhere leaves it: config, weights, tokenizer."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    folder = tmp_path_factory.mktemp("download") / "tiny-qwen2-local"
    lab_common.require_torch().manual_seed(7)
    config = Qwen2Config(**dict(lab_models.TINY_QWEN2, num_hidden_layers=LOCAL_LAYERS, max_position_embeddings=64))
    model = Qwen2ForCausalLM(config)
    model.save_pretrained(folder)
    byte_level_tokenizer().save_pretrained(folder)
    return folder, lab_models.count_parameters(model)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No hub access at all for the lab's main in this process (torch and transformers are
    imported here already): an empty cache, offline switches, an endpoint that cannot answer,
    and the hub's entry points raising (huggingface_hub reads the switches when imported)."""
    import huggingface_hub

    for name, value in {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                        "HF_ENDPOINT": "http://127.0.0.1:9"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)

    def no_hub(*args, **kwargs):
        raise AssertionError("--model-path must not contact the hub")

    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", no_hub)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_hub)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_hub)


def test_cpu_smoke_with_model_path_trains_the_local_checkpoint_offline(local_checkpoint, offline, tmp_path,
                                                                        capsys):
    folder, parameter_count = local_checkpoint
    args = ["--run-mode", "cpu_smoke", "--model-path", str(folder), "--output-dir", str(tmp_path / "out")]
    assert lab.main(args) == 0, capsys.readouterr().err
    record = read_strict(tmp_path / "out" / "train-amp-backward_cpu_smoke.json")
    model = record["model"]
    assert set(lab_check.MODEL_KEYS) <= set(model)
    digest = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert {key: model[key] for key in ("id", "requested_revision", "resolved_commit", "resolution_source",
                                        "local_path", "weights_sha256")} == {
        "id": "local:tiny-qwen2-local", "requested_revision": None, "resolved_commit": None,
        "resolution_source": "local_path", "local_path": str(folder),
        "weights_sha256": {"model.safetensors": digest}}
    assert isinstance(model["tokenizer_class"], str) and model["tokenizer_class"]
    # The saved model was trained (one layer), not the random two-layer smoke model.
    assert record["measurement"]["parameter_count"] == parameter_count
    assert parameter_count != lab_models.count_parameters(tiny_qwen2())
    assert record["decision"] == "accept"
    verdict = lab_check.check_record(record)
    assert verdict.valid and not verdict.earns_credit, verdict.reasons
    assert any("model.id is 'local:tiny-qwen2-local'" in reason for reason in verdict.reasons)


def test_real_gpu_with_model_path_loads_through_the_same_loader(local_checkpoint, fake_cuda, offline, monkeypatch,
                                                                 tmp_path, capsys):
    import transformers

    folder, parameter_count = local_checkpoint
    real_loader = transformers.AutoModelForCausalLM.from_pretrained
    calls = []

    def spy(name_or_path, **kwargs):
        calls.append((name_or_path, kwargs))
        return real_loader(name_or_path, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", spy)
    args = ["--run-mode", "real_gpu", "--run-label", "local", "--output-dir", str(tmp_path / "out"),
            "--seq-len", "16", "--repeats", "3", "--model-path", str(folder)]
    assert lab.main(args) == 0, capsys.readouterr().err
    torch = lab_common.require_torch()
    assert [name for name, _ in calls] == [str(folder)] * 3  # one load per path, from the folder
    for _, kwargs in calls:
        assert kwargs["local_files_only"] is True and "revision" not in kwargs
        assert kwargs[lab_models.dtype_keyword()] is torch.float32
    record = read_strict(tmp_path / "out" / "train-amp-backward_local.json")
    assert record["model"]["resolution_source"] == "local_path"
    assert record["measurement"]["parameter_count"] == parameter_count
    assert record["evidence_level"] == "real_model_mechanism_benchmark"
    verdict = lab_check.check_record(record)
    assert verdict.valid and not verdict.earns_credit, verdict.reasons
    assert any("model.resolved_commit None" in reason for reason in verdict.reasons)


def test_local_checkpoint_provenance(tmp_path):
    commit = "a" * 40
    folder = tmp_path / "Qwen2.5-0.5B"
    folder.mkdir()
    # Qwen2.5-0.5B's architecture is recorded under the lab's model id; anything else by folder name.
    assert lab_models.local_model_id(dict(lab_layout.QWEN_ARCHITECTURE, tie_word_embeddings=True), folder) == lab_layout.MODEL_ID
    assert lab_models.local_model_id(dict(lab_layout.QWEN_ARCHITECTURE, num_hidden_layers=28), folder) == "local:Qwen2.5-0.5B"
    assert lab_models.local_commit(folder) == (None, "local_path")  # e.g. a ModelScope download
    # `hf download --local-dir` leaves one metadata file per file, first line the commit.
    metadata = folder / ".cache" / "huggingface" / "download"
    metadata.mkdir(parents=True)
    for name in ("config.json", "model.safetensors"):
        (metadata / f"{name}.metadata").write_text(f"{commit}\netag\n1700000000.0\n", encoding="utf-8")
    assert lab_models.local_commit(folder) == (commit, "local_path_hf_download")
    (metadata / "tokenizer.json.metadata").write_text("b" * 40 + "\n", encoding="utf-8")
    assert lab_models.local_commit(folder) == (None, "local_path")  # files from two commits: none claimed
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen2.5-0.5B" / "snapshots" / commit
    snapshot.mkdir(parents=True)
    assert lab_models.local_commit(snapshot) == (commit, "local_path_hf_cache_snapshot")


def test_model_path_problems_are_one_line_and_load_nothing(local_checkpoint, offline, tmp_path, capsys):
    folder, _ = local_checkpoint
    empty = tmp_path / "empty"
    empty.mkdir()
    no_weights, no_tokenizer, broken = (tmp_path / name for name in ("no-weights", "no-tokenizer", "broken"))
    for partial in (no_weights, no_tokenizer, broken):
        partial.mkdir()
        (partial / "config.json").write_bytes((folder / "config.json").read_bytes())
    (no_tokenizer / "model.safetensors").write_bytes((folder / "model.safetensors").read_bytes())
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (broken / name).write_bytes((folder / name).read_bytes())
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    cases = [
        (["--model-path", str(tmp_path / "missing")], "no such folder"),
        (["--model-path", str(empty)], "no config.json"),
        (["--model-path", str(no_weights)], "no weight files"),
        (["--model-path", str(folder), "--model-revision", "main"], "drop one of the two"),
        (["--run-mode", "cpu_smoke", "--model-path", str(no_tokenizer)], "tokenizer files are missing"),
        (["--run-mode", "cpu_smoke", "--model-path", str(broken)], "could not load the checkpoint in"),
    ]
    for args, expected in cases:  # by its main in this process: a traceback would fail the test
        code = lab.main([*args, "--output-dir", str(tmp_path / "out")])
        stderr = capsys.readouterr().err
        assert code == 2, (args, stderr)
        error = [line for line in stderr.splitlines() if line.startswith("amp_backward_lab: error:")]
        assert len(error) == 1 and expected in error[0], (args, stderr)
        assert "Traceback" not in stderr and not (tmp_path / "out").exists()


def test_dry_run_with_model_path_reads_only_the_config(local_checkpoint, tmp_path):
    folder, _ = local_checkpoint
    result = subprocess.run([sys.executable, "-X", "importtime", str(LAB_SCRIPT), "--model-path", str(folder)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"local folder {folder}, recorded as local:tiny-qwen2-local" in result.stdout
    assert "model.safetensors" in result.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "torch" not in imported and "transformers" not in imported
    assert list(tmp_path.iterdir()) == []


def test_dry_run_names_the_hub_endpoint(tmp_path):
    env = dict(os.environ, HF_ENDPOINT="https://hf-mirror.com")
    result = subprocess.run([sys.executable, str(LAB_SCRIPT)], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode == 0 and "hub        https://hf-mirror.com;" in result.stdout
