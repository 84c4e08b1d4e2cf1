"""Correct implementations written unlike the reference keep full marks, seed after seed."""

import pytest
from support.helpers import ROOT, mutate

# The slow tier (docs/maintaining.md): each variant is graded at several seeds.
pytestmark = pytest.mark.slow

VARIANTS = ROOT / "tests" / "variants"
CASES = [("amp_update", "amp_update_foreach.py"), ("amp_update", "amp_update_float64.py"),
         ("loss_scaler", "loss_scaler_tensor.py"), ("amp_training_step", "amp_training_step_alt.py"),
         # written like real frameworks' code (a class named DynamicGradScaler quoting GradScaler's messages, a
         # norm-gated training loop, norm helpers): the grader judges behaviour, never style or names
         ("amp_update", "amp_update_norm_helpers.py"), ("loss_scaler", "loss_scaler_dynamic_class.py"),
         ("amp_training_step", "amp_training_step_norm_gate.py"),
         # every element visited in a Python loop: slow, inside every limit (tests/engine/judging/test_endless_loops.py)
         ("amp_update", "amp_update_element_loops.py")]
REFERENCE_STEP = ('    if use_scaler:\n        scaler.step(optimizer)  # GradScaler skips by itself when it found inf/NaN\n'
                  '        scaler.update()\n    elif finite:\n        optimizer.step()\n')
# The contract says "then step or skip, then the scaler update": both of these are as right as the reference.
STEP_OR_SKIP = {
    # checks finiteness itself and calls scaler.step only on a finite update
    "explicit_skip": '    if finite:\n        if use_scaler:\n            scaler.step(optimizer)\n        else:\n'
                     '            optimizer.step()\n    if use_scaler:\n        scaler.update()\n',
    # never calls scaler.step: after unscale_ and its own finite check it steps the optimizer directly
    "direct_step": '    if finite:\n        optimizer.step()\n    if use_scaler:\n        scaler.update()\n',
}


@pytest.mark.parametrize("module, variant", CASES, ids=[c[1][:-3] for c in CASES])
@pytest.mark.parametrize("seed", [3, 1017, 99991])
def test_variant_gets_full_marks(grade_dir, module, variant, seed):
    report = grade_dir({module: (VARIANTS / variant).read_text(encoding="utf-8")}, seed=seed)
    failed = [f"{t.test_id}: {t.output}" for t in report.tests if not t.passed]
    assert not failed, "\n".join(failed)
    assert report.score == report.max_score == 100


# unscale_ element by element in Python, each value divided in float64 and stored back: slow, inside every limit
ELEMENT_UNSCALE = (
    "        inv_scale = 1.0 / self._scale\n        found_inf = False\n        for grad in grads:\n"
    "            grad.mul_(inv_scale)\n            if not bool(torch.isfinite(grad).all()):\n"
    "                found_inf = True\n",
    "        found_inf = False\n        for grad in grads:\n"
    "            for index in itertools.product(*(range(size) for size in grad.shape)):\n"
    "                value = grad[index].item() / self._scale\n                grad[index] = value\n"
    "                found_inf = found_inf or not math.isfinite(value)\n")


@pytest.mark.parametrize("seed", [3, 1017, 99991])
def test_an_element_by_element_unscale_gets_full_marks(grade_dir, seed):
    source = mutate("loss_scaler", ELEMENT_UNSCALE, ("import math\n", "import itertools\nimport math\n"))
    report = grade_dir({"loss_scaler": source}, seed=seed)
    failed = [f"{t.test_id}: {t.output}" for t in report.tests if not t.passed]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("style", sorted(STEP_OR_SKIP))
@pytest.mark.parametrize("seed", [5, 2027])
def test_step_or_skip_styles_get_full_marks(grade_dir, style, seed):
    report = grade_dir({"amp_training_step": mutate("amp_training_step", (REFERENCE_STEP, STEP_OR_SKIP[style]))},
                       seed=seed)
    failed = [f"{t.test_id}: {t.output}" for t in report.tests if not t.passed]
    assert not failed, "\n".join(failed)
