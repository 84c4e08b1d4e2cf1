"""How the GitHub Actions runner reads what a step leaves behind, modelled from
its documented behaviour (GitHub's documentation of workflow commands and files;
docs/classroom.md), independently of the grader's own writer.

- :func:`read_output_file`: ``$GITHUB_OUTPUT`` is read after the step, pair by
  pair: ``name=value`` lines (split at the first ``=``) and ``name<<DELIMITER``
  ... ``DELIMITER`` blocks (whichever of ``=`` and ``<<`` comes first decides).
  Empty lines are skipped. At the first malformed pair (no ``=`` nor ``<<``, an
  empty name or delimiter, a block whose delimiter never comes) the runner
  stops with an error; pairs read before it stay set. A later value of a name
  replaces an earlier one. Lines end at LF only (the Linux runner).
- :func:`workflow_commands`: stdout and stderr are read line by line (CR, LF or
  CRLF end a line). A line is a command when, after leading whitespace, it
  starts with ``::name ...::message``, or when it holds the legacy
  ``##[name ...]message`` anywhere. ``::stop-commands::TOKEN`` suspends all
  processing until a line ``::TOKEN::``. Unlike the runner, any name counts
  (the runner ignores names it does not know): stricter for our tests.
"""
import re


class OutputFileError(Exception):
    """Where the runner would stop reading the output file (it fails the step)."""


def read_output_file(text):
    """``(pairs, error)``: the ``(name, value)`` pairs the runner sets, in order,
    and the error it stops at (None when the whole file is read)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # the text after the last newline is not a line
    pairs, index = [], 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line == "":
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            name, value = line.split("=", 1)
            if not name:
                return pairs, f"empty name in {line!r}"
            pairs.append((name, value))
            continue
        if heredoc < 0:
            return pairs, f"invalid format {line!r}"
        name, delimiter = line.split("<<", 1)
        if not name or not delimiter:
            return pairs, f"empty name or delimiter in {line!r}"
        try:
            end = lines.index(delimiter, index)
        except ValueError:
            return pairs, f"matching delimiter not found {delimiter!r}"
        pairs.append((name, "\n".join(lines[index:end])))
        index = end + 1
    return pairs, None


def output_values(text):
    """``(values, error)``: name -> the value the runner keeps (the last one set)."""
    pairs, error = read_output_file(text)
    return dict(pairs), error


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _parse_command(line):
    stripped = line.lstrip()
    if stripped.startswith("::"):
        end = stripped.find("::", 2)
        if end >= 0:
            info = stripped[2:end]
            return info.split(" ", 1)[0], info, stripped[end + 2:]
    start = line.find("##[")
    if start >= 0:
        end = line.find("]", start)
        if end >= 0:
            info = line[start + 3:end]
            return info.split(" ", 1)[0], info, line[end + 1:]
    return None


def workflow_commands(text):
    """Every ``(name, info, message)`` the runner would process in ``text``, in
    order; the stop and resume lines included, the lines in between left out."""
    found, token = [], None
    for line in _LINE_BREAK.split(text):
        command = _parse_command(line)
        if command is None:
            continue
        name = command[0]
        if token is not None:
            if name.lower() == token.lower():
                found.append(command)
                token = None
            continue
        found.append(command)
        if name.lower() == "stop-commands":
            token = command[2]
    return found
