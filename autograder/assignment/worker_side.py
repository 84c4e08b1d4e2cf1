"""What a sandbox worker of this assignment needs (``WORKER_SIDE`` in the
description). The zygote imports it before any box is confined, so nothing
here may hold an expected value: it lives in the same memory as student code.

* ``SCENARIOS``: scenario name -> runner(student_module, spec);
* ``ANSWER_SHAPES``: scenario name -> the shape of its answer
  (:mod:`autograder.intake.answer_shapes`), or a function of the spec giving it;
  the judge reads them and holds every answer to its shape;
* ``GUARDS``: module -> a guard the worker installs before importing it. A
  guard has ``install()``, ``SEEN`` (what it refused, reported to the judge
  with every answer, empty or not: an answer of a guarded module without it is
  the box's protocol error)
  and ``source_files()`` (files the box's root shows empty), and may have
  ``prepare()``, which the zygote calls once after its imports.
"""
from autograder.assignment import scenarios
from autograder.assignment.hand_built import scaler_guard

SCENARIOS = scenarios.STUDENT_SCENARIOS
ANSWER_SHAPES = scenarios.ANSWER_SHAPES
GUARDS = {"loss_scaler": scaler_guard}
