"""What a GradScaler error raised inside the student's train_step means, for the visible and
the hidden amp_training_step suites alike.

GradScaler refuses misplaced calls (a second unscale_, an update() with nothing recorded, a
second step); the message says *what* was refused, the line of the student's call says
*where*. A call placed in the microbatch loop is TODO 11's mistake (the loop only runs
forward and backward), whatever GradScaler's message; elsewhere the message decides."""
import re

from autograder.authoring import _, Mistake, StudentCodeFailed, source_of

FILE = "amp_training_step.py"
LOOP_TODO = 11  # the microbatch loop of the stub
_MARKER = re.compile(r"#\s*(?:>>>\s*)?TODO\s+(\d+)\b")


def block_todo(source, line, known):
    """The TODO block holding ``line`` of ``source``: the nearest 'TODO n' marker above it within
    the same function (0 if there is none, e.g. the student removed the markers)."""
    lines = (source or "").splitlines()
    for index in range(min(line, len(lines)) - 1, -1, -1):
        if re.match(r"\s*def\s", lines[index]):
            return 0
        found = _MARKER.search(lines[index])
        if found and int(found.group(1)) in known:
            return int(found.group(1))
    return 0


def _in_loop(student, error):
    from autograder.assignment.description import TODOS

    if not error.line:
        return False
    known = TODOS["amp_training_step"]
    return block_todo(source_of(student.spec), error.line, known) == LOOP_TODO


def explain_crash(student, spec, error):
    """(todo, why) for the GradScaler errors a misplaced scaler call raises, else None."""
    message = error.message or ""
    in_loop = _in_loop(student, error)
    if "did not use scaler.scale" in message or "No inf checks were recorded for this optimizer" in message:
        return 11, _("the GradScaler never saw a scaled loss: every microbatch's backward must run on "
                     "scaler.scale(weighted loss).")
    if "No inf checks were recorded prior to update" in message:
        if in_loop:
            return 11, _("scaler.update() runs inside the microbatch loop: the loop only runs the forward and the "
                         "(scaled) backward; update the scaler once per call, after the step or the skip.")
        return 13, _("scaler.update() ran although nothing was unscaled or stepped before it in this call: "
                     "unscale_ once at the boundary, step or skip, then update().")
    order = ("has already been called on this optimizer since the last update", "is being called after step()",
             "step() has already been called since the last update")
    if not any(text in message for text in order):
        return None
    if in_loop:
        return 11, _("a scaler call runs inside the microbatch loop and GradScaler refused it the second time: "
                     "unscale_, step and update belong after the loop, once per call, never once per "
                     "microbatch.")
    if spec["updates"] > 1 and student.scenario("training_steps", dict(spec, updates=1, inject={
            key: value for key, value in spec.get("inject", {}).items() if key == "0"})).ok:
        return 13, _("the first call ran and a later one failed: scaler.update() must run once at the end of "
                     "every call, after the step or the skip, so that the next call starts a new iteration.")
    if "step() has already been called" in message:
        return 13, _("scaler.step ran twice in one call: step (or skip) once, at the update boundary.")
    if "after step()" in message:
        return 12, _("scaler.unscale_ ran after scaler.step: unscale once at the update boundary, before the "
                     "finite check, the norm and the clip.")
    return 12, _("scaler.unscale_ ran twice in one call: unscale once, at the update boundary after the "
                 "microbatch loop.")


def run_student(student, spec):
    """The scenario's value; a GradScaler refusal becomes a Mistake naming its TODO."""
    outcome = student.scenario("training_steps", spec)
    if outcome.ok:
        return outcome.value
    error = outcome.error
    found = explain_crash(student, spec, error) if error.kind == "exception" else None
    if found is None:
        raise StudentCodeFailed(error, FILE)
    todo, why = found
    if error.line:
        raise Mistake(_("{why}\nYour code raised `{error}` (line {line}: `{code}`).", why=why,
                        error=error.headline(), line=error.line, code=error.code.strip()), todo)
    raise Mistake(_("{why}\nYour code raised `{error}`.", why=why, error=error.headline()), todo)
