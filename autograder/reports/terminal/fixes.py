"""Each module's first thing to fix, fitted to the lines a screen leaves it.

A diagnosis reads "Start with TODO n (its title): “the test” fails. What the
test saw". What it saw names the cause and is never cut here: where the
entries do not fit, the longest one loses first the test's title (the failed
test above it names it), then the TODO's title; only a report whose screen
holds less than that cuts an entry (``cut_last``: ``grade``, whose failed tests
above show every word), never ``watch``.
"""
from rich.cells import cell_len

from autograder.i18n import _, render
from autograder.i18n import text as t
from autograder.judging import todo_graph
from autograder.reports import safe_text, wrap
from autograder.reports.terminal.table import points

_LIMIT = 300 * 4  # characters of a diagnosis shown (the results file keeps it all)


def _shorter(entry, lang):
    """Shorter wordings of a diagnosis that keep what the test saw, shortest last."""
    message = safe_text.terminal_line(entry.get("message", ""), limit=_LIMIT)
    todo = entry.get("todo")
    test = str(entry.get("test", "")).split(": ", 1)[-1]
    if not isinstance(todo, int):
        return [message]
    title = todo_graph.title(todo) or ""
    head = render(_("Start with TODO {todo} ({title}): “{test}” fails. {symptom}", todo=todo, title=title,
                    test=safe_text.terminal_line(test, limit=_LIMIT), symptom=""), lang).strip()
    if not message.startswith(head) or not message[len(head):].strip():
        return [message]
    symptom = message[len(head):].strip()
    return [message, render(_("Start with TODO {todo} ({title}): {symptom}", todo=todo, title=title,
                              symptom=symptom), lang),
            render(_("Start with TODO {todo}: {symptom}", todo=todo, symptom=symptom), lang)]


def wordings(report, lang):
    """module -> the wordings of its entry, longest first: its diagnosis, "✓" for
    full marks, or what the hidden tests not run leave open; modules without one
    are left out."""
    not_run = report.hidden_not_run if isinstance(report.hidden_not_run, dict) else {}
    diagnosis = report.diagnosis if isinstance(report.diagnosis, dict) else {}
    not_graded = report.not_graded()
    found = {}
    for module, (score, maximum) in report.by_module().items():
        ungraded = not_graded.get(module)
        module = safe_text.terminal_line(module, limit=40)
        entry = diagnosis.get(module)
        if isinstance(entry, dict) and entry.get("message"):
            found[module] = _shorter(entry, lang)
        elif ungraded:  # never a ✓ for what the grader failed to check
            found[module] = [t("{points} points not graded: the grader failed (tell the course staff)", lang,
                               points=points(ungraded))]
        elif maximum and score >= maximum and not not_run.get(module):
            found[module] = ["✓"]
        elif maximum and score >= maximum:
            found[module] = [t("every visible test passes; the hidden tests are not run here", lang)]
    return found


def fit(wordings_of, lay_out, room, cut_last=False, width=80):
    """module -> lines: each module's wording laid out by ``lay_out(module, text)``,
    the longest entry made shorter while they take more than ``room`` lines (None:
    any number). With ``cut_last``, entries still too long are then cut to their share
    of ``room`` at a word, ending in "…"."""
    chosen = {module: 0 for module in wordings_of}
    laid = {module: lay_out(module, forms[0]) for module, forms in wordings_of.items()}
    while room is not None and sum(map(len, laid.values())) > room:
        shorter = [module for module in laid if chosen[module] + 1 < len(wordings_of[module])]
        if not shorter:
            break
        module = max(shorter, key=lambda name: len(laid[name]))
        chosen[module] += 1
        laid[module] = lay_out(module, wordings_of[module][chosen[module]])
    if cut_last and room is not None and laid and sum(map(len, laid.values())) > room:
        left, order = room, sorted(laid, key=lambda name: len(laid[name]))
        for index, module in enumerate(order):  # the shortest first: what they leave goes to the others
            laid[module] = _at_most(laid[module], max(left // (len(order) - index), 2), width)
            left -= len(laid[module])
    return laid


def _at_most(lines, most, width):
    """The first ``most`` of ``lines``, the last one ending in "…" if cut."""
    if len(lines) <= most:
        return lines
    return lines[:most - 1] + [cut(lines[most - 1], width - 2) + " …"]


def cut(line, width):
    """``line`` cut to ``width`` cells where it may break (never inside a word or number)."""
    return wrap.wrap(line, width)[0] if cell_len(line) > width else line
