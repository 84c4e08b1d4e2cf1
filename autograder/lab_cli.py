"""The ``check-lab`` command: print each record's verdict and reasons, exit 0 only when every
record earns the optional GPU credit (1: invalid, impossible or no credit; 2: a file is missing,
unreadable or refused: a link, not a regular file, too large)."""
from __future__ import annotations

from pathlib import Path

from autograder import lab_check
from autograder.lab_layout import plain_text

SELF_REPORTED = ("lab records are self-reported: check-lab verifies that a record is complete, "
                 "consistent and physically plausible, not that the run took place")


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "check-lab",
        help="validate a GPU lab record and say whether it earns the optional credit",
        description=("Validate train-amp-backward_<label>.json records written by "
                     "gpu_lab/amp_backward_lab.py: complete, consistent, physically plausible. "
                     "Exit 0 only when every record earns the optional GPU credit; 1 when a "
                     "record is invalid, impossible or earns none; 2 when a file is missing, "
                     "unreadable or refused (a symbolic link, not a regular file, too large). "
                     "Records are self-reported: check-lab cannot prove that a run took place."),
    )
    parser.add_argument("records", nargs="+", metavar="RECORD", type=Path)
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    exit_code = 0
    for path in args.records:
        verdict = lab_check.check_file(path)
        print(f"{plain_text(str(path), 200)}: {verdict.summary}")
        for reason in verdict.reasons:
            print(f"  - {reason}")
        for check in verdict.plausibility:
            print(f"  plausibility: {check}")
        for note in verdict.notes:
            print(f"  note: {note}")
        if not verdict.readable:
            exit_code = 2
        elif not verdict.earns_credit:
            exit_code = max(exit_code, 1)
    print(f"note: {SELF_REPORTED}")
    return exit_code
