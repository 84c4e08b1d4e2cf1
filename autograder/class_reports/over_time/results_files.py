"""Reading what a class report needs of a results.json: bounded, defensive (a file may be old,
hand-edited or missing), its tests keyed alike across runs."""
import json
import re

from autograder import active_assignment
from autograder.i18n import render
from autograder.i18n import text as t
from autograder.intake import safe_files
from autograder.reports.safe_text import as_text

MAX_RESULTS_BYTES = 16 * 1024 * 1024


def load(path):
    """The results file at ``path`` as a dict, or None when it is missing or unreadable."""
    try:
        data = json.loads(safe_files.read_text(str(path), MAX_RESULTS_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def module_of(test):
    """The module tag of a results.json test, as a string (``?`` when absent or odd)."""
    tags = test.get("tags")
    module = tags[0] if isinstance(tags, list) and tags else None
    return module if isinstance(module, str) and module else "?"


def title_of(name, module):
    """A results.json test name (``module: title``) without its module prefix."""
    name, prefix = as_text(name), f"{module}: "
    return name[len(prefix):] if name.startswith(prefix) else name


def test_key(test):
    """``module/test_id`` (else the name made an identifier): the same test in two runs."""
    ident = as_text(test.get("test_id")) or re.sub(r"[^A-Za-z0-9]+", "_", as_text(test.get("name"))).strip("_")
    return f"{module_of(test)}/{ident}"


def tests(data):
    """``{key: test}`` of a results dict's graded tests (the grader's status pseudo-tests left out)."""
    found = {}
    for test in (data or {}).get("tests") or []:
        if isinstance(test, dict) and module_of(test) != "grader":
            found.setdefault(test_key(test), test)
    return found


def number(value):
    """A score as a number (0 when it is none)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def shown(value):
    """A score as the reports print it: ``93``, ``92.5``."""
    value = float(value)
    return f"{int(value)}" if value.is_integer() else f"{round(value, 4):g}"


def todo_name(module, todo, lang):
    """``TODO <n> (what it builds)`` in ``lang``, or a note that the stub gave the code."""
    if todo is None:
        return t("code the template gives (no TODO)", lang)
    builds = active_assignment.current().todos.get(module, {}).get(todo)
    return t("TODO {todo}: {builds}", lang, todo=todo, builds=render(builds, lang)) if builds else f"TODO {todo}"
