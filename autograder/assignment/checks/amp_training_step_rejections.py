"""TODO 10's rejections, for the visible and the hidden amp_training_step suites alike: invalid
calls of train_step (scenarios.training_step_errors) must raise ValueError before the first
forward, leaving the parameters untouched."""
from autograder.assignment.checks.amp_training_step_crashes import FILE
from autograder.authoring import _, StudentCodeFailed, expect, raised_instead, raised_is

CASES = {
    "unknown_precision": _("precision 'fp8'"),
    "unknown_precision (BF16)": _("precision 'BF16' (precisions are lower-case)"),
    "fp16_without_scaler": _("precision 'fp16' without a scaler"),
    "fp16_disabled_scaler": _("precision 'fp16' with a disabled GradScaler (scaler.is_enabled() is False)"),
    "fp32_with_scaler": _("precision 'fp32' with an enabled GradScaler"),
    "bf16_with_scaler": _("precision 'bf16' with an enabled GradScaler"),
    "weights_wrong_length": _("three weights for two microbatches"),
    "weights_negative": _("a negative weight"),
    "weights_not_summing_to_one": _("weights summing to 0.75"),
}


def run_errors(student, spec):
    outcome = student.scenario("training_step_errors", spec)
    if not outcome.ok:
        raise StudentCodeFailed(outcome.error, FILE)
    return outcome.value


def check_rejections(got):
    for case, outcome in got.items():
        expect(raised_is(outcome["raised"], "ValueError"),
               _("{case}: expected ValueError, but {outcome}.", case=CASES[case],
                 outcome=raised_instead(outcome["raised"])))
        expect(outcome["unchanged"] and outcome["step_calls"] == 0,
               _("{case}: the parameters changed (or optimizer.step ran) before the error was raised: "
                 "check the arguments before the first forward.", case=CASES[case]))
