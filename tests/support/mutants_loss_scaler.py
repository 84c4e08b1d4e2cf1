"""Single-mistake submissions of loss_scaler.py, each labelled with the TODO that holds
its mistake. A Mutant is (name, todo, replacements, must_fail): replacements are
(old, new) pairs applied exactly once to the reference solution; must_fail lists
test ids that must fail for it. todo None: the mistake is in code the stub gives
pre-written (it must still lose points, but no TODO holds it).

They are the mistakes students make: an off-by-one or a misplaced check in the
growth rule, a Python-float or FP32-cast scale, a found_inf that misses NaN or
forgets earlier tensors, a first-param-group-only unscale, a step() that drops
its arguments or return value or ignores an explicit unscale_'s found_inf, an
update() with the default options or without the tracker, a state_dict() with
a wrong key or type."""
from support.helpers import LOOP_LIMITS, Mutant, endless_loops

_RULE = ("    if found_inf:\n        return float(scale * backoff_factor), 0\n"
         "    growth_tracker = growth_tracker + 1\n    if growth_tracker == growth_interval:\n"
         "        grown = scale * growth_factor\n        if math.isfinite(grown):\n            scale = grown\n"
         "        growth_tracker = 0\n")
_GROWTH_FIRST = ("    growth_tracker = growth_tracker + 1\n    if growth_tracker == growth_interval:\n"
                 "        grown = scale * growth_factor\n        if math.isfinite(grown):\n            scale = grown\n"
                 "        growth_tracker = 0\n"
                 "    if found_inf:\n        return float(scale * backoff_factor), 0\n")
_STEP = ('        if state["stage"] == _READY:\n            self.unscale_(optimizer)\n'
         '        state["stage"] = _STEPPED\n        if state["found_inf"]:\n            return None\n')
_STATE_DICT = ('        return {\n            "scale": self.get_scale(),\n            "growth_factor": self._growth_factor,\n'
               '            "backoff_factor": self._backoff_factor,\n            "growth_interval": self._growth_interval,\n'
               '            "_growth_tracker": self._growth_tracker,\n        }\n')

CASES = [
    # -- TODO 4: update_scale
    Mutant('growth_off_by_one', 4, [('if growth_tracker == growth_interval:', 'if growth_tracker > growth_interval:')],
           ['test_update_scale_growth_interval']),
    Mutant('growth_check_ge', 4, [('if growth_tracker == growth_interval:', 'if growth_tracker >= growth_interval:')],
           ['test_update_scale_matches_gradscaler_rule']),
    Mutant('grows_every_step', 4, [('if growth_tracker == growth_interval:', 'if growth_tracker:')],
           ['test_update_scale_growth_interval', 'test_update_scale_sequence']),
    Mutant('tracker_kept_on_backoff', 4, [('return float(scale * backoff_factor), 0', 'return float(scale * backoff_factor), growth_tracker')],
           ['test_update_scale_backoff_resets_tracker']),
    Mutant('hardcoded_backoff', 4, [('return float(scale * backoff_factor), 0', 'return float(scale * 0.5), 0')],
           ['test_update_scale_backoff_resets_tracker', 'test_update_scale_matches_gradscaler_rule']),
    Mutant('inf_checked_after_growth', 4, [(_RULE, _GROWTH_FIRST)],
           ['test_update_scale_matches_gradscaler_rule']),
    Mutant('grows_to_inf', 4, [('if math.isfinite(grown):\n            scale = grown', 'scale = grown')],
           ['test_update_scale_never_grows_to_inf']),
    Mutant('finite_check_in_fp32', 4, [('if math.isfinite(grown):', 'if bool(torch.isfinite(torch.tensor(grown))):')],
           ['test_update_scale_never_grows_to_inf']),
    # -- TODO 5: scale
    Mutant('python_float_scale', 5, [('return loss * torch.tensor(self._scale, dtype=torch.float32, device=loss.device)', 'return loss * self._scale')],
           ['test_scale_promotes_like_gradscaler']),
    Mutant('scale_casts_loss_to_fp32', 5, [('return loss * torch.tensor(', 'return loss.float() * torch.tensor(')],
           ['test_scale_promotes_like_gradscaler']),
    Mutant('scale_detached', 5, [('return loss * torch.tensor(', 'return loss.detach() * torch.tensor(')],
           ['test_scale_promotes_like_gradscaler', 'test_matches_gradscaler_sgd']),
    Mutant('scale_in_place', 5, [('return loss * torch.tensor(self._scale, dtype=torch.float32, device=loss.device)',
                                  'return loss.mul_(torch.tensor(self._scale, dtype=torch.float32, device=loss.device))')],
           ['test_scale_promotes_like_gradscaler', 'test_matches_gradscaler_sgd']),
    # -- TODO 6: unscale_
    Mutant('nan_not_detected', 6, [('if not bool(torch.isfinite(grad).all()):', 'if bool(torch.isinf(grad).any()):')],
           ['test_unscale_in_place_and_found_inf', 'test_matches_gradscaler_sgd']),
    Mutant('isfinite_any', 6, [('if not bool(torch.isfinite(grad).all()):', 'if not bool(torch.isfinite(grad).any()):')],
           ['test_unscale_in_place_and_found_inf']),
    Mutant('found_inf_last_grad_only', 6, [('            if not bool(torch.isfinite(grad).all()):\n                found_inf = True',
                                            '            found_inf = not bool(torch.isfinite(grad).all())')],
           ['test_unscale_in_place_and_found_inf', 'test_matches_gradscaler_sgd']),
    Mutant('unscale_multiplies', 6, [('grad.mul_(inv_scale)', 'grad.mul_(self._scale)')],
           ['test_unscale_in_place_and_found_inf']),
    Mutant('first_param_group_only', 6, [('        for grad in grads:\n            grad.mul_(inv_scale)',
                                          ('        for grad in [p.grad for p in optimizer.param_groups[0]["params"] if p.grad is not None]:\n'
                                          '            grad.mul_(inv_scale)'))],
           ['test_unscale_every_param_group']),
    Mutant('unscale_replaces_grads', 6, [('        for grad in grads:\n            grad.mul_(inv_scale)', "        for group in optimizer.param_groups:\n            for p in group['params']:\n                if p.grad is not None:\n                    p.grad = p.grad * inv_scale\n        grads = [p.grad for g in optimizer.param_groups for p in g['params'] if p.grad is not None]\n        for grad in grads:\n            pass")],
           ['test_unscale_in_place_and_found_inf']),
    # -- TODO 7: step
    Mutant('step_unscales_again', 7, [('        if state["stage"] == _READY:\n            self.unscale_(optimizer)', '        state["stage"] = _READY\n        self.unscale_(optimizer)')],
           ['test_matches_gradscaler_adam_with_clipping']),
    Mutant('never_skips', 7, [('        if state["found_inf"]:\n            return None\n', '')],
           ['test_matches_gradscaler_sgd', 'test_skip_on_inf_matches_gradscaler']),
    Mutant('step_drops_return_value', 7, [('return optimizer.step(*args, **kwargs)', 'optimizer.step(*args, **kwargs)')],
           ['test_step_passes_arguments_and_returns_value']),
    Mutant('step_drops_arguments', 7, [('return optimizer.step(*args, **kwargs)', 'return optimizer.step()')],
           ['test_step_passes_arguments_and_returns_value']),
    Mutant('step_drops_kwargs', 7, [('return optimizer.step(*args, **kwargs)', 'return optimizer.step(*args)')],
           ['test_step_passes_arguments_and_returns_value']),
    Mutant('skip_without_marking_stepped', 7, [('        state["stage"] = _STEPPED\n        if state["found_inf"]:\n            return None\n',
                                                '        if state["found_inf"]:\n            return None\n        state["stage"] = _STEPPED\n')],
           ['test_unscale_and_step_once_per_iteration']),
    Mutant('explicit_unscale_skip_ignored', 7, [(_STEP, ('        if state["stage"] == _READY:\n            self.unscale_(optimizer)\n'
                                                        '            if state["found_inf"]:\n                state["stage"] = _STEPPED\n'
                                                        '                return None\n        state["stage"] = _STEPPED\n'))],
           ['test_unscale_in_place_and_found_inf', 'test_matches_gradscaler_adam_with_clipping']),
    Mutant('step_backs_off_itself', 7, [('        if state["found_inf"]:\n            return None\n',
                                         ('        if state["found_inf"]:\n            self._scale *= self._backoff_factor\n'
                                         '            return None\n'))],
           ['test_matches_gradscaler_sgd']),
    # -- TODO 8: update
    Mutant('update_default_factors', 8, [(('self._scale, self._growth_tracker, found_inf, self._growth_factor,\n'
                                          '            self._backoff_factor, self._growth_interval)'),
                                          'self._scale, self._growth_tracker, found_inf)')],
           ['test_matches_gradscaler_sgd']),
    Mutant('update_drops_tracker', 8, [('        self._scale, self._growth_tracker = update_scale(', '        self._scale, _ = update_scale(')],
           ['test_matches_gradscaler_sgd']),
    Mutant('update_keeps_iteration_state', 8, [('        self._per_optimizer.clear()\n', '')],
           ['test_matches_gradscaler_sgd']),
    Mutant('update_ignores_unstepped', 8, [('found_inf = any(state["found_inf"] for state in recorded)',
                                            'found_inf = any(state["found_inf"] for state in recorded if state["stage"] == _STEPPED)')],
           ['test_matches_gradscaler_sgd']),
    Mutant('update_swapped_factors', 8, [('self._growth_factor,\n            self._backoff_factor,',
                                          'self._backoff_factor,\n            self._growth_factor,')],
           ['test_matches_gradscaler_sgd']),
    # -- TODO 9: state_dict
    Mutant('state_dict_without_tracker', 9, [('            "_growth_tracker": self._growth_tracker,\n', '')],
           ['test_state_dict_round_trip']),
    Mutant('state_dict_tracker_key_typo', 9, [('"_growth_tracker": self._growth_tracker,', '"growth_tracker": self._growth_tracker,')],
           ['test_state_dict_round_trip', 'test_fresh_state_dict_matches_gradscaler']),
    Mutant('state_dict_is_vars', 9, [(_STATE_DICT, '        return dict(vars(self))\n')],
           ['test_state_dict_round_trip', 'test_fresh_state_dict_matches_gradscaler']),
    Mutant('state_dict_interval_float', 9, [('"growth_interval": self._growth_interval,', '"growth_interval": float(self._growth_interval),')],
           ['test_fresh_state_dict_matches_gradscaler']),
    # -- pre-written code (no TODO holds the mistake)
    Mutant('double_unscale_allowed', None, [('        if state["stage"] == _UNSCALED:\n            raise RuntimeError(', '        if False:\n            raise RuntimeError(')],
           ['test_unscale_and_step_once_per_iteration']),
    Mutant('fp16_accepted', None, [('        if any(grad.dtype == torch.float16 for grad in grads):\n', '        if False:\n')],
           ['test_gradient_dtypes']),
    Mutant('update_without_step_allowed', None, [('        if not recorded:\n            raise RuntimeError(', '        if False:\n            raise RuntimeError(')],
           ['test_update_needs_a_step']),
    Mutant('update_scale_grows_on_multiples', 4, [('    if growth_tracker == growth_interval:', '    if growth_tracker % growth_interval == 0:')],
           ['test_update_scale_matches_gradscaler_rule']),
    Mutant('step_never_unscales', 7, [('        if state["stage"] == _READY:\n            self.unscale_(optimizer)\n', '')],
           ['test_skip_on_inf_matches_gradscaler', 'test_one_unscale_per_iteration']),
    Mutant('class_grows_at_or_past_interval', 8, [('        self._scale, self._growth_tracker = update_scale(\n            self._scale, self._growth_tracker, found_inf, self._growth_factor,\n            self._backoff_factor, self._growth_interval)\n',
            '        if not found_inf and self._growth_tracker + 1 >= self._growth_interval:\n            self._scale, self._growth_tracker = self._scale * self._growth_factor, 0\n        else:\n            self._scale, self._growth_tracker = update_scale(\n                self._scale, self._growth_tracker, found_inf, self._growth_factor,\n                self._backoff_factor, self._growth_interval)\n')],
           ['test_loaded_tracker_past_interval_never_grows']),
    Mutant('init_ignores_interval', None, [('self._growth_interval = int(growth_interval)', 'self._growth_interval = 2000')],
           ['test_fresh_state_dict_matches_gradscaler']),
    Mutant('load_ignores_tracker', None, [('self._growth_tracker = int(state_dict["_growth_tracker"])', 'self._growth_tracker = 0')],
           ['test_state_dict_round_trip', 'test_load_gradscaler_state_mid_run']),
    # -- issue 38: mistakes a student made in the exported template, and their neighbours --
    # rebinding the loop variable leaves param.grad scaled: TODO 6, not TODO 7
    Mutant('unscale_rebinds_local', 6, [('grad.mul_(inv_scale)', 'grad = grad * inv_scale')],
           ['test_unscale_in_place_and_found_inf', 'test_unscale_in_place']),
    # the inverse computed once: right until the scale changes
    Mutant('unscale_stale_inverse', 6, [('        inv_scale = 1.0 / self._scale\n',
                                         '        if not hasattr(self, "_inv_scale"):\n            self._inv_scale = 1.0 / self._scale\n'
                                         '        inv_scale = self._inv_scale\n')],
           ['test_matches_gradscaler_sgd', 'test_unscale_after_the_scale_changed']),
    Mutant('unscale_fp32_only', 6, [('            grad.mul_(inv_scale)\n', '            if grad.dtype == torch.float32:\n                grad.mul_(inv_scale)\n')],
           ['test_gradient_dtypes']),
    Mutant('found_inf_never_set', 6, [('                found_inf = True', '                found_inf = False')],
           ['test_skip_on_inf_matches_gradscaler']),
    Mutant('step_not_marked', 7, [('        state["stage"] = _STEPPED\n', '')],
           ['test_unscale_and_step_once_per_iteration']),
    Mutant('skip_returns_false', 7, [('        if state["found_inf"]:\n            return None\n', '        if state["found_inf"]:\n            return False\n')],
           ['test_skip_on_inf_matches_gradscaler']),
    Mutant('update_ignores_found_inf', 8, [('found_inf = any(state["found_inf"] for state in recorded)', 'found_inf = False')],
           ['test_skip_on_inf_matches_gradscaler']),
    Mutant('tracker_not_reset_after_growth', 4, [('            scale = grown\n        growth_tracker = 0\n', '            scale = grown\n')],
           ['test_update_scale_sequence']),
    Mutant('growth_one_step_early', 4, [('if growth_tracker == growth_interval:', 'if growth_tracker + 1 >= growth_interval:')],
           ['test_update_scale_sequence']),
    Mutant('backoff_counts_a_step', 4, [('return float(scale * backoff_factor), 0', 'return float(scale * backoff_factor), growth_tracker + 1')],
           ['test_update_scale_backoff_resets_tracker']),
    Mutant('scale_in_loss_dtype', 5, [('return loss * torch.tensor(self._scale, dtype=torch.float32, device=loss.device)', 'return loss * torch.tensor(self._scale, dtype=loss.dtype, device=loss.device)')],
           ['test_scale_keeps_fp16_loss_finite']),
    Mutant('scale_in_float64', 5, [('dtype=torch.float32, device=loss.device)', 'dtype=torch.float64, device=loss.device)')],
           ['test_scale_promotes_like_gradscaler']),
    Mutant('state_dict_tracker_zero', 9, [('"_growth_tracker": self._growth_tracker,', '"_growth_tracker": 0,')],
           ['test_state_dict_round_trip']),
    # a wrong TODO 6 while TODO 7-9 are not written yet
    Mutant('unscale_rebinds_local_rest_unwritten', 6, [('grad.mul_(inv_scale)', 'grad = grad * inv_scale')],
           ['test_unscale_in_place'], unwritten=(7, 8, 9)),
    Mutant('tracker_kept_rest_unwritten', 4, [('return float(scale * backoff_factor), 0', 'return float(scale * backoff_factor), growth_tracker')],
           ['test_update_scale_backoff_resets_tracker'], unwritten=(5, 6, 7, 8, 9)),
    # -- issue 45: an endless loop in each TODO, diagnosed where it runs (the box's stack at the timeout);
    # the walkthrough's loop in update() with a budget for several calls: each later call meets the loop
    # with the short limit, and none of them is evidence against its own test's TODO
    *endless_loops("loss_scaler", {4: ("loop_in_update_scale", "test_update_scale_sequence"),
                                   5: ("loop_in_scale", "test_skip_on_inf_matches_gradscaler"),
                                   6: ("loop_in_unscale_", "test_skip_on_inf_matches_gradscaler"),
                                   7: ("loop_in_step", "test_skip_on_inf_matches_gradscaler"),
                                   9: ("loop_in_state_dict", "test_skip_on_inf_matches_gradscaler")}),
    *endless_loops("loss_scaler", {8: ("loop_in_update", "test_matches_gradscaler_sgd")}, limits=LOOP_LIMITS),
    # the walkthrough's second unscale: step() calls unscale_ after the explicit one, and the given
    # code's rule (once per iteration) raises in unscale_: the call in step (TODO 7) broke it
    Mutant('step_unscales_twice', 7, [('        if state["stage"] == _READY:\n            self.unscale_(optimizer)\n',
                                       '        self.unscale_(optimizer)\n')],
           ['test_unscale_every_param_group', 'test_step_after_explicit_unscale_uses_its_found_inf'], as_written=True),
]
