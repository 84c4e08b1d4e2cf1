"""The ``check-lab`` command: print each record's verdict and reasons, exit 0 only when every
record earns the optional GPU credit (1: invalid, impossible or no credit; 2: a file is missing,
unreadable or refused: a link, not a regular file, too large).

Everything it prints is an :mod:`autograder.i18n` message, in the language of ``--lang``
(default: ``$AUTOGRADER_LANG``, then ``[tool.autograder] lang`` in the repository's
``pyproject.toml``, then English)."""
from __future__ import annotations

from pathlib import Path

from autograder.authoring import REPO_ROOT, LANGUAGES, _, help_language, resolve_language, text as t
from autograder.assignment.lab import check as lab_check
from autograder.assignment.lab.layout import plain_text

SELF_REPORTED = _("lab records are self-reported: check-lab verifies that a record is complete, "
                  "consistent and physically plausible, not that the run took place")


def add_parser(subparsers):
    lang = help_language(str(REPO_ROOT))  # --lang of this command line, else the configured one
    parser = subparsers.add_parser(
        "check-lab",
        help=t("validate a GPU lab record and say whether it earns the optional credit", lang),
        description=t("Validate train-amp-backward_<label>.json records written by "
                      "gpu_lab/amp_backward_lab.py: complete, consistent, physically plausible. "
                      "Exit 0 only when every record earns the optional GPU credit; 1 when a "
                      "record is invalid, impossible or earns none; 2 when a file is missing, "
                      "unreadable or refused (a symbolic link, not a regular file, too large). "
                      "Records are self-reported: check-lab cannot prove that a run took place.",
                      lang),
    )
    parser.add_argument("records", nargs="+", metavar="RECORD", type=Path,
                        help=t("a lab record (train-amp-backward_<label>.json)", lang))
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help=t("language of the verdicts (default: $AUTOGRADER_LANG, or "
                               "[tool.autograder] lang in pyproject.toml, or English)", lang))
    parser.set_defaults(func=run)
    return parser


def run(args) -> int:
    lang = resolve_language(getattr(args, "lang", None), root=str(REPO_ROOT))
    exit_code = 0
    for path in args.records:
        verdict = lab_check.check_file(path, lang=lang)
        print(f"{plain_text(str(path), 200)}: {verdict.summary}")
        for reason in verdict.reasons:
            print(f"  - {reason}")
        for check in verdict.plausibility:
            print("  " + t("plausibility: {check}", lang, check=check))
        for note in verdict.notes:
            print("  " + t("note: {note}", lang, note=note))
        if not verdict.readable:
            exit_code = 2
        elif not verdict.earns_credit:
            exit_code = max(exit_code, 1)
    print(t("note: {note}", lang, note=SELF_REPORTED))
    return exit_code
