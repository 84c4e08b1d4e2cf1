"""The TODOs of the three exercise modules and how they build on each other.

Every graded test names the TODO it exercises (``@pytest.mark.todo(n)``); a
check inside it may blame another TODO (``Mistake(..., todo=m)``) when the
symptom points there. The order below is what the diagnosis uses: a failure
in a TODO that others build on is fixed first, and the tests of the TODOs
built on it say so instead of giving their own hints.
"""
import re

from autograder.i18n import _

# module -> {todo: what it builds}
TODOS = {
    "amp_update": {
        1: _("unscale_gradients: restore the real gradient scale"),
        2: _("global_grad_norm: one global L2 norm, squares summed in FP32"),
        3: _("plan_mixed_precision_update: finite check, then norm and clipping"),
    },
    "loss_scaler": {
        4: _("update_scale: backoff on overflow, growth after growth_interval clean steps"),
        5: _("scale: multiply the loss by the scale as an FP32 tensor"),
        6: _("unscale_: unscale param.grad in place and record found_inf"),
        7: _("step: unscale if needed, then step or skip"),
        8: _("update: apply update_scale and start the next iteration"),
        9: _("state_dict: GradScaler's five keys"),
    },
    "amp_training_step": {
        10: _("validate precision and scaler, choose the autocast dtype"),
        11: _("microbatches: autocast forward, weighted loss, (scaled) backward"),
        12: _("boundary: unscale once, finite check, global norm, clip"),
        13: _("step or skip, scaler update, clear the gradients"),
    },
}

# todo -> the TODOs whose results it uses (direct only; see upstream())
BUILDS_ON = {
    3: (1, 2),
    7: (6,),
    8: (4, 6, 7),
    9: (4, 5, 6, 7, 8),
    11: (10,),
    12: (11,),
    13: (12,),
}


def module_of(todo):
    for module, table in TODOS.items():
        if todo in table:
            return module
    return None


def title(todo):
    return TODOS.get(module_of(todo), {}).get(todo)


def stub_todo(exception_type, message):
    """The TODO a stub's ``NotImplementedError('TODO n: ...')`` names (0 for any other
    exception, or a number that is no TODO of this assignment)."""
    found = re.match(r"\s*TODO\s+(\d+)\b", message or "") if exception_type == "NotImplementedError" else None
    return int(found.group(1)) if found and module_of(int(found.group(1))) else 0


def upstream(todo):
    """Every TODO ``todo`` builds on, directly or not."""
    seen, stack = set(), list(BUILDS_ON.get(todo, ()))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(BUILDS_ON.get(current, ()))
    return seen
