"""Student-controlled text made harmless for each place it is shown.

Exception messages, printed feedback, file names and test ids can come from a
submission. Every report passes such text through one function here, chosen by
where the text goes:

- :func:`terminal_line` / :func:`terminal_lines`: stdout and stderr. In GitHub
  Actions the runner reads a line as a workflow command when, after leading
  whitespace, it starts with ``::`` (``::notice``, ``::add-mask::``,
  ``::stop-commands::``...), and anywhere it holds the legacy ``##[``. Control
  characters are shown escaped (``\\n``, ``\\x1b``), never obeyed: the runner
  splits lines on CR too, and terminals obey ESC sequences.
  :func:`fence_for_actions` wraps a whole printed report in
  ``::stop-commands::<token>`` ... ``::<token>::`` as a second wall.
- :func:`markdown_text` / :func:`markdown_code`: the job summary and
  ``report.md``: no heading, link, image, table row, code fence or raw HTML
  can come from the text.
- :func:`html_text`: HTML.
- :func:`csv_cell`: spreadsheet cells (no formula).

That every output can *encode* the text (no lone surrogate, no NUL, a bounded
length) is settled once, where it enters the judge
(:mod:`autograder.intake.submitted_text`); :func:`visible` shows the ones that
slipped past escaped all the same.
"""
import html
import os
import re
import secrets
import shutil
import sys

# as_text and shorten: the reports import them from here
from autograder.intake.submitted_text import ELLIPSIS, as_text, one_line, shorten  # noqa: F401

DEFAULT_LIMIT = 2000


def visible(text, limit=DEFAULT_LIMIT):
    """One line: every control, format and separator character shown escaped
    (:func:`autograder.intake.submitted_text.one_line`)."""
    return one_line(text, limit)


# -- terminal (stdout, stderr, the Actions log) -----------------------------------------------
def _neutralise_commands(line):
    """No workflow command can start in ``line`` (already free of controls)."""
    stripped = line.lstrip()  # Python's whitespace is a superset of the runner's TrimStart
    if stripped.startswith("::"):
        indent = line[:len(line) - len(stripped)]
        line = indent + "\\" + stripped
    while "##[" in line:  # loop: removing one may not leave another behind
        line = line.replace("##[", "##\\[")
    return line


def terminal_line(text, limit=DEFAULT_LIMIT):
    """One line of student text, safe to print: newlines included are shown as ``\\n``."""
    return _neutralise_commands(visible(text, limit))


def terminal_lines(text, max_lines=None, limit=DEFAULT_LIMIT):
    """Multi-line student text, line structure kept, every line neutralised."""
    lines = as_text(text).replace("\r\n", "\n").split("\n")
    if max_lines is not None and len(lines) > max_lines:
        lines = lines[:max_lines] + [f"{ELLIPSIS} ({len(lines) - max_lines} more lines)"]
    return [terminal_line(line, limit) for line in lines]


def terminal_block(text):
    """A whole printed report, line by line: the last wall before stdout."""
    return "\n".join(terminal_line(line, limit=None) for line in as_text(text).split("\n"))


def stop_token(text=""):
    """A fresh, unguessable token that does not occur in ``text``."""
    while True:
        token = secrets.token_hex(16)
        if token not in text:
            return token


def fence_for_actions(text, token=None):
    """``text`` between ``::stop-commands::<token>`` and ``::<token>::``: the
    runner reads no workflow command in between, whatever slipped through."""
    token = token or stop_token(text)
    if token in text:
        raise ValueError("the stop token must not occur in the fenced text")
    return f"::stop-commands::{token}\n{text}\n::{token}::"


# -- Markdown (job summary, report.md) ---------------------------------------------------------
# Backslash-escaped everywhere: links and images ([ ]), raw HTML and autolinks
# (< >), entities (&), code spans (`), table cells (|), emphasis and
# strikethrough (* ~), math ($), and the backslash itself so that a student
# backslash cannot cancel one of ours.
_MARKDOWN_SPECIAL = set("\\`*[]<>&|~$")
# Characters that open a block when they start a line (headings, lists, quotes,
# thematic breaks, setext underlines, fences); escaped there.
_BLOCK_START = set("#>-+*=_~`")
_ORDERED_LIST = re.compile(r"^(\d{1,9})([.)])")
# GitHub turns bare URLs, www. names, e-mail addresses and @mentions into
# links: defang them.
_SCHEME = re.compile(r"://")
_WWW = re.compile(r"(?i)\bwww\.")
_AT = re.compile(r"@(?=[A-Za-z0-9_-])")


def _defang_links(text):
    text = _SCHEME.sub("[:]//", text)
    text = _WWW.sub(lambda match: match.group(0)[:3] + "[.]", text)
    return _AT.sub("[@]", text)


def markdown_text(text, limit=DEFAULT_LIMIT):
    """Student text as literal Markdown inline text, safe in a table cell or
    after a line prefix: one line, newlines shown as ``\\n``, ``|`` escaped."""
    text = _defang_links(visible(as_text(text).strip(), limit))
    escaped = "".join("\\" + char if char in _MARKDOWN_SPECIAL else char for char in text)
    if escaped[:1] in _BLOCK_START:
        escaped = "\\" + escaped
    else:
        escaped = _ORDERED_LIST.sub(r"\1\\\2", escaped)
    return escaped


_PLAIN_CODE = re.compile(r"[A-Za-z0-9_.:/@+ -]+")


def markdown_code(text, limit=200):
    """A short identifier (module, seed) as inline code; anything unusual falls
    back to :func:`markdown_text` rather than fight code-span edge cases."""
    text = shorten(as_text(text).strip(), limit)
    if text and _PLAIN_CODE.fullmatch(text) and "://" not in text:
        return f"`{text}`"
    return markdown_text(text, limit) or "–"


def markdown_record(text, limit=DEFAULT_LIMIT):
    """A machine's record (not prose) verbatim as one inline code span: one line, and
    a backtick in it shown as ``'`` so that nothing ends the span early."""
    text = visible(as_text(text).strip(), limit).replace("`", "'")
    return f"`{text}`" if text else "–"


# -- HTML and CSV --------------------------------------------------------------------------------
def html_text(text, limit=DEFAULT_LIMIT):
    return html.escape(visible(text, limit), quote=True)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text):
    """Text for a spreadsheet cell: one line, controls and bidi characters shown
    escaped (as everywhere), a leading ``'`` stops a formula (``=HYPERLINK(...)``)."""
    text = visible(text, limit=None)
    return "'" + text if text.startswith(_FORMULA_START) else text


def print_report(text, stream=None, environ=None, coloured=None):
    """Print a rendered report; inside GitHub Actions, fenced by a fresh
    ``::stop-commands::`` token so that no line of it can act as a workflow command.
    ``coloured``: the same report with our own colour codes added, printed instead
    where ``text`` is safe as it is (its pieces were escaped as they were built)."""
    stream = stream or sys.stdout
    safe = terminal_block(text)
    text = coloured if coloured is not None and safe == text else safe
    if (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true":
        text = fence_for_actions(text)
    stream.write(text + "\n")  # one write: the fence is never left open between two
    stream.flush()


def warn(message):
    """``message`` on standard error, escaped and wrapped at the terminal's width (as it is
    where rich, which measures Chinese text, is not installed yet)."""
    text = terminal_block(message)
    try:
        from autograder.reports import wrap
    except ImportError:  # a laptop without the requirements: the message says what to install
        print(text, file=sys.stderr)
        return
    if not wrap.wrapping(sys.stderr):
        print(text, file=sys.stderr)
        return
    width = max(shutil.get_terminal_size((80, 24)).columns, 40)
    print("\n".join(piece for line in text.split("\n") for piece in (wrap.wrap(line, width) or [""])),
          file=sys.stderr)
