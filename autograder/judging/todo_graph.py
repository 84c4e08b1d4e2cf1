"""The assignment's TODOs and how they build on each other, as the diagnosis
asks about them (the graph itself is declared in the assignment's description)."""
import ast
import functools
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


# -- where each TODO is in a student's file ---------------------------------------------------
# The stub's own words mark where a TODO's code goes: its comment ("# TODO n: ..."), the
# stub's raise ("NotImplementedError('TODO n: ...')"), a reference's fence ("# >>> TODO n",
# "# <<< TODO n"). A student keeps them, mostly; the description's TODO_FUNCTIONS says
# which function holds which TODO for a function whose comments are gone.
# A mark is "TODO n" and a colon, as the stub writes it: a comment that only mentions a TODO
# ("# TODO n), not ...", where a sentence wrapped) marks nothing.
_START = re.compile(r"#\s*(?:>>>\s*)?TODO\s+(\d+)\s*[:：]|NotImplementedError\(\s*['\"]TODO\s+(\d+)\b")
_END = re.compile(r"#\s*<<<\s*TODO\s+(\d+)\b")
_DEF = re.compile(r"(\s*)(?:async\s+def|def|class)\s+(\w+)")


class Places:
    """The TODOs of ``module`` in one student file (its ``source``)."""

    def __init__(self, source, module):
        known = table(module)
        self.lines = source.splitlines()
        self.functions = _functions(source, self.lines)
        self.marks = {}  # line -> the TODO whose code starts there (0: a fence ends one)
        for number, text in enumerate(self.lines, 1):
            start, end = _START.search(text), _END.search(text)
            todo = int(next(group for group in start.groups() if group)) if start else 0
            if todo in known:
                self.marks[number] = todo
            elif end and int(end.group(1)) in known:
                self.marks[number] = 0
        self.declared = {}  # qualified function name -> its TODOs, as the description declares them
        for todo, function in active_assignment.current().todo_functions.items():
            if todo in known:
                self.declared.setdefault(function, []).append(todo)

    def function_at(self, line):
        """``(first, last, qualified name)`` of the innermost function holding ``line`` (None: none)."""
        holding = [function for function in self.functions if function[0] <= line <= function[1]]
        return min(holding, key=lambda function: function[1] - function[0], default=None)

    def _marks_of(self, function):
        return [(number, todo) for number, todo in sorted(self.marks.items())
                if self.function_at(number) == function]

    def todo_at(self, line):
        """The TODO whose code ``line`` is: the last of its function's marks above it; 0 for
        code given with the stub (above the function's first mark, or after a fence's
        end); None when the file does not say (no mark in the function, and its declared
        TODOs are not exactly one)."""
        if not 1 <= line <= len(self.lines):
            return None
        function = self.function_at(line)
        marks = self._marks_of(function)
        if not marks:
            todos = self.declared.get(function[2], []) if function else []
            return todos[0] if len(todos) == 1 else None
        above = [todo for number, todo in marks if number <= line]
        return above[-1] if above else 0

    def first_of_function(self, line):
        """The first TODO marked, or declared, in the function holding ``line`` (0: none)."""
        function = self.function_at(line)
        if function is None:
            return 0
        marked = [todo for _number, todo in self._marks_of(function) if todo]
        return (marked or sorted(self.declared.get(function[2], [])) or [0])[0]

    def nearest_above(self, line):
        """The TODO of the nearest mark above ``line``, wherever it is (0: none)."""
        return next((self.marks[number] for number in range(min(line, len(self.lines)), 0, -1)
                     if self.marks.get(number)), 0)


def places(source, module):
    """:class:`Places` of ``source``, made once per file however many failed tests ask."""
    return _places(source or "", module, active_assignment.package_name())


@functools.lru_cache(maxsize=16)
def _places(source, module, _assignment):
    return Places(source, module)


def _functions(source, lines):
    """``[(first, last, qualified name)]`` of every function of ``source``; read by
    indentation where the file does not parse (a syntax error is reported by line too)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _functions_by_indentation(lines)
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not isinstance(child, ast.ClassDef):
                    found.append((child.lineno, child.end_lineno or child.lineno, prefix + child.name))
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)
    try:
        visit(tree, "")
    except RecursionError:
        return _functions_by_indentation(lines)
    return found


def _functions_by_indentation(lines):
    found, open_ = [], []  # open_: (indent, first line, qualified name, is a class)
    for number, text in enumerate(lines + ["<end>"], 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        indent = len(text) - len(text.lstrip())
        while open_ and indent <= open_[-1][0]:
            closed = open_.pop()
            if not closed[3]:
                last = number - 1
                while last > closed[1] and not lines[last - 1].strip():
                    last -= 1
                found.append((closed[1], last, closed[2]))
        defined = _DEF.match(text)
        if defined and number <= len(lines):
            prefix = open_[-1][2] + "." if open_ else ""
            open_.append((indent, number, prefix + defined.group(2), text.lstrip().startswith("class")))
    return found
