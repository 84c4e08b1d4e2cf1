"""Line breaking for mixed Chinese and English text, measured in terminal cells.

rich measures CJK characters right (two cells each) but breaks lines only at
spaces, so "先从 TODO n 入手" is cut at the space before 入手 and a long
Chinese phrase with no space in it is cut wherever the cells run out. Here a
line may break at a space or between two CJK characters, never inside an
English word, a code identifier or "TODO n", and never before closing
punctuation (，。：）…) or after opening punctuation (（「“). A unit longer than
the whole width is folded as a last resort. Widths come from rich's
``cell_len``; rich's own renderables get text already broken here.
"""
import os
import re

from rich.cells import cell_len

_CJK = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_TOKEN = re.compile(rf"TODO\s+\d+|\s+|[{_CJK}“”‘’…]|[^\s{_CJK}“”‘’…]+")
_NO_BREAK_BEFORE = set("，。、；：！？）」』》〉】’”…,.;:!?)]}%")
_NO_BREAK_AFTER = set("（「『《〈【‘“([{")


def _units(line):
    """The line as unbreakable units, each with the whitespace before it."""
    units, space = [], ""
    for token in _TOKEN.findall(line):
        if token.isspace():
            space += token
            continue
        glued = units and not space and (token[0] in _NO_BREAK_BEFORE or units[-1][1][-1] in _NO_BREAK_AFTER)
        if glued:
            units[-1] = (units[-1][0], units[-1][1] + token)
        else:
            units.append((space, token))
        space = ""
    return units


def _fold(unit, width):
    """A unit wider than ``width``, cut at character boundaries."""
    pieces, current = [], ""
    for char in unit:
        if current and cell_len(current + char) > width:
            pieces.append(current)
            current = ""
        current += char
    return pieces + [current] if current else pieces


def wrap(text, width, hang=""):
    """``text`` as lines of at most ``width`` cells (its own newlines kept); a
    line's continuation lines keep its indentation, plus ``hang``."""
    width = max(int(width), 1)
    lines = []
    for source in str(text).split("\n"):
        if cell_len(source) <= width:  # as it is: keeps a code excerpt and its caret aligned
            lines.append(source.rstrip())
            continue
        first = source[:len(source) - len(source.lstrip(" "))]
        if cell_len(first) >= width // 2:
            first = ""
        indent = first + hang if cell_len(first + hang) < width // 2 else first
        current, used = first, cell_len(first)
        started = False
        for space, unit in _units(source):
            gap = space.replace("\t", " ") if started else ""
            size = cell_len(unit)
            if started and used + len(gap) + size > width:
                lines.append(current.rstrip())
                current, used, gap, started = indent, cell_len(indent), "", False
            while used + size > width:  # longer than a whole line: cut it, each piece as wide as fits
                piece = _fold(unit, width - used)[0]
                lines.append(current + piece)
                unit, size = unit[len(piece):], cell_len(unit[len(piece):])
                current, used = indent, cell_len(indent)
            current += gap + unit
            used += len(gap) + size
            started = True
        lines.append(current.rstrip() if started else "")
    return lines


def wrap_hanging(text, width, indent):
    """Each line of ``text`` wrapped to ``width``, every line behind ``indent``."""
    inner = max(width - cell_len(indent), 10)
    return [indent + line if line else line for line in wrap(text, inner)]


def wrapping(stream):
    """Whether text for ``stream`` is wrapped: on a terminal, or where its width is given
    (``COLUMNS``); a pipe or a log gets lines as they are, for whoever reads or searches it."""
    try:
        return stream.isatty() or bool(os.environ.get("COLUMNS"))
    except (AttributeError, ValueError):
        return False
