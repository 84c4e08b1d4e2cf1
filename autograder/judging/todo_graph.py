"""The assignment's TODOs and how they build on each other, as the diagnosis
asks about them (the graph itself is declared in the assignment's description)."""
import re

from autograder import active_assignment


def table(module):
    """{todo: title} of ``module`` (empty for anything that is no student module)."""
    return active_assignment.current().todos.get(module, {})


def has_todos(module):
    return module in active_assignment.current().todos


def module_of(todo):
    return active_assignment.current().module_of(todo)


def title(todo):
    return table(module_of(todo)).get(todo)


def stub_todo(exception_type, message):
    """The TODO a stub's ``NotImplementedError('TODO n: ...')`` names (0 for any other
    exception, or a number that is no TODO of this assignment)."""
    found = re.match(r"\s*TODO\s+(\d+)\b", message or "") if exception_type == "NotImplementedError" else None
    return int(found.group(1)) if found and module_of(int(found.group(1))) else 0


def upstream(todo):
    """Every TODO ``todo`` builds on, directly or not."""
    builds_on = active_assignment.current().builds_on
    seen, stack = set(), list(builds_on.get(todo, ()))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(builds_on.get(current, ()))
    return seen
