"""What went wrong in a call of a student's module, in the words the student reads: the
sandbox reports a :class:`~autograder.sandbox.client.StudentError` (missing, import, exception,
timeout, output, crash, protocol, budget, sandbox, grader) as data; the sentence for each is here."""
import re

from autograder import active_assignment
from autograder.i18n import _


def describe(error, module_file):
    """What went wrong in ``error`` (a :class:`~autograder.sandbox.client.StudentError`), for
    the student (an :class:`autograder.i18n.Message`)."""
    other = imported_exercise(error)
    if other:
        return _("{file} imports {other}: every module is graded on its own, so one exercise file cannot "
                 "import another. Copy what {file} needs from {other} into {file}.", file=module_file,
                 other=other)
    if error.kind == "missing":
        if error.message:
            return _("{file} {problem}: it was not graded.", file=module_file, problem=error.message)
        return _("{file} is missing from the submission.", file=module_file)
    if error.kind == "import":
        if error.type == "Timeout":
            return _("Importing {file} took longer than {seconds} s: does it run work at import time?",
                     file=module_file, seconds=error.message)
        if error.type == "PrintedTooMuch":
            return _("Importing {file} printed more than {size} and was stopped: does it print in a loop at "
                     "import time?", file=module_file, size=error.message)
        return _("{file} could not be imported: {error}", file=module_file, error=error.headline())
    if error.kind == "exception":
        return _("Your code raised {error}", error=error.headline())
    if error.kind == "timeout" and error.type == "after_timeout":
        return _("Your code did not finish within {seconds} s (once one call of a module has run out of "
                 "time, each later call gets {seconds} s): look for an endless loop.", seconds=error.message)
    if error.kind == "timeout":
        return _("Your code did not finish within {seconds} s: look for an endless loop or work that "
                 "grows with the input.", seconds=error.message)
    if error.kind == "output":
        return _("Your code printed more than {size} during one call and was stopped there: is a print "
                 "inside a loop (perhaps one that never ends)? Print less, or only while you debug one "
                 "case, and grade again.", size=error.message)
    if error.kind == "crash":
        return _("The process running your code stopped ({status}). Did it call exit()/os._exit(), run "
                 "out of memory or crash the interpreter?", status=error.message)
    if error.kind == "budget":
        return _("{file} used up its total time budget; later calls were not run.", file=module_file)
    if error.kind == "grader":
        return grader_fault(error)
    if error.kind == "sandbox":
        return _("The grader could not start a sandbox for {file} ({problem}). This is not your mistake: "
                 "tell the course staff.", file=module_file, problem=error.message)
    return _("Your code's answer could not be read ({problem}). The process running your code sent "
             "something that is not a valid answer: did it write to the grader's socket or print binary "
             "data there?", problem=error.message)


def grader_fault(error):
    """What a student reads where the grader's own code failed (``error``: a StudentError of kind
    grader): the exception's type and where in our code, never its message (a hidden test's
    may hold the values it compares; the staff find it in results.json)."""
    if error.where:
        return _("The grader could not check this: its own code raised {error} ({where}). This is not your "
                 "mistake, and this test is not counted, neither in your score nor in its maximum: tell the "
                 "course staff. Grading again after they fix it counts it.", error=error.type or "?",
                 where=error.where)
    return _("The grader could not check this: its own code raised {error}. This is not your mistake, and this "
             "test is not counted, neither in your score nor in its maximum: tell the course staff. Grading "
             "again after they fix it counts it.", error=error.type or "?")


def imported_exercise(error):
    """The other exercise file this error's import asked for ('' if none)."""
    if error.type not in ("ModuleNotFoundError", "ImportError") or error.kind not in ("import", "exception"):
        return ""
    # Python's words, or the worker's for the blocked package (exercises.<module>)
    found = re.match(r"No module named '([\w.]+)'|importing '([\w.]+)' is not allowed", error.message)
    parts = (found.group(1) or found.group(2)).split(".") if found else [""]
    if parts[0] == "exercises":  # the worker refuses the package before Python names the module
        return parts[1] + ".py" if len(parts) > 1 else "exercises/"
    return parts[0] + ".py" if parts[0] in active_assignment.current().modules else ""
