"""The GPU lab record's layout: identifiers, required keys and their types.

A record passes this stage when it is a JSON object holding every key of the chapter's layout
with the right type and the fixed identifiers. Whether the numbers fit together is
:mod:`autograder.assignment.lab.consistency`; whether a GPU could have produced them is
:mod:`autograder.assignment.lab.plausibility`.

The layout itself (identifiers, file names, required keys, evidence levels, the chapter's
workload and model) is defined once, in ``gpu_lab/amp_lab_layout.py`` beside the lab that writes
the records: :func:`lab_layout` executes that file and this module names what it defines, so the
writer and the reader cannot drift apart. The lab is standalone and cannot import the grader; the
grader reads the lab's file, which every export of the grader ships with it (``GRADER_FILES`` in
the description) and the template's integrity manifest protects.

Everything here also serves the later stages: the constants, the number helpers and
:func:`shown` / :func:`plain_text`, which every message uses to echo a student's value (a record
is hostile input: a value may be megabytes long or carry terminal escape codes).

Every problem is an :mod:`autograder.i18n` message (``_("...")``), rendered in the reader's
language only when it is shown (:meth:`autograder.assignment.lab.check.LabVerdict.rendered`).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from autograder.authoring import REPO_ROOT, _, safe_files

LAB_LAYOUT_FILE = "gpu_lab/amp_lab_layout.py"  # relative to the repository's root
MAX_LAB_LAYOUT_BYTES = 1 << 16


def lab_layout(root=None) -> dict:
    """The names ``gpu_lab/amp_lab_layout.py`` defines (under ``root``, default the grader's own
    repository). Compiled from its source, never from a cached ``.pyc``: a cache beside the file
    is not something the grader's guard watches. Read once, when the checker is imported, which
    the judge does before any student code runs."""
    path = Path(root or REPO_ROOT) / LAB_LAYOUT_FILE
    try:
        source = safe_files.read_text(str(path), MAX_LAB_LAYOUT_BYTES)
    except OSError as exc:
        raise ImportError(f"the GPU lab's record layout cannot be read: {exc}") from None
    names = {"__name__": "amp_lab_layout", "__file__": str(path)}
    exec(compile(source, str(path), "exec"), names)  # plain literals (the file says so)
    return names


_LAB = lab_layout()
RECORD_PREFIX = _LAB["RECORD_PREFIX"]
RECORD_GLOB = _LAB["RECORD_GLOB"]
RESULTS_RELATIVE_DIR = Path(_LAB["RESULTS_RELATIVE_DIR"])

SCHEMA_VERSION = _LAB["SCHEMA_VERSION"]
SEMANTIC_ID = _LAB["SEMANTIC_ID"]
PROFILE_ID = _LAB["PROFILE_ID"]
MODEL_ID = _LAB["MODEL_ID"]
QWEN_ARCHITECTURE = _LAB["QWEN_ARCHITECTURE"]
EVIDENCE_REAL = _LAB["EVIDENCE_REAL"]
EVIDENCE_SMOKE = _LAB["EVIDENCE_SMOKE"]
EVIDENCE_ARCHITECTURE = _LAB["EVIDENCE_ARCHITECTURE"]  # valid evidence, never the credit
CONFIG_ONLY_SOURCE = _LAB["CONFIG_ONLY_SOURCE"]
EVIDENCE_DEVICE = _LAB["EVIDENCE_DEVICE"]
PEAK_KINDS = _LAB["PEAK_KINDS"]
PROBE_SUFFIX = _LAB["PROBE_SUFFIX"]

TOP_KEYS = _LAB["TOP_KEYS"]
MODEL_KEYS = _LAB["MODEL_KEYS"]
WORKLOAD_KEYS = _LAB["WORKLOAD_KEYS"]
HARDWARE_KEYS = _LAB["HARDWARE_KEYS"]
PATH_NAMES = _LAB["PATH_NAMES"]
PATH_KEYS = _LAB["PATH_KEYS"]

GPU_CONFIG = _LAB["CHAPTER_WORKLOAD"]  # the chapter's, key for key
FALLBACK_SEQ_LEN = _LAB["FALLBACK_SEQ_LEN"]
# Fixed in the chapter's code; records may state them (the lab does), defaults otherwise.
UPDATE_DEFAULTS = _LAB["UPDATE_SETTINGS"]

QWEN_PARAMETERS = _LAB["QWEN_PARAMETERS"]
QWEN_FP32_WEIGHTS_MB = QWEN_PARAMETERS * 4 / 2**20                # 1884.6 MiB
QWEN_FP32_WEIGHTS_AND_GRADS_MB = QWEN_PARAMETERS * 8 / 2**20      # 3769.2 MiB

REL_TOL = 1e-6
SHOWN_LIMIT = 80  # characters of a student's value echoed in one message


# --------------------------------------------------------------------------- small helpers

def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def close(a, b, rel=REL_TOL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def shown(value, limit: int = SHOWN_LIMIT) -> str:
    """``repr`` of a student's value for a message: escaped (repr escapes control and
    bidi characters) and bounded, so a record cannot flood or repaint a TA's terminal."""
    if isinstance(value, str) and len(value) > 4 * limit:
        value = value[:4 * limit]  # repr of the head only: the rest is cut anyway
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def plain_text(value, limit: int = SHOWN_LIMIT) -> str:
    """A student's string shown without quotes: printable characters only, bounded."""
    text = value if isinstance(value, str) else repr(value)
    text = "".join(ch if ch.isprintable() else "?" for ch in text[:4 * limit])
    return text if len(text) <= limit else text[:limit - 3] + "..."


def joined(items):
    """One message listing ``items`` (messages or strings) separated by semicolons."""
    items = list(items)
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return _("{first}; {rest}", first=items[0], rest=joined(items[1:]))


def parse_capability(value):
    """``[major, minor]``, ``"major.minor"``, ``"sm_XY"`` or ``{major, minor}`` -> (major, minor)."""
    if isinstance(value, list) and len(value) == 2 and all(is_int(v) and v >= 0 for v in value):
        return int(value[0]), int(value[1])
    if isinstance(value, dict) and is_int(value.get("major")) and is_int(value.get("minor")):
        return value["major"], value["minor"]
    if isinstance(value, str):
        match = re.fullmatch(r"(\d{1,3})(?:\.(\d{1,3}))?", value)
        if match:
            return int(match[1]), int(match[2] or 0)
        match = re.fullmatch(r"sm_(\d{1,3})\.(\d{1,3})", value)
        if match:
            return int(match[1]), int(match[2])
        match = re.fullmatch(r"sm_(\d{1,3})(\d)", value)  # sm_120 is 12.0, sm_86 is 8.6
        if match:
            return int(match[1]), int(match[2])
    return None


# --------------------------------------------------------------------------- layout and types

MODEL_SPEC = {"id": "str", "requested_revision": "str?", "resolved_commit": "str?",
              "resolution_source": "str", "tokenizer_class": "str"}
WORKLOAD_SPEC = {"candidate_dtype": "str", "batch_size": "int>=1", "seq_len": "int>=1",
                 "repeats": "int>=1", "warmup": "int>=0", "learning_rate": "num>0",
                 "initial_scale": "num>0", "max_scale_backoff_steps": "int>=0", "seed": "int"}
HARDWARE_SPEC = {"device": "str", "name": "str", "total_memory_mb": "num>=0?", "torch": "str",
                 "cuda": "str?"}
PATH_SPEC = {"label": "str", "dtype": "str", "status": "str", "step_median_ms": "num>0?",
             "step_p95_ms": "num>0?", "peak_allocated_mb": "num>=0?", "grad_norm": "num>=0?",
             "grad_is_finite": "bool", "probe_parameter": "str", "parameter_delta_max": "num>=0?",
             "scale_initial": "num>0", "scale_before": "num>0", "scale_after": "num>0",
             "scale_backoff_steps": "int>=0", "attempted_steps": "int>=0",
             "successful_steps": "int>=0", "step_applied": "bool"}

_KINDS = {
    "str": (lambda v: isinstance(v, str) and v != "", _("a non-empty string")),
    "bool": (lambda v: isinstance(v, bool), _("true or false")),
    "int": (is_int, _("an integer")),
    "int>=0": (lambda v: is_int(v) and v >= 0, _("an integer >= 0")),
    "int>=1": (lambda v: is_int(v) and v >= 1, _("an integer >= 1")),
    "num>0": (lambda v: is_number(v) and v > 0, _("a finite number > 0")),
    "num>=0": (lambda v: is_number(v) and v >= 0, _("a finite number >= 0")),
}


def check_value(where: str, value, kind: str, problems: list) -> None:
    """kind: one of _KINDS, with a trailing ``?`` when null is allowed."""
    optional = kind.endswith("?")
    base = kind.rstrip("?")
    ok, expected = _KINDS[base]
    if value is None:
        if not optional:
            problems.append(_("{where} is null; expected {expected}", where=where, expected=expected))
        return
    if not ok(value):
        if optional:
            problems.append(_("{where} is {value}; expected {expected} or null", where=where,
                              value=shown(value), expected=expected))
        else:
            problems.append(_("{where} is {value}; expected {expected}", where=where,
                              value=shown(value), expected=expected))


def _missing(key: str):
    return _("missing key {key}", key=key)


def _check_object(where: str, obj, spec: dict, problems: list) -> None:
    if not isinstance(obj, dict):
        problems.append(_("{where} is {type}; expected an object", where=where,
                          type=type(obj).__name__))
        return
    for key, kind in spec.items():
        if key not in obj:
            problems.append(_missing(f"{where}.{key}"))
        else:
            check_value(f"{where}.{key}", obj[key], kind, problems)


def layout_problems(record) -> list:
    """Missing keys, wrong types and wrong identifiers (messages); empty when the layout is
    complete."""
    if not isinstance(record, dict):
        return [_("the record is {type}; expected a JSON object", type=type(record).__name__)]
    problems = [_missing(key) for key in TOP_KEYS if key not in record]
    if problems:
        return problems
    for key, expected in (("schema_version", SCHEMA_VERSION), ("semantic_id", SEMANTIC_ID),
                          ("profile_id", PROFILE_ID)):
        if record[key] != expected:
            problems.append(_("{key} is {value}; expected {expected}", key=key,
                              value=shown(record[key]), expected=repr(expected)))
    check_value("run_label", record["run_label"], "str", problems)
    _check_object("model", record["model"], MODEL_SPEC, problems)
    _check_object("workload", record["workload"], WORKLOAD_SPEC, problems)
    if isinstance(record["workload"], dict):
        _check_workload_extras(record["workload"], problems)
    _check_object("hardware", record["hardware"], HARDWARE_SPEC, problems)
    if isinstance(record["hardware"], dict):
        _check_hardware_extras(record["hardware"], problems)
    metrics = record["metrics"]
    if not isinstance(metrics, dict):
        problems.append(_("metrics is not an object"))
    else:
        for name in PATH_NAMES:
            if name not in metrics:
                problems.append(_missing(f"metrics.{name}"))
            else:
                _check_object(f"metrics.{name}", metrics[name], PATH_SPEC, problems)
                _check_path_extras(f"metrics.{name}", metrics[name], problems)
    failure = record["failure"]
    if failure is not None:
        if not isinstance(failure, dict):
            problems.append(_("failure must be null or an object with type and message"))
        else:
            check_value("failure.type", failure.get("type"), "str", problems)
            check_value("failure.message", failure.get("message"), "str", problems)
    if record["evidence_level"] not in EVIDENCE_DEVICE:
        problems.append(_("evidence_level is {value}; expected one of {choices}",
                          value=shown(record["evidence_level"]),
                          choices=", ".join(repr(level) for level in sorted(EVIDENCE_DEVICE))))
    _check_measurement_extras(record.get("measurement"), problems)
    if record["decision"] not in ("accept", "reject"):
        problems.append(_("decision is {value}; expected 'accept' or 'reject'",
                          value=shown(record["decision"])))
    return problems


def _check_hardware_extras(hardware: dict, problems: list) -> None:
    if "capability" not in hardware:
        problems.append(_missing("hardware.capability"))
    elif hardware["capability"] is not None and parse_capability(hardware["capability"]) is None:
        problems.append(_("hardware.capability is {value}; expected {forms} or null",
                          value=shown(hardware["capability"]),
                          forms="[major, minor], 'major.minor', {major, minor}"))
    device = hardware.get("device")
    if isinstance(device, str) and device not in ("cuda", "cpu"):
        problems.append(_("hardware.device is {value}; expected 'cuda' or 'cpu'", value=shown(device)))


def _check_workload_extras(workload: dict, problems: list) -> None:
    dtype = workload.get("candidate_dtype")
    if isinstance(dtype, str) and dtype not in ("float16", "bfloat16"):
        problems.append(_("workload.candidate_dtype is {value}; expected 'float16' or 'bfloat16'",
                          value=shown(dtype)))
    prompts = workload.get("prompts", None)
    if "prompts" not in workload:
        problems.append(_missing("workload.prompts"))
    elif not (isinstance(prompts, list) and prompts and all(isinstance(p, str) and p for p in prompts)):
        problems.append(_("workload.prompts must be a non-empty list of non-empty strings"))
    if "seq_len" in workload and is_int(workload["seq_len"]) and workload["seq_len"] < 2:
        problems.append(_("workload.seq_len must be at least 2 for a causal LM loss"))
    # Optional settings the chapter fixes in code; checked only when present.
    if "growth_interval" in workload:
        check_value("workload.growth_interval", workload["growth_interval"], "int>=1", problems)
    if "max_grad_norm" in workload:
        check_value("workload.max_grad_norm", workload["max_grad_norm"], "num>0", problems)
    if "backoff_factor" in workload:
        factor = workload["backoff_factor"]
        if not (is_number(factor) and 0 < factor < 1):
            problems.append(_("workload.backoff_factor is {value}; expected a number in (0, 1)",
                              value=shown(factor)))


def _check_path_extras(where: str, path, problems: list) -> None:
    """Fields the lab adds beyond the chapter: optional, but typed when present."""
    if not isinstance(path, dict):
        return
    status = path.get("status")
    if isinstance(status, str) and status not in ("measured", "failed_to_stabilize"):
        problems.append(_("{where}.status is {value}; expected 'measured' or 'failed_to_stabilize'",
                          where=where, value=shown(status)))
    if "step_times_ms" in path:
        times = path["step_times_ms"]
        if not (isinstance(times, list) and all(is_number(t) and t > 0 for t in times)):
            problems.append(_("{where}.step_times_ms must be a list of finite positive numbers",
                              where=where))
    for key in ("tokens_per_second", "achieved_tflops", "model_tflops", "peak_tflops", "mfu"):
        if key in path:
            check_value(f"{where}.{key}", path[key], "num>0?", problems)
    kind = path.get("peak_kind")
    if kind is not None and kind not in PEAK_KINDS:
        problems.append(_("{where}.peak_kind is {value}; expected one of {choices} or null",
                          where=where, value=shown(kind), choices=", ".join(map(repr, PEAK_KINDS))))


# Fields of the lab's optional measurement block that the checks below compute with.
MEASUREMENT_SPEC = {"model_flops_per_step": "num>0?", "attention_flops_per_step": "num>=0?",
                    "num_layers": "int>=1?", "attention_width": "int>=1?"}


def _check_measurement_extras(measurement, problems: list) -> None:
    """The measurement block is optional (the chapter's records have none); typed when present."""
    if not isinstance(measurement, dict):
        return
    for key, kind in MEASUREMENT_SPEC.items():
        if key in measurement:
            check_value(f"measurement.{key}", measurement[key], kind, problems)


def settings(workload: dict) -> dict:
    """growth_interval, backoff_factor and max_grad_norm: the record's or the chapter's."""
    return {key: workload.get(key, default) for key, default in UPDATE_DEFAULTS.items()}
