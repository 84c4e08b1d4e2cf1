"""What confined the student's code, as the reports show it.

``isolation`` comes from the sandbox (``GradeReport.isolation``, or
``extra_data.isolation`` in a results.json, possibly from an older grader): a
dict with ``confined`` (bool), ``problems`` (list) and short facts such as
``fs``, ``network``, ``signals``, ``process_namespace``, ``uid``, ``scratch``.
Nothing here trusts its shape: unknown keys are shown, missing ones skipped,
odd values turned into text. Callers escape the text for their sink.
"""
from autograder.i18n import _, render, text as t
from autograder.sandbox import isolation as isolation_report

KNOWN_KEYS = ("fs", "network", "signals", "process_namespace", "uid", "scratch")
# What each known fact is about, for a reader of another language than the
# sandbox's (its values are the sandbox's own English, kept for staff).
LABELS = {"fs": _("file system"), "network": _("network"), "signals": _("signals"),
          "process_namespace": _("process namespace"), "uid": _("user id"), "scratch": _("scratch folder"),
          "clean_process": _("a clean process"), "root": _("root file system"), "syscalls": _("system calls"),
          "memory": _("memory"), "cpu": _("CPU time"), "platform": _("operating system"),
          "sealed": _("code seal"), "job": _("process group")}
# The sandbox's layer names (isolation_report.LAYERS), for a reader of another language.
LAYER_LABELS = {"minimal root": _("minimal root"), "syscall filter": _("syscall filter"),
                "network namespace": _("network namespace"), "process namespace": _("process namespace")}
_NOT_FACTS = {"confined", "problems", "missing_layers"}
_VALUE_LIMIT = 160


def as_dict(isolation):
    return isolation if isinstance(isolation, dict) else {}


def unconfined(isolation):
    """True only when the sandbox said so: student code ran without OS confinement."""
    return as_dict(isolation).get("confined") is False


def missing_layers(isolation, lang="en"):
    """The layers a confined run lacked (``[]`` when none, or when it was not confined:
    the warning and the problems say more then), in ``lang``."""
    data = as_dict(isolation)
    if data.get("confined") is not True:
        return []
    found = data.get("missing_layers")
    if found is None:  # a results.json from before the list existed
        found = isolation_report.missing_layers(data)
    if not isinstance(found, (list, tuple)):
        found = [found]
    return [render(LAYER_LABELS[item], lang) if isinstance(item, str) and item in LAYER_LABELS
            else _value_text(item) for item in found]


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
    """The facts' subjects in ``lang``: (subject, True) for a known key, translated,
    (key, False) for any other, as it is."""
    return [(LABELS[key].render(lang), True) if key in LABELS else (key, False) for key, _value in facts(isolation)]


def one_line(isolation):
    """``isolation: fs=..., network=...`` (first what a confined run lacked) or None when
    there is nothing to say."""
    items = facts(isolation)
    missing = missing_layers(isolation)
    if missing:
        items = [("missing layers", ", ".join(missing))] + items
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


def confined_line(isolation, lang):
    """The one line a student reads about a confined run, naming any layer it lacked."""
    missing = missing_layers(isolation, lang)
    if missing:
        layers = (", " if lang == "en" else "、").join(missing)
        return t("Sandbox: your code ran confined, but without these layers on this machine: {layers} "
                 "(details in results.json, extra_data.isolation).", lang, layers=layers)
    return t("Sandbox: your code ran confined (details in results.json, extra_data.isolation).", lang)


UNCONFINED_WARNING = _("Student code ran WITHOUT OS confinement: it could read and change what the "
                       "grader's user can. Check this grade by hand.")
# What the same fact means for a student grading their own work on their own machine
# (macOS, Windows): the staff warning above is for a grade of someone else's code.
UNCONFINED_FOR_STUDENTS = _("Your code ran without the sandbox that confines it when GitHub grades it: this "
                            "computer's system offers the grader none. That is no risk to you (it is your own code "
                            "on your own computer), and your score is computed exactly as on GitHub; only some "
                            "limits are looser here (memory, files, processes).")
