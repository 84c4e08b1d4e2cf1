"""Colour where the terminal has it, none where it has not.

The report is built as lines of rich ``Text`` whose plain text is the report:
every renderer and test reads the plain text, and :func:`write` adds colour
only where rich finds a terminal that shows it (a tty that is not ``dumb``;
``NO_COLOR`` set: none; ``FORCE_COLOR`` set: colour even in a pipe, as
https://force-color.org asks). A CI log or a pipe gets the plain text.

A style marks only our own words (PASS/FAIL, a score, a heading): student text
is never styled, and the colour codes are added after the text was checked safe
(:func:`autograder.reports.safe_text.print_report`).
"""
import io
import sys

from rich.console import Console
from rich.text import Text

# what each mark means -> how a colour terminal shows it
STYLES = {"fail": "bold red", "pass": "green", "full": "green", "lost": "bold red", "partial": "yellow",
          "heading": "bold", "module": "bold", "warning": "bold yellow"}


def line(text="", style=None, start=0, end=None):
    """One line: ``text`` with ``style`` (a key of STYLES) on ``text[start:end]``."""
    shown = Text(text, end="")
    if style and text:
        shown.stylize(STYLES[style], start, len(text) if end is None else end)
    return shown


def lines(texts, style=None):
    return [line(text, style) for text in texts]


def plain(shown):
    return "\n".join(text.plain for text in shown)


def colour_system(stream=None):
    """rich's colour system for ``stream`` ("standard", "256", "truecolor"), or None
    where it shows none (not a terminal, ``TERM=dumb``, ``NO_COLOR``)."""
    console = Console(file=stream or sys.stdout)
    return None if console.no_color else console.color_system


def ansi(shown, system):
    """``shown`` with the colour codes of ``system``, one line each."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system=system, no_color=False, width=10_000,
                      highlight=False, markup=False, emoji=False, soft_wrap=True, _environ={})
    for text in shown:
        console.print(text)
    return buffer.getvalue().rstrip("\n")


def write(shown, stream=None, environ=None):
    """Print ``shown`` (lines of Text) on ``stream``, in colour where it has colour."""
    from autograder.reports.safe_text import print_report

    stream = stream or sys.stdout
    system = colour_system(stream)
    print_report(plain(shown), stream, environ, coloured=ansi(shown, system) if system else None)
