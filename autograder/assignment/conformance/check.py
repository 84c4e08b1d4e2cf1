"""The chapter's optional framework conformance check (``check_amp_framework_conformance``,
end of Step 4), run on a student's ``amp_update.py``.

The inputs are the chapter's own (a parameter ``[2.0, -1.0]``, a scale of 8, an
``inf`` gradient, backoff 0.5): nothing here is drawn from or tells anything about
the hidden tests. ``torch.amp.GradScaler('cpu')`` runs in this (the judge's)
process; the student's functions are called through ``student``, a
:class:`~autograder.sandbox.client.Sandbox`, exactly as the grader calls them.
"""
from dataclasses import dataclass

import torch

from autograder.authoring import call_errors, todo_graph as todos, _

FILE = "amp_update.py"
INIT_SCALE, BACKOFF, MAX_NORM = 8.0, 0.5, 1.0
CHECKS = {
    "unscaled_gradient_match": _("unscale_gradients gives the gradient GradScaler.unscale_ gives at the same scale"),
    "local_overflow_skips": _("plan_mixed_precision_update skips the step (should_step is False) on an inf gradient"),
    "framework_overflow_skips": _("GradScaler.step leaves the parameter unchanged on the same inf gradient"),
    "scale_backoff_match": _("next_scale equals GradScaler's scale after update() backed it off"),
}


# The TODO a failed check points at (GradScaler's own check points at none).
TODOS = {"unscaled_gradient_match": 1, "local_overflow_skips": 3, "scale_backoff_match": 3}


@dataclass
class Verdict:
    name: str
    passed: bool
    reason: object = None  # a Message saying why it failed
    todo: int = 0          # the TODO to look at when it failed (0: none)
    unwritten: bool = False  # the reason is that this TODO is not written yet


def framework_side():
    """GradScaler's half of the chapter's check: what unscale_ gives, and what step/update
    do on an inf gradient."""
    parameter = torch.nn.Parameter(torch.tensor([2.0, -1.0]))
    scaler = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE, backoff_factor=BACKOFF)
    scaler.scale(parameter.square().sum()).backward()
    scaled = parameter.grad.detach().clone()
    scaler.unscale_(torch.optim.SGD([parameter], lr=0.1))

    overflow = torch.nn.Parameter(torch.tensor([1.0]))
    overflow_scaler = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE, backoff_factor=BACKOFF)
    overflow_scaler.scale(overflow.square().sum()).backward()
    overflow.grad.fill_(float("inf"))
    before = overflow.detach().clone()
    inf_gradient = overflow.grad.detach().clone()
    overflow_scaler.step(torch.optim.SGD([overflow], lr=0.1))
    overflow_scaler.update()
    return {"scaled": scaled, "unscaled": parameter.grad.detach().clone(), "inf_gradient": inf_gradient,
            "skipped": bool(torch.equal(before, overflow.detach())), "backed_off": overflow_scaler.get_scale()}


def _shown(value):
    if isinstance(value, torch.Tensor):
        value = value.tolist() if value.numel() <= 8 else f"tensor of shape {tuple(value.shape)}"
    text = repr(value)
    return text if len(text) <= 120 else text[:119] + "…"


def _number(value):
    """A Python number or a one-element tensor as a float (None for anything else)."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _failure(function, outcome):
    """Why ``function`` gave no value: a stub's TODO in the run's language, else the grader's words."""
    error = outcome.error
    unwritten = todos.stub_todo(error.type, error.message) if error.kind == "exception" else 0
    if unwritten:
        return _("{function} stopped at TODO {todo}: it is not written yet (NotImplementedError).",
                 function=function, todo=unwritten)
    return _("{function}: {problem}", function=function, problem=call_errors.describe(error, FILE))


def _gradient_verdict(outcome, framework):
    name = "unscaled_gradient_match"
    if not outcome.ok:
        return Verdict(name, False, _failure("unscale_gradients", outcome))
    value = outcome.value
    if not (isinstance(value, (list, tuple)) and len(value) == 1 and isinstance(value[0], torch.Tensor)
            and value[0].shape == framework["unscaled"].shape):
        return Verdict(name, False, _("unscale_gradients returned {got}, not a list holding one tensor of "
                                      "shape {shape}.", got=_shown(value), shape=list(framework["unscaled"].shape)))
    local = value[0].detach().to(torch.float32)
    if bool(torch.allclose(local, framework["unscaled"])):
        return Verdict(name, True)
    return Verdict(name, False, _("unscale_gradients gave {got}; GradScaler.unscale_ gives {want}.",
                                  got=_shown(local), want=_shown(framework["unscaled"])))


def _plan_verdicts(outcome, framework):
    skip, backoff = "local_overflow_skips", "scale_backoff_match"
    if not outcome.ok:
        reason = _failure("plan_mixed_precision_update", outcome)
        return [Verdict(skip, False, reason), Verdict(backoff, False, reason)]
    plan = outcome.value
    if not isinstance(plan, dict) or "should_step" not in plan or "next_scale" not in plan:
        reason = _("plan_mixed_precision_update returned {got}, not a dict with should_step and next_scale.",
                   got=_shown(plan))
        return [Verdict(skip, False, reason), Verdict(backoff, False, reason)]
    verdicts = [Verdict(skip, True) if plan["should_step"] is False else
                Verdict(skip, False, _("should_step is {got} for an inf gradient; GradScaler skips this step.",
                                       got=_shown(plan["should_step"])))]
    want = framework["backed_off"]
    verdicts.append(Verdict(backoff, True) if _number(plan["next_scale"]) == want else
                    Verdict(backoff, False, _("next_scale is {got}; GradScaler's scale after update() is {want} "
                                              "(scale {scale} × backoff_factor {backoff}).",
                                              got=_shown(plan["next_scale"]), want=_shown(want),
                                              scale=_shown(INIT_SCALE), backoff=_shown(BACKOFF))))
    return verdicts


def run(student):
    """The four verdicts, in the chapter's order."""
    framework = framework_side()
    gradient = student.call("unscale_gradients", [framework["scaled"].clone()], INIT_SCALE)
    plan = student.call("plan_mixed_precision_update", [framework["inf_gradient"].clone()], INIT_SCALE,
                        max_norm=MAX_NORM)
    found = [_gradient_verdict(gradient, framework)] + _plan_verdicts(plan, framework)
    found.insert(2, Verdict("framework_overflow_skips", framework["skipped"],
                            None if framework["skipped"] else _("this PyTorch's GradScaler did not skip the step.")))
    for verdict, outcome in zip(found, (gradient, plan, None, plan)):
        if not verdict.passed and verdict.name in TODOS:
            error = outcome.error if outcome is not None and not outcome.ok else None
            unwritten = todos.stub_todo(error.type, error.message) if error and error.kind == "exception" else 0
            verdict.todo, verdict.unwritten = unwritten or TODOS[verdict.name], bool(unwritten)
            if error and not gradient.ok and gradient.error.kind == error.kind and outcome is plan:
                verdict.todo = unwritten or TODOS["unscaled_gradient_match"]  # the plan unscales first: TODO 1
    return found
