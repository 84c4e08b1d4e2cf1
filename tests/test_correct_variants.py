"""Correct implementations written unlike the reference keep full marks, seed after seed."""
import pathlib

import pytest

VARIANTS = pathlib.Path(__file__).parent / "variants"
CASES = [("amp_update", "amp_update_foreach.py"), ("amp_update", "amp_update_float64.py"),
         ("loss_scaler", "loss_scaler_tensor.py"), ("amp_training_step", "amp_training_step_alt.py")]


@pytest.mark.parametrize("module, variant", CASES, ids=[c[1][:-3] for c in CASES])
@pytest.mark.parametrize("seed", [3, 1017, 99991])
def test_variant_gets_full_marks(grade_dir, module, variant, seed):
    report = grade_dir({module: (VARIANTS / variant).read_text(encoding="utf-8")}, seed=seed)
    failed = [f"{t.test_id}: {t.output}" for t in report.tests if not t.passed]
    assert not failed, "\n".join(failed)
    assert report.score == report.max_score == 100
