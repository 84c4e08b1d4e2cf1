"""Module 2's built-by-hand verdicts, applied after the suites ran: what the
worker's guard saw, and signs in the source of undoing that guard.

Both zero every loss_scaler test with a message saying why; signs the static
check cannot settle become TA flags instead.
"""
from autograder.assignment.hand_built import static_checks
from autograder.authoring import _

MODULE = "loss_scaler"


def delegation_message(what):
    return _("loss_scaler.py used PyTorch's own scaler machinery while it was graded ({what}). Module 2 must "
             "be built by hand (no torch.amp.GradScaler or subclass of it, no torch.cuda.amp/torch.cpu.amp "
             "scalers, no torch._amp_* operators, however they are reached), so it earns no points until "
             "that is removed.", what=what)


def apply_delegation_verdict(results, delegation):
    """Module 2 earns nothing once the worker saw it reach for torch's scaler."""
    if not delegation:
        return results
    message = delegation_message(", ".join(delegation[:3]))
    for test in results:
        if test.module == MODULE and test.max_score:
            test.score, test.passed = 0.0, False
            test.detail, test.error, test.hint, test.blamed = message, None, None, 0
    return results


def apply_review_verdict(results, source, flags):
    """Module 2 is held at 0 pending review where its source shows signs of undoing the
    runtime guard; those and the lookups the static check cannot read become TA flags."""
    signs = static_checks.review_signs(source)
    flags += static_checks.ta_flags(source)
    if not signs or static_checks.find_delegation(source):  # a certain use says more than a sign
        return results
    message = _("loss_scaler.py line {line} uses {what}, which can switch off the grader's check that Module 2 is "
                "built by hand. "
                "Module 2 is held at 0 until the course staff have reviewed it; a scaler built by hand needs "
                "none of this, so remove it or tell the staff why it is there.",
                line=signs[0].line, what=signs[0].what)
    for test in results:
        if test.module == MODULE and test.max_score:
            test.score, test.passed = 0.0, False
            test.detail, test.error, test.hint, test.blamed = message, None, None, 0
    return results


