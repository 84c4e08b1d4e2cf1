"""From failed checks to feedback a student can act on: one diagnosis per module.

The plugin records, for every failed test, the TODO it exercises, the TODO its
failure points at (``blamed``), its hint and what the check saw. Here, per
module:

* a module that could not be imported gets one clear message (file as the
  student knows it, line, the line itself with a caret), on its first test
  only; the others point to it;
* otherwise the *root* is the failing TODO that the other failing TODOs build
  on (autograder.judging.todo_graph), among the TODOs that are written: one
  still raising its stub's NotImplementedError comes only after a written,
  wrong one; a test whose TODO builds on the root *and* whose own
  check blamed the root says "fix TODO n first" instead of hinting at its own
  TODO; every other failing test keeps naming its own TODO;
* the module's diagnosis names the root TODO, the test that shows it and a
  one-line message.

Texts are rendered in the run's language from the message catalogs.
"""
import re

from autograder.judging import call_errors, todo_graph as todos
from autograder.i18n import Message, _, render

MODULE_ERRORS = ("import", "missing", "sandbox", "budget")
MAX_TRACEBACK_LINES = 6
MAX_OUTPUT = 2500  # per test: feedback may quote what the student's code returned


def _first_line(value, lang):
    text = str(render(value, lang) or "").strip()
    return text.splitlines()[0] if text else ""


def todo_at_line(source, line, module):
    """The TODO ``line`` of the student's ``source`` belongs to: the one inside
    the function holding that line, else the nearest 'TODO n' comment above it,
    else the module's first TODO."""
    known = todos.table(module)
    lines = (source or "").splitlines()
    line = min(max(line, 1), len(lines)) if lines else 0

    def marker(text):
        found = re.search(r"#\s*(?:>>>\s*)?TODO\s+(\d+)", text)
        return int(found.group(1)) if found and int(found.group(1)) in known else 0

    start = next((index for index in range(line - 1, -1, -1) if re.match(r"\s*def\s", lines[index])), None)
    if start is not None:
        for index in range(start + 1, len(lines)):
            if re.match(r"\s*(def|class)\s", lines[index]):
                break
            if marker(lines[index]):
                return marker(lines[index])
    for index in range(line - 1, -1, -1):
        if marker(lines[index]):
            return marker(lines[index])
    return min(known) if known else 0


def _code_excerpt(error, lang):
    """'  line 69: def update(self)' and a caret under the column, when known."""
    if not error.line:
        return []
    from rich.cells import cell_len  # display width: a CJK character takes two columns

    prefix = "  " + render(_("line {line}: ", line=error.line), lang)
    code = error.code.rstrip()
    if not code:
        return [prefix.rstrip()]
    stripped = code.lstrip()
    lines = [prefix + stripped]
    indent = len(code) - len(stripped)
    if error.offset and error.offset > indent:
        lines.append(" " * (cell_len(prefix) + cell_len(stripped[:error.offset - 1 - indent])) + "^")
    return lines


def _traceback_tail(error):
    """The student's own frames, last ones first kept, never importlib's."""
    lines = [line for line in (error.traceback or "").strip().splitlines() if line.strip()]
    if len(lines) <= 1:
        return []
    return lines[:-1][-MAX_TRACEBACK_LINES:]


def import_message(error, file_label):
    if error.type in ("Timeout", "PrintedTooMuch") or call_errors.imported_exercise(error):
        return call_errors.describe(error, file_label)  # the sandbox says what it means (a loop, a print, another exercise)
    return _("{file} could not be imported: {error}", file=file_label, error=error.headline())


def unwritten_todo(error):
    """The TODO whose stub raised ``error`` (a StudentError), 0 if it is no stub's."""
    return todos.stub_todo(error.type, error.message) if error is not None and error.kind == "exception" else 0


def not_written(result):
    """Did this test stop on a stub's ``NotImplementedError('TODO n: ...')``?"""
    return bool(unwritten_todo(result.error))


def _student_error_lines(result, file_label, lang):
    error = result.error
    if not_written(result):
        return [render(_("TODO {todo} is not written yet (it raises NotImplementedError).", todo=result.blamed),
                       lang)]
    lines = [render(call_errors.describe(error, file_label), lang)]
    if error.kind == "exception":
        lines += _code_excerpt(error, lang) or _traceback_tail(error)
    return lines


def _hint_lines(result, lang):
    hint = result.hint
    if result.blamed and result.blamed == result.todo and hint:
        return [render(_("TODO {todo}: {hint}", todo=result.todo, hint=hint), lang)]
    if result.blamed:
        return [render(_("TODO {todo} ({title})", todo=result.blamed, title=todos.title(result.blamed) or ""), lang)]
    return [render(hint, lang)] if hint else []


def choose_root(failed):
    """The failing TODO the others build on (None when no failure names one).
    A TODO that is written and wrong comes before any that is not written yet
    (a stub's NotImplementedError says only that the student is not there yet);
    nothing written yet: the first TODO, in the order the stub reads."""
    unwritten = [unwritten_todo(result.error) for result in failed]
    if unwritten and all(unwritten):
        return min(unwritten)
    blamed = {}
    for result, stub in zip(failed, unwritten):
        if result.blamed and not stub:
            blamed[result.blamed] = blamed.get(result.blamed, 0.0) + (result.max_score or 0.5)
    if not blamed:
        return min((todo for todo in unwritten if todo), default=None)
    minimal = [todo for todo in blamed if not (todos.upstream(todo) & set(blamed) - {todo})]
    weight = {todo: sum(points for other, points in blamed.items()
                        if other == todo or todo in todos.upstream(other)) for todo in minimal}
    return max(minimal, key=lambda todo: (weight[todo], -todo))


def _module_problem(failed):
    return next((result for result in failed if result.error is not None and result.error.kind in MODULE_ERRORS),
                None)


def finish(results, lang="en", display_dir="exercises", sources=None):
    """Render every result's name and output in ``lang`` and return
    ``module -> {"todo", "test", "message"}`` for each module that lost points (and
    ``"problem"``, one of MODULE_ERRORS, where the whole module failed for that reason).
    The order of ``results`` is kept (class reports line students up by it);
    the terminal lists each module's diagnosed test first."""
    sources = sources or {}
    diagnosis = {}
    for result in results:
        if isinstance(result.name, Message):  # the plugin's titles; reports made elsewhere are final
            result.name = f"{result.module}: {render(result.name, lang)}"
    for module in dict.fromkeys(result.module for result in results):
        tests = [result for result in results if result.module == module]
        failed = [result for result in tests if not result.passed and result.max_score > 0]
        file_label = f"{display_dir.rstrip('/')}/{module}.py" if display_dir else f"{module}.py"
        problem = _module_problem(failed) if todos.has_todos(module) else None
        if problem is not None:
            entry = _compose_module_problem(problem, failed, module, file_label, sources.get(module), lang)
        else:
            entry = _compose_failures(failed, module, file_label, lang)
        for result in tests:
            if result.passed and not result.output:
                result.output = render(_("Passed."), lang)
            elif not result.output:
                result.output = "\n".join(line for line in _default_lines(result, file_label, lang) if line)
        for result in tests:
            if len(result.output) > MAX_OUTPUT:
                result.output = result.output[:MAX_OUTPUT - 1] + "…"
        if entry and todos.has_todos(module):
            entry["message"] = entry["message"][:MAX_OUTPUT]
            diagnosis[module] = entry
    return diagnosis


def _default_lines(result, file_label, lang):
    if result.error is not None and not_written(result):
        return _student_error_lines(result, file_label, lang)
    lines = _hint_lines(result, lang)
    if result.error is not None:
        lines += _student_error_lines(result, file_label, lang)
    elif result.detail is not None:
        lines.append(render(result.detail, lang))
    return lines


def _compose_module_problem(problem, failed, module, file_label, source, lang):
    error = problem.error
    if error.kind == "import":
        head = render(import_message(error, file_label), lang) if error.type != "Timeout" \
            else render(call_errors.describe(error, file_label), lang)
        lines = [head] + _code_excerpt(error, lang)
        lines.append(render(_("Every test of {module} fails until this file imports: fix this first.",
                              module=module), lang))
        todo = todo_at_line(source, error.line, module)
    else:  # missing, no sandbox, time budget spent: the first test that met it says where
        lines = [render(call_errors.describe(error, file_label), lang)]
        todo = problem.todo or min(todos.table(module))
    problem.output = "\n".join(lines)
    problem.blamed = todo
    for result in failed:
        if result is not problem and result.error is not None and result.error.kind in MODULE_ERRORS:
            result.output = render(_("Not run: {file} could not be used (see the first failed test of {module}).",
                                     file=file_label, module=module), lang)
            result.blamed = todo
    message = lines[0] + (render(_(" (line {line})", line=error.line), lang) if error.line else "")
    # "problem": the whole module failed for one reason (the class report groups by it, not by the test)
    return {"todo": todo, "test": problem.name, "message": message, "problem": error.kind}


def _compose_failures(failed, module, file_label, lang):
    if not failed:
        return None
    root = choose_root(failed)
    for result in failed:
        # Only a test whose own check found the root TODO wrong (blamed it) says "fix it first":
        # a test whose verdict does not follow from the root keeps naming its own TODO.
        if root and result.blamed == root and result.todo and result.todo != root \
                and root in todos.upstream(result.todo):
            lines = [render(_("Fix TODO {todo} first: this test builds on it ({title}).", todo=root,
                              title=todos.title(root) or ""), lang)]
            if result.error is not None:
                lines += _student_error_lines(result, file_label, lang)[:1]
            elif result.detail is not None:
                lines.append(render(_("What this test saw: {detail}", detail=result.detail), lang))
            result.blamed = root
            result.output = "\n".join(lines)
    todo = root or min(todos.table(module) or {0: None})
    shown = next((result for result in failed if result.blamed == todo and result.todo == todo), None) \
        or next((result for result in failed if result.blamed == todo), failed[0])
    if not shown.output:
        shown.output = "\n".join(line for line in _default_lines(shown, file_label, lang) if line)
    symptom = next((line for line in shown.output.splitlines()[1:] if line.strip()), "") \
        or _first_line(shown.output, lang)
    message = render(_("Start with TODO {todo} ({title}): “{test}” fails. {symptom}", todo=todo,
                       title=todos.title(todo) or "", test=shown.name.split(": ", 1)[-1], symptom=symptom), lang)
    return {"todo": todo, "test": shown.name, "message": message.strip()}
