"""Command line: one module per subcommand, argument parsing and exit codes only.

Each module has ``add_parser(subparsers)`` and turns parsed arguments into a call
into the room that does the work (judge_process, batch, reports, exports, ...)
and its outcome into an exit code. May import any room; a command's module
imports no other but ``common`` (the options several share); nothing imports
the command line but ``autograder.__main__`` (tests/repository/test_architecture.py).
"""
