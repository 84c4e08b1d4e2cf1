"""A run's configuration from the command line: the workload (the chapter's, with cpu_smoke's
smaller defaults and the user's --seq-len / --repeats), the run label, the model revision, and
the model options that cannot combine, all checked before anything is loaded or written."""
from __future__ import annotations

import argparse
import copy
import re

from amp_lab_common import LabError
from amp_lab_layout import CHAPTER_WORKLOAD, UPDATE_SETTINGS
from amp_lab_models import DEFAULT_REVISION, config_only_values, read_local_config
from amp_lab_text import text

SMOKE_DEFAULTS = {"seq_len": 32, "repeats": 3}


def build_workload(args: argparse.Namespace, mode: str) -> dict:
    workload = copy.deepcopy(CHAPTER_WORKLOAD)
    workload["candidate_dtype"] = args.candidate_dtype
    if mode == "cpu_smoke":
        workload.update(SMOKE_DEFAULTS)
    if args.seq_len is not None:
        workload["seq_len"] = args.seq_len
    if args.repeats is not None:
        workload["repeats"] = args.repeats
    if args.seq_len is not None and args.seq_len < 2:
        raise LabError(text("seq_len_too_small"))
    if args.repeats is not None and args.repeats < 1:
        raise LabError(text("repeats_too_small"))
    workload.update(UPDATE_SETTINGS)
    return workload


def resolve_run_label(args: argparse.Namespace, mode: str) -> str:
    # A smoke run must never overwrite a real record called "default".
    label = args.run_label
    if label is None:
        label = "cpu_smoke" if mode == "cpu_smoke" else "default"
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", label):
        raise LabError(text("unsafe_label", label=repr(label)))
    return label


def requested_revision(args) -> str:
    return args.model_revision or DEFAULT_REVISION


def check_model_options(args) -> None:
    """A local folder has exactly one version: --model-revision belongs to the hub id;
    --config-only takes neither."""
    if args.config_only is not None:
        for option, given in (("--model-path", args.model_path is not None),
                              ("--model-revision", args.model_revision is not None),
                              ("--local-files-only", args.local_files_only)):
            if given:
                raise LabError(text("config_only_conflict", option=option))
        config_only_values(args.config_only)  # fail early, before anything is loaded or written
        return
    if args.model_path is None:
        return
    if args.model_revision is not None:
        raise LabError(text("revision_with_path"))
    read_local_config(args.model_path)  # fail early, before anything is loaded or written
