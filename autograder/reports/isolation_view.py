"""What confined the student's code, as the reports show it.

``isolation`` comes from the sandbox (``GradeReport.isolation``, or
``extra_data.isolation`` in a results.json, possibly from an older grader): a
dict with ``confined`` (bool), ``problems`` (list) and short facts such as
``fs``, ``network``, ``signals``, ``process_namespace``, ``uid``, ``scratch``.
Nothing here trusts its shape: unknown keys are shown, missing ones skipped,
odd values turned into text. Callers escape the text for their sink.
"""
from autograder.i18n import _

KNOWN_KEYS = ("fs", "network", "signals", "process_namespace", "uid", "scratch")
# What each known fact is about, for a reader of another language than the
# sandbox's (its values are the sandbox's own English, kept for staff).
LABELS = {"fs": _("file system"), "network": _("network"), "signals": _("signals"),
          "process_namespace": _("process namespace"), "uid": _("user id"), "scratch": _("scratch folder")}
_NOT_FACTS = {"confined", "problems"}
_VALUE_LIMIT = 160


def as_dict(isolation):
    return isolation if isinstance(isolation, dict) else {}


def unconfined(isolation):
    """True only when the sandbox said so: student code ran without OS confinement."""
    return as_dict(isolation).get("confined") is False


def problems(isolation):
    found = as_dict(isolation).get("problems")
    if found is None:
        return []
    if isinstance(found, (list, tuple)):
        return [_value_text(item, limit=300) for item in found]
    return [_value_text(found, limit=300)]


def _value_text(value, limit=_VALUE_LIMIT):
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif value is None:
        text = "?"
    elif isinstance(value, (list, tuple)):
        text = ", ".join(_value_text(item, limit) for item in value)
    elif isinstance(value, dict):
        text = ", ".join(f"{_value_text(k, limit)}={_value_text(v, limit)}" for k, v in value.items())
    else:
        try:
            text = str(value)
        except Exception:
            text = "?"
    return text if len(text) <= limit else text[:limit] + "…"


def facts(isolation):
    """``[(key, value text)]``: the known keys in a fixed order, then any others sorted."""
    data = as_dict(isolation)
    keys = [key for key in KNOWN_KEYS if key in data]
    others = sorted((key for key in data if key not in KNOWN_KEYS and key not in _NOT_FACTS),
                    key=lambda key: _value_text(key))
    return [(_value_text(key), _value_text(data[key])) for key in keys + others]


def aspects(isolation, lang):
    """The facts' subjects in ``lang`` (known keys translated, others as they are)."""
    return [LABELS[key].render(lang) if key in LABELS else key for key, _value in facts(isolation)]


def one_line(isolation):
    """``isolation: fs=..., network=...`` or None when there is nothing to say."""
    items = facts(isolation)
    if not items:
        return None
    return "isolation: " + ", ".join(f"{key}={value}" for key, value in items)


def status_word(isolation):
    """A short cell for a class table: ``confined``, ``NOT CONFINED`` or ``–``."""
    data = as_dict(isolation)
    if not data:
        return "–"
    if unconfined(data):
        return "NOT CONFINED"
    return "confined" if data.get("confined") is True else "unknown"


UNCONFINED_WARNING = _("Student code ran WITHOUT OS confinement: it could read and change what the "
                       "grader's user can. Check this grade by hand.")
# What the same fact means for a student grading their own work on their own machine
# (macOS, Windows): the staff warning above is for a grade of someone else's code.
UNCONFINED_FOR_STUDENTS = _("Your code ran without the sandbox that confines it when GitHub grades it: this "
                            "computer's system offers the grader none. That is no risk to you (it is your own code "
                            "on your own computer), and your score is computed exactly as on GitHub; only some "
                            "limits are looser here (memory, files, processes).")
