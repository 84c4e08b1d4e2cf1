"""Known-wrong implementations: each must lose points on the test that names its
mistake, only on its own module, and the same points whatever the run's seed.
The anchors are exact solution lines, so a mutant can never silently turn into
the solution."""
import pytest

from helpers import mutate, scores

AMP_UPDATE = [
    ("unscale_in_place", [("gradient / scale for gradient in scaled_gradients]",
                           "gradient.div_(scale) for gradient in scaled_gradients]")],
     {"test_unscale_leaves_inputs_untouched"}),
    ("unscale_wrong_direction", [("gradient / scale for gradient in scaled_gradients]",
                                  "gradient * scale for gradient in scaled_gradients]")],
     {"test_unscale_values_every_dtype", "test_unscale_without_mutation"}),
    ("unscale_drops_none", [("gradients = [None if gradient is None else gradient / scale for gradient in "
                             "scaled_gradients]",
                             "gradients = [g / scale for g in scaled_gradients if g is not None]")],
     {"test_unscale_keeps_none_in_place"}),
    ("unscale_via_float32", [("gradient / scale for gradient in scaled_gradients]",
                              "(gradient.float() / scale) for gradient in scaled_gradients]")],
     {"test_unscale_values_every_dtype", "test_unscale_keeps_none_in_place"}),
    ("norm_per_tensor_max", [("squared_sum = squared_sum + gradient.float().square().sum()",
                              "squared_sum = torch.maximum(squared_sum, gradient.float().square().sum())")],
     {"test_global_norm_is_global", "test_global_norm_across_parameters"}),
    ("norm_squares_in_low_precision", [("squared_sum = squared_sum + gradient.float().square().sum()",
                                        "squared_sum = squared_sum + gradient.square().sum().float()")],
     {"test_global_norm_fp16_squares_in_fp32", "test_global_norm_bf16_accumulates_in_fp32"}),
    ("finite_check_nan_only", [("bool(torch.isfinite(gradient).all())", "not bool(torch.isnan(gradient).any())")],
     {"test_plan_catches_every_non_finite_value"}),
    ("finite_check_inf_only", [("bool(torch.isfinite(gradient).all())", "not bool(torch.isinf(gradient).any())")],
     {"test_plan_catches_every_non_finite_value"}),
    ("finite_check_first_tensor_only", [
        ("finite = all(gradient is None or bool(torch.isfinite(gradient).all()) for gradient in gradients)",
         "finite = next((bool(torch.isfinite(g).all()) for g in gradients if g is not None), True)")],
     {"test_plan_catches_every_non_finite_value"}),
    ("finite_check_on_scaled", [
        ("finite = all(gradient is None or bool(torch.isfinite(gradient).all()) for gradient in gradients)",
         "finite = all(g is None or bool(torch.isfinite(g).all()) for g in scaled_gradients)")],
     {"test_plan_checks_unscaled_gradients"}),
    ("clip_without_min", [("coefficient = min(1.0, max_norm / (float(grad_norm) + 1e-12))",
                           "coefficient = max_norm / (float(grad_norm) + 1e-12)")],
     {"test_plan_does_not_clip_below_threshold"}),
    ("clip_inverted", [("coefficient = min(1.0, max_norm / (float(grad_norm) + 1e-12))",
                        "coefficient = min(1.0, float(grad_norm) / max_norm)")],
     {"test_plan_clips_with_the_right_coefficient", "test_finite_update_and_clipping"}),
    ("no_backoff", [("'next_scale': scale * backoff_factor", "'next_scale': scale")],
     {"test_plan_skip_result", "test_overflow_skips_update"}),
    ("wrong_reason", [("'reason': 'non_finite_gradient'", "'reason': 'overflow'")],
     {"test_overflow_skips_update"}),
    ("no_scale_check", [('    if scale <= 0:\n        raise ValueError("scale must be positive")\n', "")],
     {"test_unscale_rejects_non_positive_scale", "test_plan_rejects_invalid_arguments"}),
    ("clip_before_finite_check", [
        ("    if not finite:\n        return {\n            'gradients': gradients,",
         "    _c = min(1.0, max_norm / (float(global_grad_norm(gradients)) + 1e-12))\n"
         "    gradients = [None if g is None else g * _c for g in gradients]\n"
         "    if not finite:\n        return {\n            'gradients': gradients,")],
     {"test_plan_skip_result"}),
    ("should_step_tensor", [("'should_step': True,", "'should_step': torch.tensor(True),")],
     {"test_plan_value_types", "test_finite_update_and_clipping"}),
]

LOSS_SCALER = [
    ("growth_off_by_one", [("if growth_tracker == growth_interval:", "if growth_tracker > growth_interval:")],
     {"test_update_scale_growth_interval"}),
    ("tracker_kept_on_backoff", [("return float(scale * backoff_factor), 0",
                                  "return float(scale * backoff_factor), growth_tracker")],
     {"test_update_scale_backoff_resets_tracker"}),
    ("grows_to_inf", [("if math.isfinite(grown):\n            scale = grown", "scale = grown")],
     {"test_update_scale_never_grows_to_inf"}),
    ("python_float_scale", [("return loss * torch.tensor(self._scale, dtype=torch.float32, device=loss.device)",
                             "return loss * self._scale")],
     {"test_scale_promotes_like_gradscaler"}),
    ("double_unscale_allowed", [("        if state[\"stage\"] == _UNSCALED:\n            raise RuntimeError(",
                                 "        if False:\n            raise RuntimeError(")],
     {"test_unscale_and_step_once_per_iteration"}),
    ("step_unscales_again", [("        if state[\"stage\"] == _READY:\n            self.unscale_(optimizer)",
                              "        state[\"stage\"] = _READY\n            ; self.unscale_(optimizer)"
                              .replace("\n            ;", "\n       "))],
     {"test_matches_gradscaler_adam_with_clipping"}),
    ("never_skips", [("        if state[\"found_inf\"]:\n            return None\n", "")],
     {"test_matches_gradscaler_sgd", "test_skip_on_inf_matches_gradscaler"}),
    ("nan_not_detected", [("if not bool(torch.isfinite(grad).all()):", "if bool(torch.isinf(grad).any()):")],
     {"test_unscale_in_place_and_found_inf"}),
    ("unscale_replaces_grads", [("        for grad in grads:\n            grad.mul_(inv_scale)",
                                 "        for group in optimizer.param_groups:\n"
                                 "            for p in group['params']:\n"
                                 "                if p.grad is not None:\n"
                                 "                    p.grad = p.grad * inv_scale\n"
                                 "        grads = [p.grad for g in optimizer.param_groups for p in g['params'] "
                                 "if p.grad is not None]\n"
                                 "        for grad in grads:\n            pass")],
     {"test_unscale_in_place_and_found_inf"}),
    ("fp16_accepted", [("        if any(grad.dtype == torch.float16 for grad in grads):\n", "        if False:\n")],
     {"test_gradient_dtypes"}),
    ("state_dict_without_tracker", [("            \"_growth_tracker\": self._growth_tracker,\n", "")],
     {"test_state_dict_round_trip"}),
]

TRAINING = [
    ("unscale_inside_loop", [("            scaler.scale(weighted_loss).backward()\n",
                              "            scaler.scale(weighted_loss).backward()\n"
                              "            scaler.unscale_(optimizer)\n"),
                             ("    if use_scaler:\n        scaler.unscale_(optimizer)\n", "")],
     {"test_scaler_calls_at_the_boundary_only"}),
    ("zero_grad_inside_loop", [("    for weight, batch in zip(weights, microbatches):\n",
                                "    for weight, batch in zip(weights, microbatches):\n"
                                "        optimizer.zero_grad(set_to_none=True)\n")],
     {"test_weighted_accumulation_fp32", "test_default_weights_are_equal"}),
    ("ignores_weights", [("        weighted_loss = loss * weight\n", "        weighted_loss = loss\n")],
     {"test_weighted_accumulation_fp32", "test_default_weights_are_equal"}),
    ("clips_scaled_gradients", [("    if use_scaler:\n        scaler.unscale_(optimizer)\n    grads",
                                 "    grads"),
                                ("    if finite:\n        grad_norm = float(",
                                 "    if finite:\n        grad_norm = (float(scaler.get_scale()) if use_scaler else 1.0)"
                                 " and float(")],
     {"test_clips_real_scale_gradients"}),
    ("bf16_never_skips", [("    elif finite:\n        optimizer.step()\n", "    else:\n        optimizer.step()\n")],
     {"test_bf16_skips_non_finite_without_scaler"}),
    ("always_bf16_autocast", [('AUTOCAST_DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}',
                               'AUTOCAST_DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.bfloat16}')],
     {"test_autocast_dtype_in_forward"}),
    ("grads_left_behind", [("    optimizer.zero_grad(set_to_none=True)\n    for param in parameters:\n"
                            "        param.grad = None\n", "")],
     {"test_gradients_cleared_on_return"}),
    ("no_scaler_update", [("        scaler.update()\n", "")],
     {"test_fp16_trajectory_with_overflow", "test_fp16_overflow_skips"}),
    ("accepts_disabled_scaler", [("    use_scaler = scaler is not None and scaler.is_enabled()",
                                  "    use_scaler = scaler is not None")],
     {"test_rejects_bad_precision_and_scaler"}),
    ("no_weight_checks", [("    weights = _check_weights(weights, len(microbatches))",
                           "    weights = weights or [1.0 / len(microbatches)] * len(microbatches)")],
     {"test_rejects_bad_weights"}),
    ("grad_norm_after_clip", [("        grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))",
                               "        torch.nn.utils.clip_grad_norm_(parameters, max_norm)\n"
                               "        grad_norm = float(torch.sqrt(sum((p.grad.float() ** 2).sum() for p in grads)))")],
     {"test_clips_real_scale_gradients"}),
]

CASES = ([("amp_update",) + case for case in AMP_UPDATE] + [("loss_scaler",) + case for case in LOSS_SCALER]
         + [("amp_training_step",) + case for case in TRAINING])


@pytest.mark.parametrize("module, name, replacements, must_fail", CASES, ids=[c[1] for c in CASES])
def test_mutant_loses_points_on_its_test(grade_dir, module, name, replacements, must_fail):
    source = mutate(module, *replacements)
    compile(source, f"{name}.py", "exec")  # a mutant must be a real program, not a syntax error
    report = grade_dir({module: source}, seed=4242)
    by_module, failed = scores(report)
    # The verdict is the implementation's, not the seed's: grade-many and a
    # single grade (each with its own seed) must give the same total.
    assert scores(grade_dir({module: source}, seed=77))[1] == failed, f"{name}: the failed tests depend on the seed"
    assert any(t.passed for t in report.tests if t.module == module), f"{name} fails everything: not a mutant"
    missing = must_fail - failed
    assert not missing, f"{name}: expected these tests to fail: {sorted(missing)}; failed: {sorted(failed)}"
    for other in ("amp_update", "loss_scaler", "amp_training_step"):
        if other != module:
            assert by_module[other] == report.by_module()[other][1], f"{name} cost points in {other}"
    assert by_module[module] < report.by_module()[module][1]


@pytest.mark.parametrize("delegation", [
    "        return torch.amp.GradScaler('cpu')\n",
    "        from torch.cuda.amp import GradScaler\n        return GradScaler()\n",
    "        return torch._amp_update_scale_\n",
])
def test_delegating_scaler_earns_nothing(grade_dir, delegation):
    """Module 2 built on GradScaler (even in an unused helper) loses every loss_scaler point, says why,
    and costs nothing elsewhere."""
    source = mutate("loss_scaler", ("    def update(self):\n",
                                    "    def _helper(self):\n" + delegation + "\n    def update(self):\n"))
    report = grade_dir({"loss_scaler": source}, seed=7)
    tests = [t for t in report.tests if t.module == "loss_scaler"]
    assert tests and not any(t.passed for t in tests)
    assert all("built by hand" in t.output for t in tests)
    assert report.score == report.max_score - sum(t.max_score for t in tests)


def test_runtime_delegation_is_refused(grade_dir):
    """Hiding the name from the static check does not help: GradScaler is unusable in the worker."""
    source = mutate("loss_scaler", ("    def update(self):\n",
                                    "    def make_reference(self):\n"
                                    "        return getattr(torch.amp, 'Grad' + 'Scaler')('cpu')\n\n"
                                    "    def update(self):\n"),
                    ("        found_inf = any(state[\"found_inf\"] for state in recorded)\n",
                     "        found_inf = any(state[\"found_inf\"] for state in recorded)\n"
                     "        self.make_reference()\n"))
    report = grade_dir({"loss_scaler": source}, seed=8)
    failed = [t for t in report.tests if t.module == "loss_scaler" and not t.passed]
    assert any("built by hand" in t.output for t in failed)
