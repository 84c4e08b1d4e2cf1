"""The stored records of the GPU lab (tests/data/lab_records/, made by its make_fixtures.py) and
`check-lab` run in the test's own process, so that its output is read through capsys."""
import argparse
import json

from support.helpers import ROOT

RECORDS = ROOT / "tests" / "data" / "lab_records"


def chapter_record() -> dict:
    """A fresh copy of the record the chapter publishes (its default run on a 14 GB GPU)."""
    return json.loads((RECORDS / "chapter_default14.json").read_text(encoding="utf-8"))


def check_lab(paths, capsys, lang=None):
    """(exit code, printed text) of ``check-lab [--lang LANG] PATHS`` run in this process."""
    from autograder.assignment.lab import cli as lab_cli

    parser = argparse.ArgumentParser()
    lab_cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["check-lab", *(["--lang", lang] if lang else []), *map(str, paths)])
    return args.func(args), capsys.readouterr().out
