"""Mixed Precision Backward, declared: what the engine needs to know to grade it.

Data only (the engine reads it through :mod:`autograder.active_assignment`):
the three student modules in report order, their TODOs and how they build on
each other, the points only the hidden suites hold, and the dotted names of the
parts that are code (relative names resolve inside this package).

Every graded test names the TODO it exercises (``@pytest.mark.todo(n)``); a
check inside it may blame another TODO (``Mistake(..., todo=m)``) when the
symptom points there. ``BUILDS_ON`` is what the diagnosis uses: a failure in a
TODO that others build on is fixed first, and the tests of the TODOs built on
it say so instead of giving their own hints.
"""
from autograder.authoring import REPO_ROOT, _

TITLE = _("Mixed Precision Backward")

MODULES = ("amp_update", "loss_scaler", "amp_training_step")
MODULE_LABELS = {"amp_update": "Module 1", "loss_scaler": "Module 2", "amp_training_step": "Module 3"}

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

# todo -> the TODOs whose results it uses (direct only)
BUILDS_ON = {
    3: (1, 2),
    7: (6,),
    8: (4, 6, 7),
    9: (4, 5, 6, 7, 8),
    11: (10,),
    12: (11,),
    13: (12,),
}

# todo -> the function (qualified name) whose body holds it in the stub: where the student's
# code of a line is, when its comments are gone (a loop's place at a timeout names its TODO).
# tests/assignment/test_stubs_and_public_tests.py checks it against the stubs.
TODO_FUNCTIONS = {
    1: "unscale_gradients", 2: "global_grad_norm", 3: "plan_mixed_precision_update",
    4: "update_scale", 5: "LossScaler.scale", 6: "LossScaler.unscale_", 7: "LossScaler.step",
    8: "LossScaler.update", 9: "LossScaler.state_dict",
    10: "train_step", 11: "train_step", 12: "train_step", 13: "train_step",
}

# The student template ships without hidden/, so a local grade cannot count
# these: this table lets it say, per module, how much was not run there.
# tests/assignment/test_assignment_points.py collects the hidden suites and fails on drift.
HIDDEN_POINTS = {
    "amp_update": 21,
    "loss_scaler": 20,
    "amp_training_step": 23,
}

# The results tag of the optional credit (the GPU lab, the chapter's Step 5).
OPTIONAL_MODULE = "gpu_lab"

# Where the student stubs and the reference live (the repository's contract folders).
EXERCISES_DIR = REPO_ROOT / "exercises"
SOLUTIONS_DIR = REPO_ROOT / "solutions"
STUDENT_README = REPO_ROOT / ".github" / "template" / "README.md"

# Imported by the sandbox's zygote before confinement: the scenarios a worker
# runs and the guard a module's worker installs (Module 2 is built by hand).
WORKER_SIDE = ".worker_side"
# pytest plugins the suites use besides the engine's fixtures.
SUITE_PLUGINS = (".hand_built.fixtures",)
# After the suites: the built-by-hand verdicts and the lab's optional credit.
GRADE_HOOKS = ".grade_hooks"
# Subcommands only this chapter has: python -m autograder <name>.
COMMANDS = {
    "check-lab": ".lab.cli",
    "conformance": ".conformance.cli",
}
# What the student template holds besides the engine, the exercises and the
# assignment's visible suites (the GPU lab, with its staff files left out).
TEMPLATE_PARTS = ".lab.template_part"
# Files outside this package that its grader reads, relative to the repository's
# root: the GPU lab's record layout, defined once beside the lab (which must not
# import the grader) and read by check-lab. Every export of the grader ships them.
GRADER_FILES = ("gpu_lab/amp_lab_layout.py",)

# Similarity (autograder/similarity/): per module, the least matching code a flagged pair
# must share (filtered characters) and what to know when reading its pairs. The thresholds
# are calibrated (tools/calibrate_similarity.py writes similarity_calibration.json).
SIMILARITY = {
    "amp_update": {"min_overlap": 120, "why": _(
        "Three one-line TODOs that the stub's comments all but dictate: little of a file is the student's own "
        "choice, so read a flagged pair together with its other modules.")},
    "loss_scaler": {"min_overlap": 100, "why": _(
        "Six TODOs inside a given class. The stub's comments dictate much of TODO 5 and TODO 6; independent "
        "solutions write those lines alike, and that is not counted.")},
    "amp_training_step": {"min_overlap": 100, "why": _(
        "Four TODOs wiring autocast, backward, unscale, clip and step: the calls are fixed by the assignment, "
        "their arrangement is not.")},
}
# A module whose reference solution everyone can read: copying it is no evidence, so it
# is left out of every comparison and never compared with the students' files.
SIMILARITY_PUBLIC_REFERENCE = {
    "amp_update": _("The chapter prints this module's reference code (Step 4, 参考代码与解析): a student may "
                    "copy it from there, so closeness to it is no evidence."),
}
# A module also compared with a file of an installed package: the student's
# scaler against torch's own (names do not matter to the fingerprints).
SIMILARITY_FRAMEWORK = {
    "module": "loss_scaler", "package": "torch", "file": "amp/grad_scaler.py", "label": "GradScaler",
    "threshold": 0.60, "min_overlap": 150,
    "why": _("Share of the student's loss_scaler.py found in torch/amp/grad_scaler.py of the installed torch (names, "
             "layout and order do not matter). Hand-written scalers follow the same contract but share little code "
             "with it; tools/calibrate_similarity.py prints how close the honest set and the reference come."),
}
