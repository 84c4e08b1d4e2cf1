"""The lab record's layout, defined once: what the lab writes and what check-lab reads.

The record's identifiers and file names, the keys the chapter's layout requires, the evidence
levels, the chapter's workload (its GPU_CONFIG, section 5.1) and the model a credited record
names. The lab imports this module beside it; the course's checker
(``autograder/assignment/lab/layout.py``) executes this file by its path, so writer and reader
cannot drift apart.

Plain literals only, and no imports: the lab must stay standalone, and the grader runs this file
before any student code (a student's copy ships in the template, where the integrity manifest
protects it like the grader's own files).
"""

SCHEMA_VERSION = "training-mechanism-gpu/v3"
SEMANTIC_ID = "TRAIN-AMP-BACKWARD"
PROFILE_ID = "TRAIN-CUDA-MECHANISM"

# Records are DIR/train-amp-backward_<label>.json; DIR defaults to this folder, relative to the
# directory the lab runs in (the repository's root).
RECORD_PREFIX = SEMANTIC_ID.lower()
RECORD_GLOB = f"{RECORD_PREFIX}_*.json"
RESULTS_RELATIVE_DIR = "benchmarks/results/train_mixed_precision_backward"

# The chapter's layout: keys every record holds (the lab writes more; see README.md).
TOP_KEYS = ("schema_version", "semantic_id", "profile_id", "run_label", "model", "workload",
            "hardware", "metrics", "failure", "evidence_level", "decision")
MODEL_KEYS = ("id", "requested_revision", "resolved_commit", "resolution_source", "tokenizer_class")
WORKLOAD_KEYS = ("candidate_dtype", "batch_size", "seq_len", "repeats", "warmup", "learning_rate",
                 "initial_scale", "max_scale_backoff_steps", "seed", "prompts")
HARDWARE_KEYS = ("device", "name", "total_memory_mb", "capability", "torch", "cuda")
PATH_NAMES = ("baseline", "candidate", "overflow")  # metrics.<name>: FP32, AMP, injected overflow
PATH_KEYS = ("label", "dtype", "status", "step_median_ms", "step_p95_ms", "peak_allocated_mb",
             "grad_norm", "grad_is_finite", "probe_parameter", "parameter_delta_max",
             "scale_initial", "scale_before", "scale_after", "scale_backoff_steps",
             "attempted_steps", "successful_steps", "step_applied")

# evidence_level, and the device each one runs on.
EVIDENCE_REAL = "real_model_mechanism_benchmark"
EVIDENCE_SMOKE = "cpu_smoke_mechanism_check"
# real_gpu with --config-only: Qwen2.5-0.5B's architecture with random weights. Valid evidence of
# time, memory and update semantics; never the lab's credit.
EVIDENCE_ARCHITECTURE = "architecture_benchmark_random_weights"
EVIDENCE_DEVICE = {EVIDENCE_REAL: "cuda", EVIDENCE_SMOKE: "cpu", EVIDENCE_ARCHITECTURE: "cuda"}
CONFIG_ONLY_SOURCE = "config_only"  # model.resolution_source of a --config-only record
PEAK_KINDS = ("fp32", "tf32", "fp16_bf16_tensor")  # the math a path's MFU is measured against

# The chapter's GPU_CONFIG (section 5.1), key for key.
CHAPTER_WORKLOAD = {
    "candidate_dtype": "float16",
    "batch_size": 1,
    "seq_len": 128,
    "repeats": 20,
    "warmup": 1,
    "learning_rate": 1e-4,
    "initial_scale": 65536.0,
    "max_scale_backoff_steps": 12,
    "seed": 2026,
    "prompts": ["Explain mixed precision training."],
}
FALLBACK_SEQ_LEN = 64  # the chapter's first remedy when memory runs out
# Fixed by the chapter's code rather than its GPU_CONFIG; the lab records them so that a record
# describes itself, and a record without them is read with these values.
# growth_interval 1000 exceeds any run's attempt count, so the scale can only back off.
UPDATE_SETTINGS = {"growth_interval": 1000, "backoff_factor": 0.5, "max_grad_norm": 1.0}

# The model: Qwen2.5-0.5B, whose config.json states this architecture.
MODEL_ID = "Qwen/Qwen2.5-0.5B"
QWEN_ARCHITECTURE = {
    "model_type": "qwen2",
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
}
QWEN_PARAMETERS = 494_032_768  # its tied embedding counted once, as model.parameters() yields it
PROBE_SUFFIX = "self_attn.q_proj.weight"  # the parameter whose change shows an applied update
