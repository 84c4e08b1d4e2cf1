"""Where the lab's model and batch come from: the hub id, a local checkpoint folder, the tiny
cpu_smoke model, or an architecture alone (--config-only), each as a ModelSource that rebuilds the
identical model for every precision path. Part of the standalone lab (imports nothing from the
rest of the repository)."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import amp_lab_flops as flops_model
from amp_lab_common import LabError, require_torch
from amp_lab_layout import CONFIG_ONLY_SOURCE, MODEL_ID, PROBE_SUFFIX, QWEN_ARCHITECTURE
from amp_lab_text import text

DEFAULT_REVISION = "main"
CONFIG_ONLY_BUILTIN = "qwen2.5-0.5b"
# The rest of Qwen2.5-0.5B's published config.json that shapes the work (--config-only).
QWEN_CONFIG = dict(
    {key: value for key, value in QWEN_ARCHITECTURE.items() if key != "model_type"},
    max_position_embeddings=32768, rope_theta=1e6, rms_norm_eps=1e-6, tie_word_embeddings=True,
)
WEIGHT_SUFFIXES = (".safetensors", ".bin")

# Tiny Qwen2 for cpu_smoke: a 256-entry vocabulary holds the UTF-8 byte encoding of the prompt.
TINY_QWEN2 = {
    "vocab_size": 256,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "tie_word_embeddings": True,
}


# --------------------------------------------------------------------------- models and inputs

@dataclass
class ModelSource:
    """Everything a path needs to rebuild the identical model and batch."""

    info: dict  # becomes record["model"]
    token_rows: list  # token ids of each prompt
    load: Callable  # load(device) -> model, with identical weights on every call
    parameter_count: int | None = None
    attention_implementation: str | None = None
    num_layers: int | None = None  # for the attention FLOPs of the MFU
    attention_width: int | None = None

    def build_model(self, device):
        model = self.load(device)
        self.parameter_count = count_parameters(model)
        config = getattr(model, "config", None)
        self.attention_implementation = getattr(config, "_attn_implementation", None)
        self.num_layers, self.attention_width = flops_model.architecture_of(config)
        return model


def count_parameters(model) -> int:
    # parameters() yields a tied embedding/lm_head weight once, matching the work done.
    return sum(parameter.numel() for parameter in model.parameters())


def encode_prompt_bytes(prompt: str) -> list[int]:
    return list(prompt.encode("utf-8"))


def tiny_model_source(workload: dict) -> ModelSource:
    config_values = dict(TINY_QWEN2, max_position_embeddings=max(64, workload["seq_len"]))

    def load(device):
        from transformers import Qwen2Config, Qwen2ForCausalLM

        return Qwen2ForCausalLM(Qwen2Config(**config_values)).to(device)

    info = {
        "id": "tiny-random-qwen2",
        "requested_revision": None,
        "resolved_commit": None,
        "resolution_source": "random_init_from_config",
        "tokenizer_class": "utf8_bytes",
        "config": config_values,
    }
    rows = [encode_prompt_bytes(prompt) for prompt in workload["prompts"]]
    return ModelSource(info=info, token_rows=rows, load=load)


def config_only_values(choice: str) -> tuple[dict, str]:
    """(Qwen2Config keyword values, where they came from) for --config-only NAME or FILE."""
    if choice.lower() == CONFIG_ONLY_BUILTIN:
        return dict(QWEN_CONFIG), f"built-in {MODEL_ID} config.json values"
    path = Path(choice).expanduser()
    if not path.is_file():
        raise LabError(text("config_only_unknown", value=repr(choice), builtin=CONFIG_ONLY_BUILTIN))
    config = read_config_json(path)
    if config.get("model_type", "qwen2") != "qwen2":
        raise LabError(text("config_only_not_qwen2", path=path, value=repr(config.get("model_type"))))
    # Only what shapes the model: no dtype, no auto_map, nothing that loads code or weights.
    keys = tuple(QWEN_CONFIG) + ("head_dim", "hidden_act", "rope_scaling", "attention_dropout")
    return {key: config[key] for key in keys if key in config}, f"file {path.name}"


def seeded_token_rows(vocab_size: int, batch_size: int, seq_len: int, seed: int) -> list:
    """Token ids drawn uniformly from the vocabulary by a generator seeded with the workload seed."""
    torch = require_torch()
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (batch_size, seq_len), generator=generator)
    return ids.tolist()


def config_only_model_source(workload: dict, choice: str) -> ModelSource:
    """The architecture alone, random weights: an architecture benchmark, never credit."""
    config_values, origin = config_only_values(choice)
    architecture = {"model_type": "qwen2", **config_values}
    matches = all(architecture.get(key) == value for key, value in QWEN_ARCHITECTURE.items())

    def load(device):
        from transformers import Qwen2Config, Qwen2ForCausalLM

        return Qwen2ForCausalLM(Qwen2Config(**config_values)).to(device)

    info = {
        "id": MODEL_ID if matches else f"config:{Path(choice).stem}",
        "requested_revision": None,
        "resolved_commit": None,
        "resolution_source": CONFIG_ONLY_SOURCE,
        "tokenizer_class": "none_seeded_random_token_ids",
        "weights": "random initialisation (transformers' init, torch.manual_seed(workload.seed))",
        "token_ids": "torch.randint(0, vocab_size, (batch_size, seq_len)) from a torch.Generator "
                     "seeded with workload.seed; the prompts are not used",
        "config_source": origin,
        "config": config_values,
    }
    vocab_size = config_values.get("vocab_size", QWEN_ARCHITECTURE["vocab_size"])
    rows = seeded_token_rows(vocab_size, workload["batch_size"], workload["seq_len"], workload["seed"])
    return ModelSource(info=info, token_rows=rows, load=load)


def is_commit_hash(revision: str | None) -> bool:
    return bool(revision) and re.fullmatch(r"[0-9a-f]{40}", revision) is not None


def resolve_revision(model_id: str, revision: str, local_files_only: bool) -> tuple[str, str]:
    """Turn a branch or tag into the immutable commit that will be loaded."""
    if is_commit_hash(revision):
        return revision, "requested_commit"
    import huggingface_hub

    if local_files_only:
        snapshot = huggingface_hub.snapshot_download(
            model_id, revision=revision, local_files_only=True
        )
        return Path(snapshot).name, "local_cache_snapshot"
    info = huggingface_hub.HfApi().model_info(model_id, revision=revision)
    return info.sha, "huggingface_hub.model_info"


def load_tokenizer(name_or_path: str, revision: str | None, local_files_only: bool):
    from transformers import AutoTokenizer

    kwargs = {"local_files_only": local_files_only}
    if revision is not None:  # a local folder has no revision
        kwargs["revision"] = revision
    return AutoTokenizer.from_pretrained(name_or_path, **kwargs)


def tokenize_prompts(tokenizer, prompts: list[str]) -> list:
    return [tokenizer(prompt, add_special_tokens=False)["input_ids"] for prompt in prompts]


def dtype_keyword() -> str:
    # transformers 4.56 renamed torch_dtype to dtype (and 5.x loads the checkpoint's dtype by
    # default), so the FP32 request must be explicit and spelled for the installed version.
    import transformers

    major, minor = (int(part) for part in re.findall(r"\d+", transformers.__version__)[:2])
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def load_pretrained_causal_lm(name_or_path: str, revision: str | None, device, local_files_only: bool,
                              failure_message: Callable[[Exception], str]):
    """The one loader of a real checkpoint, from the hub id or from a local folder."""
    torch = require_torch()
    from transformers import AutoModelForCausalLM

    kwargs = {"local_files_only": local_files_only, dtype_keyword(): torch.float32}
    if revision is not None:
        kwargs["revision"] = revision
    try:
        model = AutoModelForCausalLM.from_pretrained(name_or_path, **kwargs)
    except Exception as exc:  # any loader failure becomes one clear line
        raise LabError(failure_message(exc)) from None
    return model.to(device)  # an OOM here is reported by the caller


def first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]


def model_load_message(model_id: str, revision: str, local_files_only: bool, exc: Exception) -> str:
    hint = text("hint_offline" if local_files_only else "hint_online")
    return text("load_failed", model=f"{model_id}@{revision}",
                error=f"{type(exc).__name__}: {first_line(exc)}", hint=hint)


def local_load_message(path: Path, exc: Exception) -> str:
    return text("local_load_failed", path=path, error=f"{type(exc).__name__}: {first_line(exc)}",
                hint=text("folder_hint"))


def pretrained_model_source(workload: dict, revision: str, local_files_only: bool) -> ModelSource:
    try:
        commit, resolution_source = resolve_revision(MODEL_ID, revision, local_files_only)
        tokenizer = load_tokenizer(MODEL_ID, commit, local_files_only)
    except ImportError as exc:
        raise LabError(text("package_missing", error=exc)) from None
    except Exception as exc:
        raise LabError(model_load_message(MODEL_ID, revision, local_files_only, exc)) from None
    info = {
        "id": MODEL_ID,
        "requested_revision": revision,
        "resolved_commit": commit,
        "resolution_source": resolution_source,
        "tokenizer_class": type(tokenizer).__name__,
    }

    def load(device):
        return load_pretrained_causal_lm(
            MODEL_ID, commit, device, local_files_only,
            lambda exc: model_load_message(MODEL_ID, commit, local_files_only, exc))

    return ModelSource(info=info, token_rows=tokenize_prompts(tokenizer, workload["prompts"]), load=load)


# --------------------------------------------------------------------------- a local checkpoint

def read_local_config(path: Path) -> dict:
    """``config.json`` of a --model-path folder; any problem is one clear line (no torch needed)."""
    if not path.is_dir():
        raise LabError(text("path_no_folder", path=path, hint=text("folder_hint")))
    config_path = path / "config.json"
    if not config_path.is_file():
        raise LabError(text("path_no_config", path=path, hint=text("folder_hint")))
    config = read_config_json(config_path)
    if not weight_files(path):
        raise LabError(text("path_no_weights", path=path, hint=text("folder_hint")))
    return config


def read_config_json(config_path: Path) -> dict:
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise LabError(text("config_unreadable", path=config_path, error=exc)) from None
    if not isinstance(config, dict):
        raise LabError(text("config_not_object", path=config_path))
    return config


def weight_files(path: Path) -> list[Path]:
    return [item for item in sorted(path.iterdir()) if item.suffix in WEIGHT_SUFFIXES and item.is_file()]


def local_model_id(config: dict, path: Path) -> str:
    """MODEL_ID when the folder holds Qwen2.5-0.5B's architecture, else 'local:<folder name>'."""
    if all(config.get(key) == value for key, value in QWEN_ARCHITECTURE.items()):
        return MODEL_ID
    return f"local:{path.resolve().name}"


def local_commit(path: Path) -> tuple[str | None, str]:
    """The hub commit a local folder was downloaded at, where the folder says so.

    ``hf download --local-dir`` leaves ``.cache/huggingface/download/<file>.metadata`` files whose
    first line is the commit; a Hugging Face cache snapshot is named by its commit. A ModelScope
    download (or a copied folder) records none: (None, "local_path")."""
    commits = set()
    metadata_dir = path / ".cache" / "huggingface" / "download"
    if metadata_dir.is_dir():
        for metadata in metadata_dir.rglob("*.metadata"):
            try:
                commits.add(metadata.read_text(encoding="utf-8").splitlines()[0].strip())
            except (OSError, UnicodeDecodeError, IndexError):
                commits.add("")
    if len(commits) == 1 and is_commit_hash(next(iter(commits))):
        return next(iter(commits)), "local_path_hf_download"
    resolved = path.resolve()
    if resolved.parent.name == "snapshots" and is_commit_hash(resolved.name):
        return resolved.name, "local_path_hf_cache_snapshot"
    return None, "local_path"


def weights_sha256(path: Path) -> dict:
    """sha256 of each weight file of the folder: staff can compare it with the hub's file hashes."""
    hashes = {}
    for item in weight_files(path):
        digest = hashlib.sha256()
        with open(item, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        hashes[item.name] = digest.hexdigest()
    return hashes


def local_model_source(workload: dict, path: Path) -> ModelSource:
    """A checkpoint folder downloaded elsewhere (ModelScope, a mirror, a copy): loaded offline
    through the same loader as the hub id; the record says where it came from."""
    config = read_local_config(path)
    commit, resolution_source = local_commit(path)
    try:
        tokenizer = load_tokenizer(str(path), None, True)
    except ImportError as exc:
        raise LabError(text("package_missing", error=exc)) from None
    except Exception as exc:
        raise LabError(local_load_message(path, exc)) from None
    rows = tokenize_prompts(tokenizer, workload["prompts"])
    if not all(rows):  # transformers builds an empty tokenizer from a folder without tokenizer files
        raise LabError(text("empty_tokenizer", path=path, hint=text("folder_hint")))
    info = {
        "id": local_model_id(config, path),
        "requested_revision": None,
        "resolved_commit": commit,
        "resolution_source": resolution_source,
        "tokenizer_class": type(tokenizer).__name__,
        "local_path": str(path),
        "weights_sha256": weights_sha256(path),
    }

    def load(device):
        return load_pretrained_causal_lm(str(path), None, device, True,
                                         lambda exc: local_load_message(path, exc))

    return ModelSource(info=info, token_rows=rows, load=load)


def build_causal_lm_batch(token_rows: list, batch_size: int, seq_len: int, device) -> dict:
    """Repeat each prompt's tokens to fill seq_len: every position is real text, no padding."""
    torch = require_torch()
    rows = []
    for index in range(batch_size):
        ids = list(token_rows[index % len(token_rows)])
        if not ids:
            raise LabError(text("empty_prompt"))
        rows.append([ids[position % len(ids)] for position in range(seq_len)])
    input_ids = torch.tensor(rows, dtype=torch.long, device=device)
    return {
        "input_ids": input_ids,
        "attention_mask": torch.ones_like(input_ids),
        "labels": input_ids.clone(),
    }


def find_probe_parameter(model):
    for name, parameter in model.named_parameters():
        if name.endswith(PROBE_SUFFIX) and parameter.requires_grad:
            return name, parameter
    raise LabError(text("no_probe", suffix=repr(PROBE_SUFFIX)))
