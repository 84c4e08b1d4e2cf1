"""Text from a submission, made fit for every output once, where it enters the judge.

Exception messages and tracebacks a box sends, values it returns, names its
guard recorded, file names of a repository, a lab record's fields: any of it
can hold what an output cannot write. A lone surrogate (a JSON ``"\\ud800"``
escape, or a file name that is not UTF-8 as ``os.fsdecode`` gives it) makes
every UTF-8 writer raise; NUL ends a C string (the Classroom reporter, a
database behind a grade book); a megabyte message fills a page. :func:`clean`
returns a ``str`` that every output can encode: lone surrogates and NUL shown
escaped (a byte of an undecodable file name as ``\\xff``), cut to a limit.

Showing the rest harmlessly where it goes (workflow commands, Markdown, HTML,
control and bidi characters, formulas) is :mod:`autograder.reports.safe_text`'s
job, per output.
"""
import math
import unicodedata

ELLIPSIS = "…"
DEFAULT_LIMIT = 4000
# Shown escaped on one line: controls (C0, DEL, C1), format characters (bidi
# overrides, zero-width characters), line/paragraph separators, lone surrogates.
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def as_text(value):
    """Any value as a string (None -> empty): reports must not crash on odd fields."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:  # a hostile __str__ is not ours to run to completion
        return f"<{type(value).__name__}>"


def shorten(text, limit):
    if limit and len(text) > limit:
        return text[:limit] + ELLIPSIS
    return text


def writable(text):
    """``text`` with lone surrogates and NUL shown escaped (a str as it is when it has none)."""
    if "\x00" not in text:
        if text.isascii():
            return text
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            pass
    try:  # only os.fsdecode's stand-ins for undecodable bytes: the bytes, shown as \xff
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # other lone surrogates (a JSON escape): shown as \ud800
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("\x00", "\\x00")


def clean(value, limit=DEFAULT_LIMIT):
    """Text from a submission as the judge keeps it: a str that every output can
    encode, at most ``limit`` characters (None: no limit) and an ellipsis."""
    return writable(shorten(as_text(value), limit))


def _escaped(char):
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def one_line(value, limit=DEFAULT_LIMIT):
    """:func:`clean`, on one line: every control, format and separator character
    (newlines, ESC, bidi overrides, zero-width characters) shown escaped."""
    text = shorten(as_text(value), limit)
    if text.isprintable():  # no Other or Separator character but the space: a superset of ours
        return text
    return "".join(_escaped(char) if unicodedata.category(char) in _ESCAPED_CATEGORIES else char
                   for char in writable(text))


def clean_list(values, limit=DEFAULT_LIMIT, count=100, lines=False):
    """:func:`clean` (``lines``: :func:`one_line`) of each of ``values`` (a list or
    one value), at most ``count`` of them."""
    if values is None:
        return []
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    kept = [(one_line if lines else clean)(value, limit) for value in values[:count]]
    if len(values) > count:
        kept.append(f"{ELLIPSIS} ({len(values) - count} more)")
    return kept


def clean_tree(value, limit=DEFAULT_LIMIT, depth=0):
    """Every string of plain data (dicts, lists, keys included) through :func:`clean`;
    finite numbers, booleans and None as they are, anything else as its text."""
    if depth > 32:
        return ELLIPSIS
    if isinstance(value, str):
        return clean(value, limit)
    if value is None or isinstance(value, bool) or (isinstance(value, int) and abs(value) < 2**63) \
            or (isinstance(value, float) and math.isfinite(value)):
        return value
    if isinstance(value, dict):
        return {clean(key, limit): clean_tree(item, limit, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_tree(item, limit, depth + 1) for item in value]
    return clean(value, limit)
