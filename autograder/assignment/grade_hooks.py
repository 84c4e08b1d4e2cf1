"""What the engine asks this assignment (``GRADE_HOOKS`` in the description): after its
suites ran, the built-by-hand verdicts on Module 2 and the optional GPU-lab credit; while
they run, a reference for each module to rerun a scenario with where the box says the
scenario's own code failed (:func:`reference_module`)."""
import types

from autograder.assignment.hand_built import verdicts

_REFERENCES = {}


def preload():
    """Imported before any student code runs, like the rest of the judge."""
    import autograder.assignment.hand_built.static_checks  # noqa: F401
    import autograder.assignment.lab.credit  # noqa: F401
    from autograder.assignment.checks import references
    from autograder.assignment.checks.amp_update_checks import unscaled_reference

    _REFERENCES.update(amp_update=types.SimpleNamespace(unscale_gradients=unscaled_reference),
                       loss_scaler=types.SimpleNamespace(LossScaler=references.gradscaler))
    try:  # the hidden suite's oracle, where it is installed (not in a student's repository)
        from autograder.assignment.hidden import oracle_train_step
    except ImportError:
        return
    _REFERENCES["amp_training_step"] = types.SimpleNamespace(train_step=oracle_train_step.with_mistakes())


def reference_module(module):
    """A stand-in for the student's ``module`` built from the references (None where there is
    none here): the engine reruns a scenario with it, without any student's code, to see
    whether the scenario's own code fails (autograder.sandbox.assignment_side.scenario_failures)."""
    return _REFERENCES.get(module)


def after_suites(results, sources, guard_reports, flags, modules=None):
    if not modules or verdicts.MODULE in modules:
        verdicts.apply_review_verdict(results, sources[verdicts.MODULE], flags)
    # what the worker saw says most: applied last
    verdicts.apply_delegation_verdict(results, guard_reports.get(verdicts.MODULE))
    return results


def optional_credit(submission_dir, lang):
    from autograder.assignment.lab import credit

    return credit.lab_results(submission_dir, lang=lang)
