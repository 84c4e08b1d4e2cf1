"""``python -m autograder check-lab RECORD.json``: validate a GPU lab record, decide its credit.

A record goes through four stages, each in its own module:

1. **layout** (:mod:`autograder.assignment.lab.layout`): strict JSON with the chapter's complete layout, the
   right types and the fixed identifiers;
2. **consistency** (:mod:`autograder.assignment.lab.consistency`): the numbers fit together as the lab's
   loop produces them (backoffs versus the scale trajectory, attempts versus successes,
   P95 >= median, the overflow path, the decision versus the update gate, evidence versus
   hardware). Stages 1 and 2 make a record **valid**;
3. **plausibility** (:mod:`autograder.assignment.lab.plausibility`): a GPU could have measured it (step
   times versus the named GPU's peak throughput, memory versus the model and the board);
4. **credit** (here): a valid, plausible record **earns the optional credit** only when it is the
   chapter's experiment on real CUDA hardware: evidence ``real_model_mechanism_benchmark``,
   Qwen/Qwen2.5-0.5B at a resolved commit, the chapter's workload (sequence length 64 is the
   documented fallback), and decision ``accept``. A ``--config-only`` record (evidence
   ``architecture_benchmark_random_weights``: the architecture with random weights) is valid and
   plausible-checked like any other, and never earns it.

The checker proves consistency and plausibility, not authenticity: a record is self-reported,
and a careful hand-edit that stays within physics passes. Files are read by
:mod:`autograder.assignment.lab.files` (no links, regular files only, bounded size); the command line is
:mod:`autograder.assignment.lab.cli`.

Every text of a verdict (summary, reasons, notes, plausibility) is built as an
:mod:`autograder.i18n` message. :func:`check_record` and :func:`check_file` render them in
``lang`` (English by default, what staff reports and batch runs read); ``lang=None`` keeps the
messages, to be rendered later with :meth:`LabVerdict.rendered`.

No torch import here: the command must start fast. Nothing from ``gpu_lab`` is imported either.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.authoring import safe_files, _, render
from autograder.assignment.lab.consistency import consistency_problems, gate_failures
from autograder.assignment.lab.files import (MAX_RECORD_BYTES, StrictJSONError, find_records,
                                             parse_strict_json, read_record_bytes, refusal)
from autograder.assignment.lab.layout import (CONFIG_ONLY_SOURCE, EVIDENCE_ARCHITECTURE, EVIDENCE_DEVICE,
                                              EVIDENCE_REAL, EVIDENCE_SMOKE, FALLBACK_SEQ_LEN, GPU_CONFIG,
                                              HARDWARE_KEYS, MODEL_ID, MODEL_KEYS, PATH_KEYS, PATH_NAMES, PROBE_SUFFIX,
                                              QWEN_FP32_WEIGHTS_AND_GRADS_MB, QWEN_PARAMETERS, RECORD_GLOB,
                                              RESULTS_RELATIVE_DIR, SCHEMA_VERSION, TOP_KEYS,
                                              UPDATE_DEFAULTS, WORKLOAD_KEYS, close, is_number, joined,
                                              layout_problems, parse_capability, plain_text, shown)
from autograder.assignment.lab.plausibility import plausibility

__all__ = [  # the public API; other code and tests import it from here
    "LabVerdict", "check_record", "check_file", "find_records", "parse_strict_json",
    "gate_failures", "hardware_info", "MAX_RECORD_BYTES", "StrictJSONError",
    "CHAPTER_WORKLOAD", "ACCEPTED_SEQ_LENS", "MIN_REPEATS", "EVIDENCE_ARCHITECTURE",
    "EVIDENCE_DEVICE", "EVIDENCE_REAL",
    "EVIDENCE_SMOKE", "HARDWARE_KEYS", "MODEL_ID", "MODEL_KEYS", "PATH_KEYS", "PATH_NAMES",
    "PROBE_SUFFIX", "QWEN_FP32_WEIGHTS_AND_GRADS_MB", "QWEN_PARAMETERS", "RECORD_GLOB",
    "RESULTS_RELATIVE_DIR", "SCHEMA_VERSION", "TOP_KEYS", "UPDATE_DEFAULTS", "WORKLOAD_KEYS",
]

# The chapter's GPU_CONFIG, which a credited run must keep; the candidate dtype is free, and
# seq_len, repeats and warm-up have rules of their own (below).
CHAPTER_WORKLOAD = {key: value for key, value in GPU_CONFIG.items()
                    if key not in ("candidate_dtype", "seq_len", "repeats", "warmup")}
ACCEPTED_SEQ_LENS = (GPU_CONFIG["seq_len"], FALLBACK_SEQ_LEN)  # the chapter's, and its low-memory fallback
MIN_REPEATS = GPU_CONFIG["repeats"]


@dataclass
class LabVerdict:
    """A record's verdict. The texts are i18n messages (``lang=None``) or strings rendered in
    one language (:meth:`rendered`)."""
    valid: bool               # complete and internally consistent
    earns_credit: bool
    reasons: list             # why it is invalid, impossible or earns no credit
    summary: object
    notes: list = field(default_factory=list)
    readable: bool = True     # False when the file could not be read at all
    plausible: bool = True    # passed the plausibility stage (False: impossible or not reached)
    plausibility: list = field(default_factory=list)  # each figure against its bound
    hardware: dict = field(default_factory=dict)  # hardware_info(record): bounded, JSON-able

    def rendered(self, lang="en") -> LabVerdict:
        """A copy whose summary, reasons, notes and plausibility are strings in ``lang``."""
        return dataclasses.replace(
            self, summary=render(self.summary, lang),
            reasons=[render(reason, lang) for reason in self.reasons],
            notes=[render(note, lang) for note in self.notes],
            plausibility=[render(check, lang) for check in self.plausibility],
            hardware=dict(self.hardware))


def _finish(verdict: LabVerdict, lang) -> LabVerdict:
    return verdict if lang is None else verdict.rendered(lang)


def check_record(record, lang="en") -> LabVerdict:
    """Validate one parsed record and decide whether it earns the optional GPU credit.
    ``lang``: the language of the verdict's texts (None: keep them as messages)."""
    return _finish(_check_record(record), lang)


def _could_not_check(exc):
    return _("record could not be checked: {error}", error=type(exc).__name__)


def _check_record(record) -> LabVerdict:
    hardware = hardware_info(record)
    try:
        problems = layout_problems(record)
        if not problems:
            problems = consistency_problems(record)
    except Exception as exc:  # defensive: a malformed record must never crash the grader
        problems = [_could_not_check(exc)]
    if problems:
        return LabVerdict(valid=False, earns_credit=False, reasons=problems, hardware=hardware,
                          plausible=False,
                          summary=_("INVALID record ({problems}): no credit", problems=_count(problems)))
    try:
        impossible, checks = plausibility(record)
        gaps, notes = _credit_gaps(record)
        summary = _summary(record)
    except Exception as exc:  # a value of a type no stage foresaw
        return LabVerdict(valid=True, earns_credit=False, plausible=False, hardware=hardware,
                          reasons=[_could_not_check(exc)],
                          summary=_("record could not be checked: no credit"))
    if impossible:
        return LabVerdict(valid=True, earns_credit=False, plausible=False, hardware=hardware,
                          reasons=impossible + gaps, notes=notes, plausibility=checks,
                          summary=_("physically impossible record ({problems}): no credit: {summary}",
                                    problems=_count(impossible), summary=summary))
    if gaps:
        return LabVerdict(valid=True, earns_credit=False, reasons=gaps, notes=notes,
                          plausibility=checks, hardware=hardware,
                          summary=_("valid record, no GPU credit: {summary}", summary=summary))
    return LabVerdict(valid=True, earns_credit=True, reasons=[], notes=notes, plausibility=checks,
                      hardware=hardware,
                      summary=_("earns the optional GPU credit: {summary}", summary=summary))


def check_file(path, root=None, lang="en") -> LabVerdict:
    """Read, strictly parse and check one record file. Never raises on bad input.

    The file is never read through a symbolic link, must be a regular file and at most
    MAX_RECORD_BYTES. With ``root`` (the student's repository), no folder between ``root`` and
    the file may be a link either. ``lang``: as for :func:`check_record`."""
    return _finish(_check_file(Path(path), root), lang)


def _check_file(path: Path, root) -> LabVerdict:
    display = plain_text(str(path), 200)
    unreadable = _("unreadable record: no credit")
    try:
        raw = read_record_bytes(path, root)
    except safe_files.UnsafeFile as exc:
        return LabVerdict(valid=False, earns_credit=False, reasons=[refusal(display, exc)],
                          summary=unreadable, readable=False, plausible=False)
    except (OSError, ValueError) as exc:  # e.g. a path outside root
        return LabVerdict(valid=False, earns_credit=False, readable=False, plausible=False,
                          reasons=[_("cannot read {path}: {error}", path=display,
                                     error=type(exc).__name__)],
                          summary=unreadable)
    try:
        record = parse_strict_json(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = _("not UTF-8 text: invalid byte at position {position}", position=exc.start)
    except StrictJSONError as exc:
        reason = _("not strict JSON: {problem}", problem=exc.message)
    except json.JSONDecodeError as exc:
        # exc.msg is the json module's own (English) wording, e.g. "Expecting value"
        reason = _("not valid JSON: {problem} (line {line}, column {column})",
                   problem=exc.msg, line=exc.lineno, column=exc.colno)
    except (ValueError, RecursionError) as exc:  # e.g. an integer too long to convert
        reason = _("not valid JSON: {problem}", problem=type(exc).__name__)
    else:
        verdict = _check_record(record)
        label = record.get("run_label") if isinstance(record, dict) else None
        prefix = RECORD_GLOB.split("*")[0]
        if path.stem.startswith(prefix) and isinstance(label, str) and path.stem[len(prefix):] != label:
            verdict.notes.append(_("file name {name} does not carry run_label {label}",
                                   name=plain_text(path.name), label=repr(plain_text(label))))
        return verdict
    return LabVerdict(valid=False, earns_credit=False, reasons=[reason], plausible=False,
                      summary=_("INVALID record ({problems}): no credit", problems=_count([reason])))


def hardware_info(record) -> dict:
    """The record's GPU as plain, bounded values for reports: name, device, total_memory_mb,
    capability ('major.minor'); a field the record lacks or garbles is None."""
    hardware = record.get("hardware") if isinstance(record, dict) else None
    if not isinstance(hardware, dict):
        return {}
    memory = hardware.get("total_memory_mb")
    capability = parse_capability(hardware.get("capability"))
    return {
        "name": plain_text(hardware["name"]) if isinstance(hardware.get("name"), str) else None,
        "device": plain_text(hardware["device"], 16) if isinstance(hardware.get("device"), str) else None,
        "total_memory_mb": round(float(memory), 1) if is_number(memory) and 0 <= memory < 1e9 else None,
        "capability": f"{capability[0]}.{capability[1]}" if capability else None,
    }


# --------------------------------------------------------------------------- credit

def _count(problems):
    if len(problems) == 1:
        return _("1 problem")
    return _("{count} problems", count=len(problems))


def _credit_gaps(record: dict) -> tuple[list, list]:
    """Why a valid record earns no GPU credit (empty: it earns it), plus informative notes."""
    gaps, notes = [], []
    evidence = record["evidence_level"]
    if evidence == EVIDENCE_ARCHITECTURE:
        gaps.append(_("evidence_level {value}: an architecture benchmark with random weights (the "
                      "lab's --config-only): valid evidence of time and memory, but it earns no GPU "
                      "credit (needs {expected}: the real checkpoint, --run-mode real_gpu)",
                      value=shown(evidence), expected=repr(EVIDENCE_REAL)))
    elif evidence != EVIDENCE_REAL:
        gaps.append(_("evidence_level {value} is a CPU smoke check: the record is valid but earns no "
                      "GPU credit (needs {expected} from --run-mode real_gpu on CUDA)",
                      value=shown(evidence), expected=repr(EVIDENCE_REAL)))
    if record["decision"] != "accept":
        gaps.append(_("decision is 'reject': the update gate failed ({failures})",
                      failures=joined(gate_failures(record["metrics"]))))
    model = record["model"]
    if model["id"] != MODEL_ID:
        gaps.append(_("model.id is {value}; the lab's credit is for {model}",
                      value=shown(model["id"]), model=MODEL_ID))
    if model["resolution_source"] == CONFIG_ONLY_SOURCE:
        gaps.append(_("model.resolution_source is {value}: random weights built from the config, "
                      "not the checkpoint", value=repr(CONFIG_ONLY_SOURCE)))
    commit = model["resolved_commit"]
    if not (isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{40}", commit)):
        gaps.append(_("model.resolved_commit {value} is not an immutable 40-hex commit",
                      value=shown(commit)))
    gaps += _workload_gaps(record["workload"], notes)
    return gaps, notes


def _workload_gaps(workload: dict, notes: list) -> list:
    gaps = []
    for key, expected in CHAPTER_WORKLOAD.items():
        value = workload[key]
        same = value == expected if key == "prompts" else close(float(value), float(expected))
        if not same:
            gaps.append(_("workload.{key} is {value}; the chapter's workload uses {expected}",
                          key=key, value=shown(value), expected=repr(expected)))
    if workload["seq_len"] not in ACCEPTED_SEQ_LENS:
        gaps.append(_("workload.seq_len is {value}; credit needs 128 (or the chapter's memory "
                      "fallback 64)", value=workload["seq_len"]))
    elif workload["seq_len"] == FALLBACK_SEQ_LEN:
        notes.append(_("seq_len 64: the chapter's low-memory fallback"))
    if workload["repeats"] < MIN_REPEATS:
        gaps.append(_("workload.repeats is {value}; credit needs at least {minimum}",
                      value=workload["repeats"], minimum=MIN_REPEATS))
    if workload["warmup"] < 1:
        gaps.append(_("workload.warmup is 0; credit needs at least 1 warm-up update"))
    for key, expected in UPDATE_DEFAULTS.items():
        if key in workload and not close(float(workload[key]), float(expected)):
            gaps.append(_("workload.{key} is {value}; the chapter uses {expected}",
                          key=key, value=shown(workload[key]), expected=repr(expected)))
    if workload["candidate_dtype"] == "bfloat16":
        notes.append(_("candidate bfloat16 (no GradScaler)"))
    return gaps


def _summary(record: dict):
    base, cand = record["metrics"]["baseline"], record["metrics"]["candidate"]

    def ms(value):
        return _("n/a") if value is None else f"{value:.2f} ms"

    def mb(value):
        return _("n/a") if value is None else f"{value:.0f} MB"

    hardware = record["hardware"]
    return _("{label} on {gpu} ({device}): FP32 median {baseline_ms} vs AMP {candidate_ms}, peak "
             "{baseline_mb} -> {candidate_mb}, AMP backoffs {backoffs}, decision {decision}",
             label=plain_text(record["run_label"], 40), gpu=plain_text(hardware["name"], 60),
             device=hardware["device"], baseline_ms=ms(base["step_median_ms"]),
             candidate_ms=ms(cand["step_median_ms"]), baseline_mb=mb(base["peak_allocated_mb"]),
             candidate_mb=mb(cand["peak_allocated_mb"]), backoffs=cand["scale_backoff_steps"],
             decision=record["decision"])
