"""Command line: ``python -m autograder <command> ...``.

Each command lives in its own module, which exposes ``add_parser(subparsers)``
and sets ``func`` on its parser; ``func(args)`` returns the exit code.
Modules are imported lazily so that ``check-lab`` stays fast (no torch).
"""
import importlib
import importlib.util
import sys
import warnings

# command name -> module that implements it
COMMANDS = {
    "grade": "autograder.cli.grade",
    "watch": "autograder.cli.watch",
    "classroom-report": "autograder.cli.classroom_report",
    "export-template": "autograder.cli.export_template",
    "grade-many": "autograder.cli.grade_many",
    "merge-scores": "autograder.cli.grade_many",
    "similarity": "autograder.cli.similarity",
    "export-gradescope": "autograder.cli.export_gradescope",
    "export-otter": "autograder.cli.export_otter",
}


def commands():
    """The engine's subcommands and the assignment's own (its description's COMMANDS)."""
    from autograder import active_assignment

    assignment = active_assignment.current()
    own = {name: importlib.util.resolve_name(module, assignment.package)
           for name, module in assignment.commands.items()}
    return {**COMMANDS, **own}


def build_parser(selected=None):
    # argparse's parser, its messages wrapped at the terminal's width and in the run's
    # language (a module of the commands' room, loaded by name as the commands are)
    argparse_text = importlib.import_module("autograder.cli.argparse_text")
    parser = argparse_text.Parser(prog="python -m autograder", description=argparse_text.description())
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    loaded = set()
    for name, module_name in commands().items():
        if selected is not None and name != selected:
            continue
        if module_name in loaded:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # a staff command, left out of a student's repository
        module.add_parser(subparsers)
        loaded.add(module_name)
    return parser


def main(argv=None):
    # torch's import asks for numpy, which the grader never needs (not in requirements.txt):
    # without it torch warns on every command that imports it (conformance, check-lab...)
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)
    argv = list(sys.argv[1:] if argv is None else argv)
    # A Python or machine torch has no build for, or a venv without the requirements: say
    # which Python to install or what to activate, before an import fails (stdlib only).
    from autograder import python_range

    if python_range.check_grader(argv):
        return 1
    from autograder import active_assignment, locations

    try:
        active_assignment.current()
    except active_assignment.AssignmentError as exc:  # a staff setting naming no chapter: one line, no traceback
        print(f"python -m autograder: {active_assignment.ENV_VAR}: {exc}", file=sys.stderr)
        return 2

    argparse_text = importlib.import_module("autograder.cli.argparse_text")
    lang = argparse_text.language_asked(argv, str(locations.REPO_ROOT))
    # Import only the module of the command asked for (fast start-up).
    selected = argv[0] if argv and argv[0] in commands() else None
    if selected is not None and importlib.util.find_spec(commands()[selected]) is None:
        # A student's repository holds none of the staff's commands (autograder/staff_side.py).
        print(argparse_text.left_out(selected, lang), file=sys.stderr)
        return 2
    with argparse_text.translated(lang):
        parser = build_parser(selected)
        args = parser.parse_args(argv)
    return args.func(args)


def _end(code):
    """End the process once its work is written: exit handlers run, streams are
    flushed, but the interpreter does not tear down every module it loaded
    (after a class report, matplotlib's and numpy's: a tenth of a second)."""
    import atexit
    import os

    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)  # CPython's; not a public API
    if run_exit_handlers is None:
        sys.exit(code)  # the interpreter's own ending, teardown included
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to say there
            pass
    os._exit(code & 0xFF)


if __name__ == "__main__":
    _end(main())
