"""The active assignment's worker side (its scenarios, the shapes of their
answers and per-module guards), imported once by the zygote, before confinement,
and read by the worker and the box's confinement; the judge reads the shapes and
which modules have a guard, and reruns a scenario without the student's code to
see whether a failure the box reports is the grader's own (:func:`scenario_failures`)."""
import copy
import functools

from autograder import active_assignment, locations


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


def grader_roots():
    """The folders of the grader's own code: the engine and the active assignment."""
    return (locations.PACKAGE_DIR, active_assignment.current().folder)


class NotReached(Exception):
    """A scenario run without the student's code reached the place where it would run."""


class _StandIn:
    """A student module whose every name, called, raises :class:`NotReached`: a scenario
    run with it goes through the trusted code before and after the student's calls (a
    scenario that records a call's exception and goes on, goes on)."""

    def __getattr__(self, name):
        def absent(*args, **kwargs):
            raise NotReached(name)
        return absent


def scenario_failures(name, spec, module_name):
    """What the trusted scenario ``name`` raises on ``spec`` in this process without any
    student's code: run with a stand-in, then with the assignment's reference of
    ``module_name`` where its grade hooks name one (``reference_module``). A list of
    ``(type name, where, message)``; run by the judge, where nothing of a student's runs."""
    module = _module()
    runner = getattr(module, "SCENARIOS", {}).get(name) if module is not None else None
    hooks = active_assignment.current().hooks()
    reference = getattr(hooks, "reference_module", None)
    candidates = [_StandIn()] + [module for module in [reference(module_name) if reference else None] if module]
    failures = []
    for candidate in candidates if runner is not None else ():
        try:
            runner(candidate, copy.deepcopy(spec))
        except NotReached:
            continue
        except Exception as exc:  # noqa: BLE001 - the failure looked for
            failures.append((type(exc).__name__, locations.grader_frame(exc, grader_roots()), str(exc)))
    return failures
