"""The run modes: ``dry_run`` prints the plan and loads nothing (no torch import); ``cpu_smoke``
and ``real_gpu`` pick the device and the model source, run the three precision paths, write the
record and print its summary."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import amp_lab_device as device
from amp_lab_common import EXIT_GATE_REJECTED, EXIT_OK, EXIT_OUT_OF_MEMORY, LabError, require_torch
from amp_lab_config import requested_revision
from amp_lab_layout import (CONFIG_ONLY_SOURCE, EVIDENCE_ARCHITECTURE, EVIDENCE_REAL, EVIDENCE_SMOKE, MODEL_ID,
                            QWEN_ARCHITECTURE)
from amp_lab_measure import PathSpec, run_precision_path
from amp_lab_models import (build_causal_lm_batch, config_only_model_source, config_only_values,
                            local_model_id, local_model_source, pretrained_model_source, read_local_config,
                            tiny_model_source, weight_files)
from amp_lab_record import build_record, record_is_protected, write_record
from amp_lab_show import summary_lines
from amp_lab_text import text


def run_experiment(args, mode: str, workload: dict, run_label: str, record_path: Path) -> int:
    require_torch()
    device.require_transformers()
    if not args.overwrite and record_is_protected(record_path, mode):
        raise LabError(text("record_exists", path=record_path))
    if mode == "real_gpu":
        device.ensure_cuda_ready(workload["candidate_dtype"])
        ops = device.CudaOps(device.select_tensor_device(mode))
        evidence = EVIDENCE_ARCHITECTURE if args.config_only else EVIDENCE_REAL
    else:
        ops = device.CpuOps(device.select_tensor_device(mode))
        evidence = EVIDENCE_SMOKE
    if args.config_only is not None:
        source = config_only_model_source(workload, args.config_only)
        if mode == "cpu_smoke" and source.info["id"] == MODEL_ID:
            print(text("full_model_on_cpu"), flush=True)
    elif args.model_path is not None:
        source = local_model_source(workload, args.model_path)
    elif mode == "real_gpu":
        source = pretrained_model_source(workload, requested_revision(args), args.local_files_only)
    else:
        source = tiny_model_source(workload)
    batch = build_causal_lm_batch(source.token_rows, workload["batch_size"], workload["seq_len"], ops.device)
    paths = {
        "baseline": PathSpec("fp32", None),
        "candidate": PathSpec("amp", workload["candidate_dtype"]),
        "overflow": PathSpec("overflow", "float16", inject_overflow=True),
    }
    metrics = {}
    for key, spec in paths.items():
        print(text("running_path", path=spec.label), flush=True)
        try:
            metrics[key] = run_precision_path(spec, source, batch, workload, ops)
        except LabError:
            raise
        except Exception as exc:
            if device.is_out_of_memory(exc):
                raise LabError(device.out_of_memory_message(spec.label, workload["seq_len"]),
                               EXIT_OUT_OF_MEMORY) from None
            raise
    record = build_record(run_label, mode, source, workload, ops.hardware_snapshot(), metrics, ops, evidence)
    write_record(record, record_path)
    for line in summary_lines(record):
        print(line)
    if source.info["resolution_source"] == CONFIG_ONLY_SOURCE:
        print(text("config_only_notice"))
    print(text("record_written", path=record_path))
    return EXIT_OK if record["decision"] == "accept" else EXIT_GATE_REJECTED


def print_plan(args, workload: dict, record_path: Path) -> None:
    scaler = (
        text("plan_scaler_fp16", init=f"{workload['initial_scale']:g}", backoff=workload["backoff_factor"],
             interval=workload["growth_interval"])
        if workload["candidate_dtype"] == "float16"
        else text("plan_scaler_bf16")
    )
    installed = {name: text("installed" if importlib.util.find_spec(name) else "not_installed")
                 for name in ("torch", "transformers")}
    if args.config_only is not None:
        values, origin = config_only_values(args.config_only)
        matches = all(values.get(key) == value for key, value in QWEN_ARCHITECTURE.items() if key != "model_type")
        model_lines = [text("plan_model_config", model=MODEL_ID if matches else args.config_only,
                            source=origin, seed=workload["seed"])]
    elif args.model_path is not None:
        config = read_local_config(args.model_path)
        weights = ", ".join(item.name for item in weight_files(args.model_path))
        model_lines = [text("plan_model_local", path=args.model_path,
                            model=local_model_id(config, args.model_path), weights=weights)]
    else:
        endpoint = os.environ.get("HF_ENDPOINT") or text("plan_hub_default")
        model_lines = [
            text("plan_model_hub", model=MODEL_ID, revision=requested_revision(args),
                 offline=text("yes" if args.local_files_only else "no")),
            text("plan_hub", endpoint=endpoint),
        ]
    lines = [
        text("plan_title"),
        *model_lines,
        text("plan_batch", batch=workload["batch_size"], seq_len=workload["seq_len"], seed=workload["seed"]),
        text("plan_updates", lr=f"{workload['learning_rate']:g}", clip=workload["max_grad_norm"],
             warmup=workload["warmup"], repeats=workload["repeats"],
             backoffs=workload["max_scale_backoff_steps"]),
        text("plan_paths", dtype=workload["candidate_dtype"], scaler=scaler),
        text("plan_gate"),
        text("plan_record", path=record_path, exists=text("yes" if record_path.exists() else "no")),
        text("plan_packages", torch=installed["torch"], transformers=installed["transformers"]),
        text("plan_next"),
    ]
    print("\n".join(lines))
