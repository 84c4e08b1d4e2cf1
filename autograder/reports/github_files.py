"""Writing the runner's file commands: ``$GITHUB_OUTPUT`` and ``$GITHUB_STEP_SUMMARY``.

After a step, the runner reads ``$GITHUB_OUTPUT`` pair by pair: ``name=value``
lines and ``name<<DELIMITER`` ... ``DELIMITER`` blocks. At the first malformed
pair (an empty name, a line with neither ``=`` nor ``<<``, a block whose
delimiter never comes) it stops with an error: pairs before it stay set, pairs
after it are lost, and a later value of a name replaces an earlier one.

So that our line never depends on what is already in the file,
:func:`append_output` keeps only the prefix the runner would read cleanly
(dropping a planted unterminated block, which would otherwise swallow our
line), starts on a fresh line and writes one ``name=value`` line (never the
heredoc form; the value may hold no newline). A well-formed pair planted
*before* ours stays set, unless it has our name, which ours replaces; nothing
written *after* ours can be undone here. The defence for both is that student
code never learns these paths (docs/classroom.md).
"""
import os
import re
import sys

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def readable_prefix(data):
    """Length of the longest prefix of ``data`` (bytes) that the Linux runner
    reads without error, ending at a pair boundary."""
    position = good = 0
    size = len(data)

    def next_line(start):
        end = data.find(b"\n", start)
        return (data[start:], size) if end < 0 else (data[start:end], end + 1)

    while position < size:
        line, after = next_line(position)
        if not line:
            position = good = after
            continue
        equals, heredoc = line.find(b"="), line.find(b"<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            if equals == 0:
                break
            position = good = after
            continue
        if heredoc < 0:
            break
        name, delimiter = line[:heredoc], line[heredoc + 2:]
        if not name or not delimiter:
            break
        cursor = after
        while True:
            if cursor >= size:
                return good  # the delimiter never comes
            value_line, value_after = next_line(cursor)
            if value_line == delimiter:
                position = good = value_after
                break
            if value_after >= size and not data.endswith(b"\n"):
                return good  # a value line without its newline
            cursor = value_after
    return good


def append_output(path, name, value):
    """Append ``name=value`` so that the runner reads it, whatever came before."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not an output name: {name!r}")
    if "\n" in value or "\r" in value:
        raise ValueError("an output value written as name=value must be one line")
    with open(path, "a+b") as handle:
        handle.seek(0)
        existing = handle.read()
        keep = readable_prefix(existing)
        if keep < len(existing):
            handle.truncate(keep)
            print(f"{name}: dropped {len(existing) - keep} bytes of the output file that the runner "
                  "could not read (they would have hidden this result)", file=sys.stderr)
        separator = b"\n" if keep and not existing[:keep].endswith(b"\n") else b""
        handle.write(separator + f"{name}={value}\n".encode("utf-8"))
    return path


def append_summary(path, markdown):
    """Append Markdown to the step summary, as a block of its own."""
    with open(path, "a+b") as handle:
        handle.seek(0, os.SEEK_END)
        separator = b"\n" if handle.tell() else b""
        handle.write(separator + markdown.encode("utf-8"))
    return path
