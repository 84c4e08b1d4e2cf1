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
  one-line message;
* a failure is evidence against the TODO where it happened, when the frames of
  the student's file say so (:func:`where_it_was`): a call stopped for its time
  or its printing points at the TODO whose code was running (the box's stack at
  that moment, :mod:`autograder.intake.stack_dump`), an exception the stub's given
  code raised at the TODO whose call broke that code's rule; a call that failed
  only because an earlier call of its module ran out of time follows that call.
  Their feedback names the file, line and function.

Texts are rendered in the run's language from the message catalogs.
"""
import collections
import re

from autograder.judging import call_errors, todo_graph as todos
from autograder.i18n import Message, _, render

MODULE_ERRORS = ("import", "missing", "sandbox", "budget")
MAX_TRACEBACK_LINES = 6
MAX_OUTPUT = 2500  # per test: feedback may quote what the student's code returned
STOPPED = ("timeout", "output")  # calls the grader stopped: the box's stack says where they were
# A frame of the student's file as the worker writes a traceback (and the client a stack dump's)
_FRAME = re.compile(r'^  File "(?P<file>[^"\n]+)", line (?P<line>\d{1,7}), in (?P<name>\S{1,100})$')
Place = collections.namedtuple("Place", "line function todo")  # todo 0: no TODO's code


def _first_line(value, lang):
    text = str(render(value, lang) or "").strip()
    return text.splitlines()[0] if text else ""


def todo_at_line(source, line, module):
    """The TODO ``line`` of the student's ``source`` belongs to: the TODO whose code
    it is, else the first of the function holding it, else the nearest 'TODO n'
    above it, else the module's first TODO."""
    places = todos.places(source, module)
    known = todos.table(module)
    return places.todo_at(line) or places.first_of_function(line) or places.nearest_above(line) \
        or (min(known) if known else 0)


def frames_of(error, module):
    """``[(line, function)]`` of the student's ``module`` in ``error``'s traceback, the
    outermost first: an exception's frames (the worker's), or where a stopped call was
    (the client's reading of the box's stack)."""
    found = []
    for text in (error.traceback or "").splitlines():
        if text and not text.startswith(" "):
            break  # the exception's own lines: its message is the student's text
        match = _FRAME.match(text)
        if match and match["file"] == f"{module}.py":
            found.append((int(match["line"]), match["name"]))
    return found


def where_it_was(error, module, source):
    """The :class:`Place` a failure is evidence against (None: its test's own TODO is):

    * a call stopped for its time or its printing: the innermost of the student's
      frames in a TODO's code (the stub's given code that a loop calls is not where
      to look), else the innermost frame of the file;
    * an exception raised by the stub's given code (a rule it checks, e.g. a method
      called twice): the student's call into it, the innermost frame in a TODO's code."""
    stack = frames_of(error, module) if error is not None and source else []
    if not stack:
        return None
    places = todos.places(source, module)
    marked = [(line, name, places.todo_at(line)) for line, name in stack]
    in_todo = next((frame for frame in reversed(marked) if frame[2]), None)
    if error.kind in STOPPED:
        line, name, todo = in_todo or marked[-1]
        return Place(line, name, todo or 0)
    if error.kind == "exception" and marked[-1][2] == 0 and in_todo is not None:
        return Place(*in_todo)
    return None


def _attribute(failed, module, source):
    """Send each failure to the TODO where it happened (:func:`where_it_was`); returns
    ``{id(result): Place}`` of the failures whose feedback names that place. A call that
    failed only because an earlier call of the module ran out of time (it had the short
    limit), and whose own place is unknown, is no evidence against its test's TODO: it
    follows that earlier call."""
    found = {}
    for result in failed:
        place = None if not_written(result) else where_it_was(result.error, module, source)
        if place is not None:
            found[id(result)] = place
            result.blamed = place.todo or result.blamed
    first = next((result for result in failed if _stopped(result) and result.error.type != "after_timeout"), None)
    for result in failed:
        if first is not None and _stopped(result) and result.error.type == "after_timeout" \
                and id(result) not in found:
            result.blamed = first.blamed
    return found


def _stopped(result):
    return result.error is not None and result.error.kind == "timeout"


def _code_excerpt(error, lang, source=None):
    """'  line 69: def update(self)' and a caret under the column, when known (the
    line's text from ``source`` where the error does not quote it)."""
    return _excerpt(error.line, error.code or _code_at(source, error.line), error.offset, lang)


def _excerpt(line, code, offset, lang):
    if not line:
        return []
    from rich.cells import cell_len  # display width: a CJK character takes two columns

    prefix = "  " + render(_("line {line}: ", line=line), lang)
    code = code.rstrip()
    if not code:
        return [prefix.rstrip()]
    stripped = code.lstrip()
    lines = [prefix + stripped]
    indent = len(code) - len(stripped)
    if offset and offset > indent:
        lines.append(" " * (cell_len(prefix) + cell_len(stripped[:offset - 1 - indent])) + "^")
    return lines


def _place_text(place, file_label):
    if place.todo:
        return _("{file} line {line}, in {function} (TODO {todo})", file=file_label, line=place.line,
                 function=place.function, todo=place.todo)
    return _("{file} line {line}, in {function}", file=file_label, line=place.line, function=place.function)


def _code_at(source, line):
    lines = (source or "").splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


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


def _student_error_lines(result, file_label, lang, place=None, source=None):
    error = result.error
    if not_written(result):
        return [render(_("TODO {todo} is not written yet (it raises NotImplementedError).", todo=result.blamed),
                       lang)]
    if place is not None:
        return _placed_lines(result, file_label, lang, place, source)
    lines = [render(call_errors.describe(error, file_label), lang)]
    if error.kind == "exception":
        lines += _code_excerpt(error, lang) or _traceback_tail(error)
    return lines


def _placed_lines(result, file_label, lang, place, source):
    """A failure whose place is known (:func:`where_it_was`): what happened there, the
    line itself, and, for a stopped call, the student's frames then (innermost last)."""
    error = result.error
    where = _place_text(place, file_label)
    if error.kind == "output":
        head = _("Your code printed more than {size} during one call and was stopped at {place}: is a print inside "
                 "a loop there (perhaps one that never ends)? Print less, or only while you debug one case, and "
                 "grade again.", size=error.message, place=where)
    elif error.kind == "timeout" and error.type == "after_timeout":
        head = _("Your code did not finish within {seconds} s (once one call of a module has run out of time, each "
                 "later call gets {seconds} s); it was running {place}: look there for an endless loop.",
                 seconds=error.message, place=where)
    elif error.kind == "timeout":
        head = _("Your code did not finish within {seconds} s; when its time ran out it was running {place}: look "
                 "there for an endless loop or work that grows with the input.", seconds=error.message, place=where)
    else:
        head = _("Your call at {place} broke a rule of the code given with the exercise, which raised {error}",
                 place=where, error=error.headline())
    lines = [render(head, lang)] + _excerpt(place.line, _code_at(source, place.line), 0, lang)
    stack = frames_of(error, result.module) if error.kind in STOPPED else []
    if len(stack) > 1:
        lines.append(render(_("Your code's calls when it was stopped, the innermost last:"), lang))
        lines += ["  " + render(_("line {line}, in {function}: {code}", line=line, function=function,
                                  code=_code_at(source, line).strip()), lang) for line, function in stack]
    return lines


def _hint_lines(result, lang, placed=None):
    # a call stopped where it was (placed) never came to the verdict the hint explains
    hint = None if id(result) in (placed or {}) and result.error.kind in STOPPED else result.hint
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
        source = sources.get(module)
        problem = _module_problem(failed) if todos.has_todos(module) else None
        placed = _attribute(failed, module, source) if todos.has_todos(module) and \
            (problem is None or problem.error.kind == "budget") else {}
        if problem is not None:
            entry = _compose_module_problem(problem, failed, module, file_label, source, lang, placed)
        else:
            entry = _compose_failures(failed, module, file_label, lang, placed, source)
        for result in tests:
            if result.passed and not result.output:
                result.output = render(_("Passed."), lang)
            elif not result.output:
                result.output = "\n".join(line for line in _default_lines(result, file_label, lang, placed, source)
                                          if line)
        for result in tests:
            if len(result.output) > MAX_OUTPUT:
                result.output = result.output[:MAX_OUTPUT - 1] + "…"
        if entry and todos.has_todos(module):
            entry["message"] = entry["message"][:MAX_OUTPUT]
            diagnosis[module] = entry
    return diagnosis


def _default_lines(result, file_label, lang, placed=None, source=None):
    if result.error is not None and not_written(result):
        return _student_error_lines(result, file_label, lang)
    lines = _hint_lines(result, lang, placed)
    if result.error is not None:
        lines += _student_error_lines(result, file_label, lang, (placed or {}).get(id(result)), source)
    elif result.detail is not None:
        lines.append(render(result.detail, lang))
    return lines


def _compose_module_problem(problem, failed, module, file_label, source, lang, placed=None):
    error = problem.error
    if error.kind == "import":
        head = render(import_message(error, file_label), lang) if error.type != "Timeout" \
            else render(call_errors.describe(error, file_label), lang)
        lines = [head] + _code_excerpt(error, lang, source)
        lines.append(render(_("Every test of {module} fails until this file imports: fix this first.",
                              module=module), lang))
        todo = todo_at_line(source, error.line, module)
    else:  # missing, no sandbox, time budget spent: the first test that met it says where
        lines = [render(call_errors.describe(error, file_label), lang)]
        todo = problem.todo or min(todos.table(module))
        # a spent budget went to calls that ran out of time: where the first of them was
        spent = next((result for result in failed if _stopped(result) and id(result) in (placed or {})), None)
        if error.kind == "budget" and spent is not None:
            todo = spent.blamed
            lines[0] = render(_("{file} used up its total time budget: its calls ran out of time at {place}. "
                                "Later calls were not run.", file=file_label,
                                place=_place_text(placed[id(spent)], file_label)), lang)
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


def _compose_failures(failed, module, file_label, lang, placed=None, source=None):
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
            if result.error is not None:  # where it happened, in full; else the error's first line
                place = (placed or {}).get(id(result))
                lines += _student_error_lines(result, file_label, lang, place, source)[:None if place else 1]
            elif result.detail is not None:
                lines.append(render(_("What this test saw: {detail}", detail=result.detail), lang))
            result.blamed = root
            result.output = "\n".join(lines)
    todo = root or min(todos.table(module) or {0: None})
    # The test that shows it: one whose failure's place is known (the first call that ran out
    # of time, not a later one with the short limit), else one of the TODO's own tests.
    placed = placed or {}
    candidates = [result for result in failed if result.blamed == todo] or failed[:1]
    shown = min(candidates, key=lambda result: (id(result) not in placed,
                                                _stopped(result) and result.error.type == "after_timeout",
                                                result.todo != todo))
    if not shown.output:
        shown.output = "\n".join(line for line in _default_lines(shown, file_label, lang, placed, source) if line)
    symptom = next((line for line in shown.output.splitlines()[1:] if line.strip()), "") \
        or _first_line(shown.output, lang)
    message = render(_("Start with TODO {todo} ({title}): “{test}” fails. {symptom}", todo=todo,
                       title=todos.title(todo) or "", test=shown.name.split(": ", 1)[-1], symptom=symptom), lang)
    return {"todo": todo, "test": shown.name, "message": message.strip()}
