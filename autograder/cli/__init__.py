"""Command line: one module per subcommand, argument parsing only.

Each module has ``add_parser(subparsers)`` and turns parsed arguments into a call
into the room that does the work (judging, batch, exports, ...). May import any
room; nothing imports it but ``autograder.__main__``.
"""
