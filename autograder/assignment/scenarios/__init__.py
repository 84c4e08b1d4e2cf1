"""Scenarios: small training runs built from a plain ``spec`` and a seed.

The same function runs twice: in the sandbox worker with the student's code
plugged in, and in the judge with the reference (the real
``torch.amp.GradScaler('cpu')``, or the hidden suite's Module 3 oracle). Both build
the identical model, data and optimizer from the spec, and both return only
plain data (tensors, numbers, lists, dicts), which the judge compares.

This module is the registry: ``STUDENT_SCENARIOS`` maps a scenario's name to
its runner in the worker, ``ANSWER_SHAPES`` to the shape of its answer (declared
next to each scenario), which the judge holds a box's answer to. The scenarios live in :mod:`autograder.assignment.scenarios.scaler`
(Module 2), :mod:`autograder.assignment.scenarios.training` (Module 3) and
:mod:`autograder.assignment.scenarios.update` (Module 1), their shared
building blocks in :mod:`autograder.assignment.scenarios.parts`; they are re-exported here so
the suites keep calling ``scenarios.<name>``.

This module is trusted grader code, but it must not hold expected values: the
worker imports it too. Importing it imports every scenario module, which the
zygote does before confinement (a confined worker cannot read grader files).
"""
from autograder.assignment.scenarios.parts import (CountingAdam, CountingSGD, build_batches, build_model,
                                                   build_optimizer, exception_names, generator,
                                                   optimizer_state, parameters_of)
from autograder.assignment.scenarios import scaler as _scaler, training as _training, update as _update
from autograder.assignment.scenarios.scaler import (PROBE_STATE, ScalerStopped, scaler_fresh_state,
                                                    scaler_misuse, scaler_scale_loss,
                                                    scaler_state_round_trip, scaler_step_arguments,
                                                    scaler_training, scaler_unscale, shape_t)
from autograder.assignment.scenarios.training import training_step_errors, training_steps
from autograder.assignment.scenarios.update import unscale_aliasing

# The names the suites, the judge and the worker use as ``scenarios.<name>``.
__all__ = ["ANSWER_SHAPES", "PROBE_STATE", "STUDENT_SCENARIOS", "CountingAdam", "CountingSGD", "ScalerStopped",
           "build_batches", "build_model", "build_optimizer", "exception_names", "generator",
           "optimizer_state", "parameters_of", "scaler_fresh_state", "scaler_misuse",
           "scaler_scale_loss", "scaler_state_round_trip", "scaler_step_arguments", "scaler_training",
           "scaler_unscale", "shape_t", "training_step_errors", "training_steps", "unscale_aliasing"]

LOSS_SCALER, TRAINING_STEP = "loss_scaler", "amp_training_step"


def _update_runner(function):
    return lambda module, spec: function(module.unscale_gradients, spec)


def _scaler_runner(function):
    return lambda module, spec: function(module.LossScaler, spec)


def _training_runner(function):
    return lambda module, spec: function(module.train_step, spec)


# name -> runner(student_module, spec), used by the worker
STUDENT_SCENARIOS = {
    "scaler_training": _scaler_runner(scaler_training),
    "scaler_scale_loss": _scaler_runner(scaler_scale_loss),
    "scaler_unscale": _scaler_runner(scaler_unscale),
    "scaler_misuse": _scaler_runner(scaler_misuse),
    "scaler_state_round_trip": _scaler_runner(scaler_state_round_trip),
    "scaler_fresh_state": _scaler_runner(scaler_fresh_state),
    "scaler_step_arguments": _scaler_runner(scaler_step_arguments),
    "training_steps": _training_runner(training_steps),
    "training_step_errors": _training_runner(training_step_errors),
    "unscale_aliasing": _update_runner(unscale_aliasing),
}

# name -> the shape of its answer, or a function of the spec giving it: the judge holds every
# answer of a box to it before a check reads it (autograder.intake.answer_shapes)
ANSWER_SHAPES = {
    "scaler_training": _scaler.scaler_training_answer,
    "scaler_scale_loss": _scaler.SCALER_SCALE_LOSS_ANSWER,
    "scaler_unscale": _scaler.SCALER_UNSCALE_ANSWER,
    "scaler_misuse": _scaler.scaler_misuse_answer,
    "scaler_state_round_trip": _scaler.scaler_state_round_trip_answer,
    "scaler_fresh_state": _scaler.scaler_fresh_state_answer,
    "scaler_step_arguments": _scaler.scaler_step_arguments_answer,
    "training_steps": _training.training_steps_answer,
    "training_step_errors": _training.training_step_errors_answer,
    "unscale_aliasing": _update.UNSCALE_ALIASING_ANSWER,
}
