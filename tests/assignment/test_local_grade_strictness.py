"""The local grade is at least as strict as the public tests: every known mistake that
`pytest exercises/tests` catches also costs points in a grade without hidden tests (what a
student's exported template runs), so the local grade never says "full marks" where the
public tests fail."""
import os
import subprocess
import sys

from support import mutants_amp_training_step
from support import mutants_amp_update
from support import mutants_loss_scaler
import pytest
from support.helpers import ROOT, make_submission

CASES = ([("amp_update", case) for case in mutants_amp_update.CASES]
         + [("loss_scaler", case) for case in mutants_loss_scaler.CASES]
         + [("amp_training_step", case) for case in mutants_amp_training_step.CASES])


def public_tests_fail(folder, module):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           str(ROOT / "exercises" / "tests" / f"test_{module}.py")],
                          cwd=ROOT, env=dict(os.environ, AMP_EXERCISES_DIR=str(folder)), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode == 1


@pytest.mark.slow
@pytest.mark.parametrize("module, case", CASES, ids=[case.name for _module, case in CASES])
def test_what_the_public_tests_catch_the_local_grade_catches(grade_dir, tmp_path, module, case):
    source = case.source(module)
    if not public_tests_fail(make_submission(tmp_path / "exercises", {module: source}), module):
        return  # nothing to match: the public tests are the smaller set
    report = grade_dir({module: source}, seed=5, include_hidden=False, modules=[module])
    score, total = report.by_module()[module]
    assert score < total, f"{case.name}: the public tests fail, yet the local grade gives {score}/{total}"
