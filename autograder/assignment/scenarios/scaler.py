"""Module 2 scenarios: a scaler under test (the student's ``LossScaler`` in the
worker, ``torch.amp.GradScaler('cpu')`` in the judge) driving a training loop,
scaling a loss, unscaling hand-made gradients, being misused, saving and loading
its state, forwarding step() arguments. Each returns plain data for the judge.

Trusted grader code without expected values: the sandbox worker imports it
(through :mod:`autograder.assignment.scenarios`). After each scenario, the shape
of its answer (``*_ANSWER``, or ``*_answer(spec)`` where it depends on the spec),
which the judge holds a box's answer to before any check reads it.
"""
import math
import os
import traceback

import torch
import torch.nn.functional as F

from autograder.assignment.scenarios.parts import (NAMES, OPTIMIZER_STATE, PLAIN, PLAIN_STATE, STOPPED, TENSORS,
                                                   CountingSGD, _plain, _plain_state, _poison, build_batches,
                                                   build_model, build_optimizer, exception_names,
                                                   generator, optimizer_state, parameters_of, until_stopped)
from autograder.authoring import ANY, BOOL, FLOAT, INT, ListOf, MapOf, Record, Tensor, maybe


# A scaler under test that raises does not end a Module 2 scenario with a bare
# error: the scenario stops and reports which call raised at which iteration
# (plain data), so that the judge can name the method at fault. A stub's
# NotImplementedError still propagates: the grader names the unwritten TODO.
class ScalerStopped(Exception):
    def __init__(self, call, iteration, exc):
        super().__init__(call)
        self.record = {"call": call, "iteration": iteration, "raised": exception_names(exc),
                       "line": _student_line(exc)}


def _student_line(exc):
    """[line, source text] of the deepest loss_scaler.py frame of ``exc`` ([0, ''] if none)."""
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
              if os.path.basename(frame.filename) == "loss_scaler.py"]
    return [frames[-1].lineno or 0, (frames[-1].line or "")[:200]] if frames else [0, ""]


def _guarded(call, iteration, function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except NotImplementedError:
        raise
    except Exception as exc:  # reported as plain data, judged by the test
        raise ScalerStopped(call, iteration, exc) from None



def _tracker(scaler):
    """state_dict()['_growth_tracker'] as an int, None when state_dict fails (TODO 9 is
    judged by its own tests, not by every training run)."""
    try:
        return int(scaler.state_dict()["_growth_tracker"])
    except Exception:
        return None


# A state loaded into a fresh scaler to see whether state_dict() reports what it holds.
PROBE_STATE = {"scale": 48.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 7,
               "_growth_tracker": 5}


def _echo(make_scaler, options):
    try:
        probe = make_scaler(**options)
        probe.load_state_dict(dict(PROBE_STATE))
        return _plain_state(probe.state_dict())
    except Exception:
        return None


def _scaled_ratio(scaled, loss):
    try:
        return float(scaled.detach().double()) / float(loss.detach().double())
    except Exception:  # not a one-element tensor: judged by scale()'s own test
        return None


def scaler_training(make_scaler, spec):
    """PyTorch's ``_run_scaling_case`` idea: iterate, inject inf/NaN at chosen
    iterations, and record per iteration what a judge needs to say which method
    went wrong first: the scale before, between step and update, and after
    update; what scale() multiplied by; step()'s return value; the gradients
    the optimizer saw; the growth tracker. ``make_scaler(**options)`` builds the
    scaler under test; the judge passes ``GradScaler('cpu', ...)``.

    Spec: seed, iterations, optimizer, lr, scaler (options), inject
    ({iteration: 'inf'|'-inf'|'nan'}), inject_param, inject_index,
    explicit_unscale, clip, autocast ('fp16'), no_step (iterations that call
    unscale_ and update but not step), load_state (loaded before the run).
    ``calls``: optimizer.step's call count after each iteration."""
    model = build_model(spec["seed"])
    optimizer = build_optimizer(spec.get("optimizer", "sgd"), model.parameters(), spec.get("lr", 0.1))
    batches = build_batches(spec["seed"], spec["iterations"])
    inject = {int(key): value for key, value in spec.get("inject", {}).items()}
    no_step = {int(iteration) for iteration in spec.get("no_step", ())}
    autocast_fp16 = spec.get("autocast") == "fp16"
    explicit = bool(spec.get("explicit_unscale") or spec.get("clip"))
    run = {"scales": [], "step_returns": [], "calls": [], "scales_before": [], "scales_between": [],
           "scaled_ratio": [], "trackers": [], "seen_grads": [], "stopped": None}
    scaler = None
    try:
        scaler = _guarded("__init__", -1, make_scaler, **spec["scaler"])
        if spec.get("load_state"):
            _guarded("load_state_dict", -1, scaler.load_state_dict, dict(spec["load_state"]))
        for iteration, (inputs, targets) in enumerate(batches):
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.float16, enabled=autocast_fp16):
                loss = F.mse_loss(model(inputs).float(), targets)
            run["scales_before"].append(_plain(_guarded("get_scale", iteration, scaler.get_scale)))
            scaled = _guarded("scale", iteration, scaler.scale, loss)
            run["scaled_ratio"].append(_scaled_ratio(scaled, loss))
            _guarded("scale", iteration, scaled.backward)
            if iteration in inject:
                params = list(model.parameters())
                target = params[spec.get("inject_param", 0) % len(params)]
                with torch.no_grad():
                    target.grad.view(-1)[spec.get("inject_index", 0) % target.grad.numel()] = \
                        _poison(inject[iteration])
            if explicit or iteration in no_step:
                _guarded("unscale_", iteration, scaler.unscale_, optimizer)
            if spec.get("clip"):
                torch.nn.utils.clip_grad_norm_(model.parameters(), spec["clip"])
            if iteration in no_step:
                run["step_returns"].append("not called")
            else:
                run["step_returns"].append(_plain(_guarded("step", iteration, scaler.step, optimizer)))
            run["calls"].append(optimizer.step_calls)
            run["seen_grads"].append([None if p.grad is None else p.grad.detach().clone()
                                      for p in model.parameters()])
            run["scales_between"].append(_plain(_guarded("get_scale", iteration, scaler.get_scale)))
            _guarded("update", iteration, scaler.update)
            run["scales"].append(_plain(_guarded("get_scale", iteration, scaler.get_scale)))
            run["trackers"].append(_tracker(scaler))
    except ScalerStopped as stop:
        run["stopped"] = stop.record
    run.update(step_calls=optimizer.step_calls, parameters=parameters_of(model),
               optimizer_state=optimizer_state(optimizer),
               growth_tracker=None if scaler is None else _tracker(scaler),
               echo=_echo(make_scaler, spec["scaler"]))
    return run


def scaler_training_answer(spec):
    count = spec["iterations"]
    lists = {"scales": PLAIN, "step_returns": PLAIN, "calls": INT, "scales_before": PLAIN, "scales_between": PLAIN,
             "scaled_ratio": maybe(FLOAT), "trackers": maybe(INT), "seen_grads": ListOf(maybe(Tensor()))}
    return until_stopped(Record(dict(
        {key: ListOf(item, max_length=count) for key, item in lists.items()}, stopped=maybe(STOPPED),
        step_calls=INT, parameters=TENSORS, optimizer_state=OPTIMIZER_STATE, growth_tracker=maybe(INT),
        echo=maybe(PLAIN_STATE))), lists, count)


def _unravel(flat_index, shape):
    """``torch.unravel_index`` in plain Python (C order): torch's checks its argument with
    ``torch._check``, whose first use imports its symbolic-shape machinery (sympy, ~0.5 s)."""
    index = []
    for size in reversed(shape):
        flat_index, rest = divmod(flat_index, size)
        index.append(rest)
    return tuple(reversed(index))


def scaler_scale_loss(make_scaler, spec):
    """``scale(loss)`` for a loss of a given dtype and shape; with ``backward``
    the loss is a leaf and the gradient reaching it through the scaled loss is
    returned too."""
    scaler = make_scaler(**spec["scaler"])
    loss = torch.full(spec["shape"], spec["value"], dtype=getattr(torch, spec["dtype"]),
                      requires_grad=bool(spec.get("backward")))
    scaled = scaler.scale(loss)
    result = {"scaled": scaled.detach() if torch.is_tensor(scaled) else scaled,
              "loss_after": loss.detach().clone(), "input_grad": None, "backward_error": None}
    if spec.get("backward") and torch.is_tensor(scaled):
        try:
            # sum() instead of backward(ones): the same gradient, and no explicit gradient, whose
            # first use makes torch import its symbolic-shape machinery (sympy, ~0.5 s) in every box
            scaled.sum().backward()
            result["input_grad"] = None if loss.grad is None else loss.grad.detach().clone()
        except RuntimeError as exc:  # e.g. a scaled loss cut off from the graph
            result["backward_error"] = exception_names(exc)
    return result


SCALER_SCALE_LOSS_ANSWER = Record({"scaled": ANY, "loss_after": Tensor(), "input_grad": maybe(Tensor()),
                                   "backward_error": maybe(NAMES)})


def _first_scale(scaler):
    """GradScaler initialises its scale lazily in its first scale(); a scaler
    under test need not, and a scale() not written yet is judged elsewhere."""
    try:
        scaler.scale(torch.ones(()))
    except Exception:
        pass


def scaler_unscale(make_scaler, spec):
    """Unscale hand-made gradients in place: some None, one transposed
    (non-contiguous), maybe one poisoned element, maybe two param groups; then
    step once and update (when update works) to see whether found_inf was
    recorded -- unless ``unscale_only``: then unscale_ alone is judged, whether
    step() is written yet or not."""
    gen = generator(spec["seed"])
    scale = spec["scaler"]["init_scale"]
    shapes = [(3, 4), (5,), (4, 3), (2, 2)]
    params = [torch.nn.Parameter(torch.randn(shape, generator=gen, dtype=getattr(torch, spec["dtype"])))
              for shape in shapes]
    for index, param in enumerate(params):
        if index == 3:
            continue  # this parameter has no gradient
        grad = torch.randn(shape_t(param.shape, index), generator=gen, dtype=param.dtype) * scale
        param.grad = grad.t() if index == 2 else grad  # index 2: a non-contiguous view
    if spec.get("poison"):
        target = params[spec["poison_param"]].grad
        flat_index = spec["poison_index"] % target.numel()
        target[_unravel(flat_index, target.shape)] = _poison(spec["poison"])
    grads_before = [None if p.grad is None else p.grad for p in params]
    if spec.get("groups"):  # parameters 2 and 3 in a second group
        optimizer = CountingSGD([{"params": params[:2]}, {"params": params[2:], "lr": 0.25}], lr=0.5,
                                foreach=False)
    else:
        optimizer = build_optimizer("sgd", params, 0.5)
    scaler = make_scaler(**spec["scaler"])
    _first_scale(scaler)
    scaler.unscale_(optimizer)
    same_objects = all(p.grad is before for p, before in zip(params, grads_before))
    grads = [None if p.grad is None else p.grad.detach().clone() for p in params]
    if spec.get("unscale_only"):
        return {"grads": grads, "same_objects": same_objects, "step_calls": 0, "step_result": None,
                "scale_after_update": None, "parameters": [p.detach().clone() for p in params]}
    step_result = scaler.step(optimizer)
    try:
        scaler.update()
        scale_after_update = _plain(scaler.get_scale())
    except Exception:  # update() is judged by its own tests
        scale_after_update = None
    return {"grads": grads, "same_objects": same_objects, "step_calls": optimizer.step_calls,
            "step_result": _plain(step_result), "scale_after_update": scale_after_update,
            "parameters": [p.detach().clone() for p in params]}


SCALER_UNSCALE_ANSWER = Record({"grads": ListOf(maybe(Tensor())), "same_objects": BOOL, "step_calls": INT,
                                "step_result": PLAIN, "scale_after_update": PLAIN, "parameters": TENSORS})


def shape_t(shape, index):
    """Shape of the gradient to create; index 2 is transposed afterwards."""
    return tuple(reversed(shape)) if index == 2 else tuple(shape)


def scaler_misuse(make_scaler, spec):
    """Each case runs in a fresh scaler at scale 8 with gradients 16 (inf for the
    ``*_skip*`` cases); returns the exception (class names) or None, the
    gradient afterwards and the scale afterwards."""
    outcomes = {}
    for case in spec["cases"]:
        dtype = {"fp16_gradients": torch.float16, "bf16_gradients": torch.bfloat16,
                 "fp64_gradients": torch.float64}.get(case, torch.float32)
        param = torch.nn.Parameter(torch.ones(4, dtype=dtype))
        optimizer = build_optimizer("sgd", [param], 0.1)
        scaler = make_scaler(init_scale=8.0, growth_interval=1000)
        _first_scale(scaler)
        param.grad = torch.full((4,), 16.0, dtype=dtype)
        if "skip" in case:
            param.grad[1] = math.inf
        raised = None
        try:
            if case == "double_unscale":
                scaler.unscale_(optimizer)
                scaler.unscale_(optimizer)
            elif case in ("unscale_after_step", "unscale_after_skipped_step"):
                scaler.step(optimizer)
                scaler.unscale_(optimizer)
            elif case in ("double_step", "double_step_after_skip"):
                scaler.step(optimizer)
                scaler.step(optimizer)
            elif case == "update_without_step":
                scaler.update()
            elif case == "update_after_skipped_step":
                scaler.step(optimizer)
                scaler.update()
            else:
                scaler.unscale_(optimizer)
        except NotImplementedError:
            raise
        except Exception as exc:  # the point of the case
            raised = exc
        grad_after = param.grad.detach().clone()
        try:
            scale_after = _plain(scaler.get_scale())
        except Exception:
            scale_after = None
        outcomes[case] = {"raised": exception_names(raised), "grad_after": grad_after,
                          "scale_after": scale_after, "step_calls": optimizer.step_calls}
    return outcomes


def scaler_misuse_answer(spec):
    return MapOf(Record({"raised": maybe(NAMES), "grad_after": Tensor(), "scale_after": PLAIN, "step_calls": INT}),
                 keys=spec["cases"])


def scaler_state_round_trip(make_scaler, spec):
    """Run ``before`` iterations, save ``state_dict``, build a fresh scaler with
    other options (``spec['fresh']``), load the saved state into it -- or
    ``spec['load_state']``, a GradScaler's state -- and continue ``after``
    iterations: the trajectory must not notice the switch."""
    model = build_model(spec["seed"])
    optimizer = build_optimizer("sgd", model.parameters(), 0.1)
    batches = build_batches(spec["seed"], spec["before"] + spec["after"])
    inject = {int(key): value for key, value in spec.get("inject", {}).items()}
    fresh = spec.get("fresh") or {"init_scale": 3.0, "growth_factor": 4.0, "backoff_factor": 0.25,
                                  "growth_interval": 999}
    run = {"saved": None, "echo": None, "scales": [], "trackers": [], "skipped": [], "stopped": None}
    try:
        scaler = _guarded("__init__", -1, make_scaler, **spec["scaler"])
        for iteration, (inputs, targets) in enumerate(batches):
            if iteration == spec["before"]:
                saved = _guarded("state_dict", iteration, scaler.state_dict)
                run["saved"] = _plain_state(saved)
                scaler = _guarded("__init__", iteration, make_scaler, **fresh)
                to_load = dict(spec["load_state"]) if spec.get("load_state") else saved
                _guarded("load_state_dict", iteration, scaler.load_state_dict, to_load)
                run["echo"] = _plain_state(_guarded("state_dict", iteration, scaler.state_dict))
            optimizer.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(inputs), targets)
            scaled = _guarded("scale", iteration, scaler.scale, loss)
            _guarded("scale", iteration, scaled.backward)
            if iteration in inject:
                with torch.no_grad():
                    next(model.parameters()).grad.view(-1)[0] = _poison(inject[iteration])
            calls = optimizer.step_calls
            _guarded("step", iteration, scaler.step, optimizer)
            run["skipped"].append(optimizer.step_calls == calls)
            _guarded("update", iteration, scaler.update)
            run["scales"].append(_plain(_guarded("get_scale", iteration, scaler.get_scale)))
            run["trackers"].append(_tracker(scaler))
    except ScalerStopped as stop:
        run["stopped"] = stop.record
    run.update(parameters=parameters_of(model), probe_echo=_echo(make_scaler, spec["scaler"]))
    return run


def scaler_state_round_trip_answer(spec):
    count = spec["before"] + spec["after"]
    lists = {"scales": PLAIN, "trackers": maybe(INT), "skipped": BOOL}
    return until_stopped(Record(dict(
        {key: ListOf(item, max_length=count) for key, item in lists.items()}, saved=maybe(PLAIN_STATE),
        echo=maybe(PLAIN_STATE), stopped=maybe(STOPPED), parameters=TENSORS, probe_echo=maybe(PLAIN_STATE))),
        lists, count)


def scaler_fresh_state(make_scaler, spec):
    """state_dict() and get_scale() of fresh scalers built with ``spec['cases']``
    options, before and after a first scale()."""
    states = []
    for options in spec["cases"]:
        scaler = make_scaler(**options)
        state = _plain_state(scaler.state_dict())
        scale = _plain(scaler.get_scale())
        _first_scale(scaler)
        states.append({"state": state, "get_scale": scale, "after_scale": _plain_state(scaler.state_dict())})
    return states


def scaler_fresh_state_answer(spec):
    return ListOf(Record({"state": PLAIN_STATE, "get_scale": PLAIN, "after_scale": PLAIN_STATE}),
                  length=len(spec["cases"]))


class _ArgumentsSGD(torch.optim.SGD):
    """Records what each step() receives; returns the closure's value, or a token."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.received = []

    def step(self, closure=None, *extra, **options):
        self.received.append({"closure": closure is not None, "args": [_plain(value) for value in extra],
                              "kwargs": {key: _plain(value) for key, value in sorted(options.items())}})
        value = closure() if closure is not None else None
        super().step()
        return 31.0 if value is None else value


def scaler_step_arguments(make_scaler, spec):
    """``step(optimizer, *args, **kwargs)`` with each of ``spec['calls']``
    (closure value, extra positional args, keyword args, poisoned or not): what
    optimizer.step received and what step() returned."""
    param = torch.nn.Parameter(torch.ones(3))
    optimizer = _ArgumentsSGD([param], lr=0.1, foreach=False)
    returns = []
    for call in spec["calls"]:  # a fresh scaler each: update() is judged elsewhere
        scaler = make_scaler(init_scale=spec["scale"], growth_interval=1000)
        _first_scale(scaler)
        param.grad = torch.full((3,), float(spec["scale"]))
        if call.get("poison"):
            param.grad[0] = math.inf
        args = list(call.get("args", ()))
        if call.get("closure") is not None or args:
            args.insert(0, None if call.get("closure") is None else (lambda value=call["closure"]: value))
        returns.append(_plain(scaler.step(optimizer, *args, **call.get("kwargs", {}))))
    return {"returns": returns, "received": optimizer.received, "param": param.detach().clone()}


def scaler_step_arguments_answer(spec):
    received = Record({"closure": BOOL, "args": ListOf(PLAIN), "kwargs": MapOf(PLAIN)})
    return Record({"returns": ListOf(PLAIN, length=len(spec["calls"])), "received": ListOf(received),
                   "param": Tensor()})
