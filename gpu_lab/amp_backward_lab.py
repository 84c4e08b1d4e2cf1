#!/usr/bin/env python3
"""Optional GPU lab: AMP update semantics and resource evidence (the chapter's Step 5).

Three precision paths train the same model on the same batch with the same optimizer:

* ``fp32``     -- FP32 baseline (a disabled GradScaler, so its scale stays 1.0);
* ``amp``      -- the candidate: FP16 autocast with a dynamic GradScaler, or BF16 autocast
                  without a scaler;
* ``overflow`` -- FP16 autocast + GradScaler with ``inf`` injected into the loss: the update
                  must be skipped and the loss scale must back off.

Each normal path runs 1 warm-up and N measured updates. Attempts whose gradient is not
finite (or whose update did not change the probe parameter) are counted as backoff steps
and never enter the timing statistics. The result is one strict-JSON record,
``DIR/train-amp-backward_<LABEL>.json``; ``python -m autograder check-lab RECORD`` grades it.

Run modes:
  dry_run   (default) validate the configuration and print the plan; imports no torch.
  cpu_smoke the same measurement code on the CPU with a tiny random Qwen2 model built from a
            ``transformers`` config and a byte encoding of the prompt (no download).
  real_gpu  the chapter's experiment on CUDA with Qwen/Qwen2.5-0.5B.

--config-only qwen2.5-0.5b (or a config.json file), in cpu_smoke or real_gpu: the model is built
from the architecture alone, with random weights seeded by the workload's seed, and fed token ids
drawn from that seed: no download, no tokenizer. Step time and peak memory depend on the
architecture, the length and the dtype path, not on the weights' values, so such a record is an
architecture benchmark (its own evidence_level); it never earns the lab's credit.

Every message is printed in English or Chinese (--lang, AUTOGRADER_LANG, or pyproject.toml's
[tool.autograder] lang, as for the grader); see amp_lab_text.py.

Where the model comes from (real_gpu, or cpu_smoke with --model-path):
  * by default the Hugging Face Hub id Qwen/Qwen2.5-0.5B, at --model-revision, resolved to an
    immutable commit. huggingface_hub reads the HF_ENDPOINT environment variable, so a mirror
    works without any change here: HF_ENDPOINT=https://hf-mirror.com python gpu_lab/...;
  * --model-path DIR: a checkpoint folder downloaded elsewhere (e.g. `modelscope download
    --model Qwen/Qwen2.5-0.5B --local_dir DIR`, or `hf download ... --local-dir DIR`). Nothing is
    downloaded; the record's model block says so (resolution_source "local_path...", the folder
    and the sha256 of its weight files).

This script is standalone: it imports nothing from the rest of the repository, only its
neighbours in gpu_lab/, and writes only into its output folder. This file is the command line;
each neighbour owns one part (its docstring says what):
  amp_lab_layout.py   the record's layout, shared with check-lab (identifiers, keys, workload)
  amp_lab_config.py   the workload, label and model options a run is given
  amp_lab_run.py      the run modes: the dry run's plan, and a run from device to record
  amp_lab_models.py   where the model and batch come from
  amp_lab_device.py   CPU and CUDA timing, peak memory, hardware, device errors
  amp_lab_measure.py  one update attempt, the chapter's loop of attempts, one precision path
  amp_lab_stats.py    median, nearest-rank P95, non-finite values as null
  amp_lab_flops.py    model FLOPs and MFU
  amp_lab_record.py   the update gate, the record and its file
  amp_lab_show.py     --show: the summary lines and the chart
  amp_lab_text.py     its words in two languages
  amp_lab_common.py   exit codes, the one error a user can fix, torch on demand
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

# The lab's own modules live beside it (it imports nothing from the rest of the repository).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from amp_lab_common import EXIT_OK, LabError  # noqa: E402
from amp_lab_config import SMOKE_DEFAULTS, build_workload, check_model_options, resolve_run_label  # noqa: E402
from amp_lab_layout import EVIDENCE_ARCHITECTURE, FALLBACK_SEQ_LEN, MODEL_ID, RESULTS_RELATIVE_DIR  # noqa: E402
from amp_lab_models import CONFIG_ONLY_BUILTIN, DEFAULT_REVISION  # noqa: E402
from amp_lab_record import record_path_for  # noqa: E402
from amp_lab_run import print_plan, run_experiment  # noqa: E402
from amp_lab_show import show_record  # noqa: E402
from amp_lab_text import resolve_language, set_language, text  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python gpu_lab/amp_backward_lab.py",
        description="Chapter Step 5: FP32 vs AMP update semantics, step time and peak memory.",
        epilog="The model: Qwen/Qwen2.5-0.5B from the Hugging Face Hub (huggingface_hub honours"
               " HF_ENDPOINT, e.g. https://hf-mirror.com), or --model-path DIR with a checkpoint"
               " downloaded elsewhere (modelscope download --model Qwen/Qwen2.5-0.5B --local_dir DIR).",
    )
    parser.add_argument("--run-mode", choices=("dry_run", "cpu_smoke", "real_gpu"), default="dry_run")
    parser.add_argument("--run-label", default=None,
                        help="record name part (default: 'default'; 'cpu_smoke' for cpu_smoke)")
    parser.add_argument("--candidate-dtype", choices=("float16", "bfloat16"), default="float16")
    parser.add_argument("--output-dir", type=Path, default=Path(RESULTS_RELATIVE_DIR),
                        help=f"record folder (default: {RESULTS_RELATIVE_DIR}, relative to the cwd)")
    parser.add_argument("--seq-len", type=int, default=None,
                        help=f"tokens per sequence (default 128; {SMOKE_DEFAULTS['seq_len']} in cpu_smoke;"
                             f" {FALLBACK_SEQ_LEN} is the chapter's low-memory fallback)")
    parser.add_argument("--repeats", type=int, default=None,
                        help=f"measured updates per path (default 20; {SMOKE_DEFAULTS['repeats']} in cpu_smoke)")
    parser.add_argument("--model-revision", default=None,
                        help=f"branch, tag or commit of {MODEL_ID} on the hub (default {DEFAULT_REVISION};"
                             " recorded with its resolved commit)")
    parser.add_argument("--local-files-only", action="store_true",
                        help="offline re-run: load the model from the Hugging Face cache only")
    parser.add_argument("--model-path", type=lambda value: Path(value).expanduser(), default=None, metavar="DIR",
                        help="load the checkpoint from DIR (downloaded elsewhere, e.g. from ModelScope)"
                             " instead of the hub; also works with cpu_smoke. For a hub mirror set"
                             " HF_ENDPOINT instead, e.g. HF_ENDPOINT=https://hf-mirror.com")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing record with the same label (by default a real_gpu"
                             " record is never replaced, and cpu_smoke replaces only smoke records)")
    parser.add_argument("--config-only", metavar="NAME_OR_FILE", default=None,
                        help=f"build the model from an architecture alone, with random weights and"
                             f" seeded token ids (no download, no tokenizer): {CONFIG_ONLY_BUILTIN}"
                             f" for {MODEL_ID}'s published config, or a Qwen2 config.json file. The"
                             f" record is an architecture benchmark ({EVIDENCE_ARCHITECTURE} on CUDA)"
                             " and earns no credit")
    parser.add_argument("--lang", choices=("zh", "en"), default=None,
                        help="language of the messages (default: AUTOGRADER_LANG, else pyproject.toml's"
                             " [tool.autograder] lang, else English)")
    parser.add_argument("--show", metavar="RECORD", type=Path, default=None,
                        help="print the summary of RECORD and write RECORD's stem .png next to it")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    set_language(resolve_language(args.lang))
    try:
        if args.show is not None:
            return show_record(args.show)
        mode = args.run_mode
        workload = build_workload(args, mode)
        run_label = resolve_run_label(args, mode)
        record_path = record_path_for(args.output_dir, run_label)
        check_model_options(args)
        if mode == "dry_run":
            print_plan(args, workload, record_path)
            return EXIT_OK
        return run_experiment(args, mode, workload, run_label, record_path)
    except LabError as exc:
        print(text("error_prefix", message=exc), file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
