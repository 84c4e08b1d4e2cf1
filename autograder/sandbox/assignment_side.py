"""The active assignment's worker side (its scenarios, the shapes of their
answers and per-module guards), imported once by the zygote, before confinement,
and read by the worker and the box's confinement; the judge reads the shapes and
which modules have a guard."""
import functools

from autograder import active_assignment


def _module():
    return _module_of(active_assignment.package_name())


@functools.cache
def _module_of(package):  # per package, as current() is: one process may grade two assignments
    assignment = active_assignment.load(package)
    return assignment.resolve(assignment.worker_side)


def declared():
    """Import the worker side without preparing its guards (the judge reads only
    the answers' shapes and which modules have a guard)."""
    return _module()


def load():
    """Import everything now (the zygote does, while grader files can still be read),
    and let each guard prepare what all its workers would otherwise each look up."""
    module = _module()
    for guard_module in (getattr(module, "GUARDS", {}) if module is not None else {}).values():
        if hasattr(guard_module, "prepare"):
            guard_module.prepare()


def scenario(name):
    module = _module()
    return getattr(module, "SCENARIOS", {})[name] if module is not None else None


def answer_shape(name, spec):
    """The shape the answer of scenario ``name`` run on ``spec`` must have
    (:mod:`autograder.intake.answer_shapes`; None where none is declared)."""
    module = _module()
    shape = getattr(module, "ANSWER_SHAPES", {}).get(name) if module is not None else None
    return shape(spec) if callable(shape) else shape


def guard(module_name):
    """The guard the worker of ``module_name`` installs (None for most modules)."""
    module = _module()
    return getattr(module, "GUARDS", {}).get(module_name) if module is not None else None
