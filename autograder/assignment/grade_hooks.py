"""What the engine asks this assignment after its suites ran (``GRADE_HOOKS``
in the description): the built-by-hand verdicts on Module 2 and the optional
GPU-lab credit."""
from autograder.assignment.hand_built import verdicts


def preload():
    """Imported before any student code runs, like the rest of the judge."""
    import autograder.assignment.hand_built.static_checks  # noqa: F401
    import autograder.assignment.lab.credit  # noqa: F401


def after_suites(results, sources, guard_reports, flags, modules=None):
    if not modules or verdicts.MODULE in modules:
        verdicts.apply_review_verdict(results, sources[verdicts.MODULE], flags)
    # what the worker saw says most: applied last
    verdicts.apply_delegation_verdict(results, guard_reports.get(verdicts.MODULE))
    return results


def optional_credit(submission_dir, lang):
    from autograder.assignment.lab import credit

    return credit.lab_results(submission_dir, lang=lang)
