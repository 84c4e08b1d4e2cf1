"""The local grade is at least as strict as the public tests: every known mistake that
`pytest exercises/tests` catches also costs points in a grade without hidden tests (what a
student's exported template runs), so the local grade never says "full marks" where the
public tests fail."""
from support import mutants_amp_training_step
from support import mutants_amp_update
from support import mutants_loss_scaler
import pytest
from support.helpers import ROOT, make_submission, public_tests_run
from support.forked_runs import pytest_exit_codes

LOOP_PUBLIC_TIMEOUT_S = 1  # a loop fails at any limit; a correct public test takes a fraction of it

CASES = ([("amp_update", case) for case in mutants_amp_update.CASES]
         + [("loss_scaler", case) for case in mutants_loss_scaler.CASES]
         + [("amp_training_step", case) for case in mutants_amp_training_step.CASES])


@pytest.fixture(scope="module")
def public_verdicts(request, tmp_path_factory):
    """case name -> (exit code, output, seconds) of the public tests on that mutant, for the cases this
    session runs: each run as a fresh `python -m pytest` would make it, all in one interpreter
    start (tests/support/forked_runs.py)."""
    wanted = {item.callspec.params["case"].name for item in request.session.items
              if getattr(item, "module", None) is request.module and hasattr(item, "callspec")}
    base = tmp_path_factory.mktemp("public")
    chosen = [(module, case) for module, case in CASES if case.name in wanted]
    # an endless loop fails its public test at any limit: a short one, not the student's 20 s
    runs = [public_tests_run(make_submission(base / case.name / "exercises", {module: case.source(module)}),
                             "-x", ROOT / "exercises" / "tests" / f"test_{module}.py",
                             timeout_s=LOOP_PUBLIC_TIMEOUT_S if case.limits else None)
            for module, case in chosen]
    return {case.name: result for (_module, case), result in zip(chosen, pytest_exit_codes(runs))}


@pytest.mark.slow
@pytest.mark.parametrize("module, case", CASES, ids=[case.name for _module, case in CASES])
def test_what_the_public_tests_catch_the_local_grade_catches(grade_dir, public_verdicts, module, case):
    code, output, _seconds = public_verdicts[case.name]
    assert code in (0, 1), output
    assert code == 1 or not case.limits, f"{case.name}: its endless loop passes the public tests\n{output}"
    if code == 0:
        return  # nothing to match: the public tests are the smaller set
    source = case.source(module)
    # a loop is graded under its mutant's small limits (test_mutants.py does the same)
    report = grade_dir({module: source}, seed=5, include_hidden=False, modules=[module],
                       limits=case.sandbox_limits())
    score, total = report.by_module()[module]
    assert score < total, f"{case.name}: the public tests fail, yet the local grade gives {score}/{total}"
