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

ELLIPSIS = "…"
DEFAULT_LIMIT = 4000


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


def clean_list(values, limit=DEFAULT_LIMIT, count=100):
    """:func:`clean` of each of ``values`` (a list or one value), at most ``count`` of them."""
    if values is None:
        return []
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    kept = [clean(value, limit) for value in values[:count]]
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
