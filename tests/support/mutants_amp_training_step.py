"""Single-mistake submissions of amp_training_step.py, each labelled with the TODO that holds
its mistake. A Mutant is (name, todo, replacements, must_fail): replacements are
(old, new) pairs applied exactly once to the reference solution; must_fail lists
test ids that must fail for it. todo None: the mistake is in code the stub gives
pre-written (it must still lose points, but no TODO holds it)."""
from support.helpers import Mutant, endless_loops

UNSCALE = '    if use_scaler:\n        scaler.unscale_(optimizer)\n'
BACKWARD = ('        if use_scaler:\n            scaler.scale(weighted_loss).backward()\n'
            '        else:\n            weighted_loss.backward()\n')
CLIP = '        grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))'
CLEAR = '    optimizer.zero_grad(set_to_none=True)\n    for param in parameters:\n        param.grad = None\n'
AUTOCAST = ('        with torch.autocast(device_type=device_type, dtype=autocast_dtype or torch.bfloat16,\n'
            '                            enabled=autocast_dtype is not None):\n')

CASES = [
    # -- TODO 10: validation and the autocast dtype
    Mutant('accepts_disabled_scaler', 10, [('    use_scaler = scaler is not None and scaler.is_enabled()', '    use_scaler = scaler is not None')],
           ['test_rejects_bad_precision_and_scaler']),
    Mutant('no_precision_check', 10, [('    if precision not in AUTOCAST_DTYPES:\n        raise ValueError(f"precision must be one of {sorted(AUTOCAST_DTYPES)}, got {precision!r}")\n', '')],
           ['test_rejects_bad_precision_and_scaler']),
    Mutant('precision_case_insensitive', 10, [('    if precision not in AUTOCAST_DTYPES:\n', '    precision = precision.lower()\n    if precision not in AUTOCAST_DTYPES:\n')],
           ['test_rejects_bad_precision_and_scaler']),
    Mutant('bf16_accepts_scaler', 10, [('    if precision != "fp16" and use_scaler:', '    if precision == "fp32" and use_scaler:')],
           ['test_rejects_bad_precision_and_scaler']),
    Mutant('fp16_autocasts_to_bf16', 10, [('    autocast_dtype = AUTOCAST_DTYPES[precision]', '    autocast_dtype = None if precision == "fp32" else torch.bfloat16')],
           ['test_autocast_dtype_per_precision']),
    # -- TODO 11: microbatches
    Mutant('zero_grad_inside_loop', 11, [('    for weight, batch in zip(weights, microbatches):\n', '    for weight, batch in zip(weights, microbatches):\n        optimizer.zero_grad(set_to_none=True)\n')],
           ['test_default_weights_are_equal', 'test_weighted_accumulation_fp32']),
    Mutant('ignores_weights', 11, [('        weighted_loss = loss * weight\n', '        weighted_loss = loss\n')],
           ['test_default_weights_are_equal', 'test_weighted_accumulation_fp32']),
    Mutant('backward_after_loop', 11, [(BACKWARD, BACKWARD.replace('\n    ', '\n').replace('        if', '    if', 1))],
           ['test_default_weights_are_equal', 'test_weighted_accumulation_fp32', 'test_scaled_backward_per_microbatch']),
    Mutant('divides_by_k_again', 11, [('        weighted_loss = loss * weight\n', '        weighted_loss = loss * weight / len(microbatches)\n')],
           ['test_default_weights_are_equal', 'test_weighted_accumulation_fp32']),
    Mutant('fp32_autocast_dtype_none', 11, [(AUTOCAST, '        with torch.autocast(device_type=device_type, dtype=autocast_dtype):\n')],
           ['test_fp32_forward_without_autocast']),
    Mutant('forward_without_autocast', 11, [(AUTOCAST + '            loss = loss_fn(model, batch)\n', '        loss = loss_fn(model, batch)\n')],
           ['test_autocast_dtype_per_precision']),
    Mutant('autocast_on_cuda', 11, [('        with torch.autocast(device_type=device_type,', '        with torch.autocast(device_type="cuda",')],
           ['test_autocast_dtype_per_precision']),
    Mutant('backward_not_scaled', 11, [('            scaler.scale(weighted_loss).backward()\n', '            weighted_loss.backward()\n')],
           ['test_scaled_backward_per_microbatch', 'test_clips_real_scale_gradients']),
    Mutant('scaled_loss_unweighted', 11, [('            scaler.scale(weighted_loss).backward()\n', '            scaler.scale(loss).backward()\n')],
           ['test_clips_real_scale_gradients', 'test_fp16_trajectory_with_overflow']),
    # -- TODO 12: the update boundary
    # unscale_ placed in the loop is TODO 11's mistake (the loop runs forward and backward only)
    Mutant('unscale_inside_loop', 11, [('            scaler.scale(weighted_loss).backward()\n', '            scaler.scale(weighted_loss).backward()\n            scaler.unscale_(optimizer)\n'), (UNSCALE, '')],
           ['test_unscale_once_at_the_boundary']),
    Mutant('clips_scaled_gradients', 12, [(UNSCALE + '    grads', '    grads')],
           ['test_clips_real_scale_gradients', 'test_unscale_once_at_the_boundary']),
    Mutant('grad_norm_after_clip', 12, [(CLIP, '        torch.nn.utils.clip_grad_norm_(parameters, max_norm)\n        grad_norm = float(torch.sqrt(sum((g.float() ** 2).sum() for g in grads)))')],
           ['test_clips_to_max_norm']),
    Mutant('no_clipping', 12, [(CLIP, '        grad_norm = float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])))')],
           ['test_clips_to_max_norm', 'test_clips_real_scale_gradients']),
    Mutant('finite_check_last_grad_only', 12, [('    finite = all(bool(torch.isfinite(grad).all()) for grad in grads)', '    finite = bool(torch.isfinite(grads[-1]).all())')],
           ['test_bf16_skips_non_finite_without_scaler']),
    # -- TODO 13: step or skip, scaler update, clear
    Mutant('bf16_never_skips', 13, [('    elif finite:\n        optimizer.step()\n', '    else:\n        optimizer.step()\n')],
           ['test_bf16_skips_non_finite_without_scaler']),
    Mutant('stepped_always_true', 13, [('    stepped = finite\n', '    stepped = True\n')],
           ['test_fp16_trajectory_with_overflow', 'test_bf16_skips_non_finite_without_scaler']),
    Mutant('no_scaler_update', 13, [('        scaler.update()\n', '')],
           ['test_fp16_overflow_skips', 'test_fp16_trajectory_with_overflow', 'test_step_and_update_once_per_call']),
    Mutant('update_before_step', 13, [('        scaler.step(optimizer)  # GradScaler skips by itself when it found inf/NaN\n        scaler.update()\n', '        scaler.update()\n        scaler.step(optimizer)\n')],
           ['test_fp16_trajectory_with_overflow']),
    Mutant('grads_left_behind', 13, [(CLEAR, '')],
           ['test_gradients_cleared_on_return']),
    Mutant('grads_zeroed_not_none', 13, [(CLEAR, '    optimizer.zero_grad(set_to_none=False)\n')],
           ['test_gradients_cleared_on_return']),
    Mutant('clears_before_step', 13, [('    if use_scaler:\n        scaler.step(optimizer)', '    optimizer.zero_grad(set_to_none=True)\n    if use_scaler:\n        scaler.step(optimizer)')],
           ['test_weighted_accumulation_fp32', 'test_fp16_trajectory_with_overflow']),
    # -- found by the honest-grades review: each must name its own TODO
    Mutant('unscale_in_loop_and_at_boundary', 11, [('            scaler.scale(weighted_loss).backward()\n', '            scaler.scale(weighted_loss).backward()\n            scaler.unscale_(optimizer)\n')],
           ['test_unscale_once_at_the_boundary', 'test_fp16_clips_after_unscaling']),
    Mutant('update_per_microbatch', 11, [('            scaler.scale(weighted_loss).backward()\n', '            scaler.scale(weighted_loss).backward()\n            scaler.update()\n'), ('        scaler.update()\n    elif', '    elif')],
           ['test_fp16_overflow_skips', 'test_step_and_update_once_per_call']),
    Mutant('max_norm_ignored', 12, [(CLIP, CLIP.replace('max_norm))', '1.0))'))],
           ['test_clips_to_max_norm', 'test_fp32_update_matches_plain_training']),
    Mutant('plain_mean_ignores_weights', 11, [('        weighted_loss = loss * weight\n', '        weighted_loss = loss / len(microbatches)\n')],
           ['test_weighted_accumulation_fp32', 'test_bf16_update_matches_reference']),
    # -- pre-written code (no TODO holds the mistake)
    Mutant('no_weight_checks', None, [('    weights = _check_weights(weights, len(microbatches))', '    weights = weights or [1.0 / len(microbatches)] * len(microbatches)')],
           ['test_rejects_bad_weights']),
    Mutant('always_bf16_autocast', None, [('AUTOCAST_DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}', 'AUTOCAST_DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.bfloat16}')],
           ['test_autocast_dtype_per_precision']),
    # -- issue 38: mistakes a student made in the exported template, and their neighbours --
    Mutant('accepts_scaler_any_precision', 10, [('    if precision != "fp16" and use_scaler:\n        raise ValueError(f"precision {precision!r} must run without a GradScaler")\n', '')],
           ['test_rejects_bad_precision_and_scaler', 'test_scaler_only_with_fp16']),
    Mutant('fp32_accepts_scaler', 10, [('    if precision != "fp16" and use_scaler:', '    if precision == "bf16" and use_scaler:')],
           ['test_rejects_bad_precision_and_scaler']),
    Mutant('bf16_autocasts_to_fp16', 10, [('    autocast_dtype = AUTOCAST_DTYPES[precision]', '    autocast_dtype = None if precision == "fp32" else torch.float16')],
           ['test_bf16_autocasts_the_forward']),
    Mutant('grad_norm_tensor', 12, [(CLIP, '        grad_norm = torch.nn.utils.clip_grad_norm_(parameters, max_norm)')],
           ['test_report_keys_and_types']),
    Mutant('grad_norm_nan_on_skip', 12, [('        grad_norm = math.inf\n', '        grad_norm = math.nan\n')],
           ['test_fp16_overflow_skips']),
    Mutant('finite_from_the_norm', 12, [('    finite = all(bool(torch.isfinite(grad).all()) for grad in grads)\n    if finite:\n'
                                         '        grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))\n'
                                         '    else:\n        grad_norm = math.inf\n',
                                         '    grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, max_norm))\n'
                                         '    finite = math.isfinite(grad_norm)\n')],
           ['test_bf16_skips_non_finite_without_scaler']),
    Mutant('clears_only_after_a_step', 13, [(CLEAR, '    if finite:\n        optimizer.zero_grad(set_to_none=True)\n')],
           ['test_gradients_cleared_on_return']),
    Mutant('update_only_after_a_step', 13, [('        scaler.update()\n', '        if finite:\n            scaler.update()\n')],
           ['test_fp16_overflow_skips']),
    # a wrong TODO 10 while TODO 11-13 are not written yet (a train_step that stops at a stub shows
    # nothing of the TODOs before it, except the checks that end it earlier)
    Mutant('accepts_scaler_any_precision_rest_unwritten', 10, [('    if precision != "fp16" and use_scaler:\n        raise ValueError(f"precision {precision!r} must run without a GradScaler")\n', '')],
           ['test_scaler_only_with_fp16'], unwritten=(11, 12, 13)),
    # -- issue 45: an endless loop in each TODO, diagnosed where it runs (the box's stack at the timeout)
    *endless_loops("amp_training_step", {10: ("loop_in_validation", "test_fp32_update_matches_plain_training"),
                                         11: ("loop_in_microbatches", "test_fp32_update_matches_plain_training"),
                                         12: ("loop_in_boundary", "test_fp32_update_matches_plain_training"),
                                         13: ("loop_in_step_or_skip", "test_fp32_update_matches_plain_training")}),
]
