"""Command line: ``python -m autograder <command> ...``.

Each command lives in its own module, which exposes ``add_parser(subparsers)``
and sets ``func`` on its parser; ``func(args)`` returns the exit code.
Modules are imported lazily so that ``check-lab`` stays fast (no torch).
"""
import argparse
import importlib
import sys

# command name -> module that implements it
COMMANDS = {
    "grade": "autograder.cli_grade",
    "watch": "autograder.cli_watch",
    "classroom-report": "autograder.cli_classroom_report",
    "check-lab": "autograder.lab_check",
    "conformance": "autograder.conformance_cli",
    "export-template": "autograder.template_export",
    "grade-many": "autograder.batch_cli",
    "merge-scores": "autograder.batch_cli",
    "similarity": "autograder.cli_similarity",
    "export-gradescope": "autograder.gradescope_export",
    "export-otter": "autograder.otter_export",
}


def build_parser(selected=None):
    parser = argparse.ArgumentParser(
        prog="python -m autograder",
        description="Grade the Mixed Precision Backward exercises.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    loaded = set()
    for name, module_name in COMMANDS.items():
        if selected is not None and name != selected:
            continue
        if module_name in loaded:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.add_parser(subparsers)
        loaded.add(module_name)
    return parser


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    # Import only the module of the command asked for (fast start-up).
    selected = argv[0] if argv and argv[0] in COMMANDS else None
    parser = build_parser(selected)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
