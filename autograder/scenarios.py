"""Scenarios: small training runs built from a plain ``spec`` and a seed.

The same function runs twice: in the sandbox worker with the student's code
plugged in, and in the judge with the reference (the real
``torch.amp.GradScaler('cpu')``, or the hidden suite's Module 3 oracle). Both build
the identical model, data and optimizer from the spec, and both return only
plain data (tensors, numbers, lists, dicts), which the judge compares.

This module is trusted grader code, but it must not hold expected values: the
worker imports it too.
"""
import math

import torch
import torch.nn.functional as F

LOSS_SCALER, TRAINING_STEP = "loss_scaler", "amp_training_step"


# -- building blocks ----------------------------------------------------------------
def generator(seed):
    gen = torch.Generator().manual_seed(int(seed) % (2**63 - 1))
    return gen


def build_model(seed, in_features=8, hidden=16, out_features=2, dtype=torch.float32,
                frozen_layer=False):
    """A two-layer MLP with weights drawn from ``seed`` (independent of global RNG).

    With ``frozen_layer`` an extra parameter exists that never gets a gradient
    (grad stays None), a case students often forget.
    """
    gen = generator(seed)
    model = torch.nn.Sequential(torch.nn.Linear(in_features, hidden), torch.nn.Tanh(),
                                torch.nn.Linear(hidden, out_features))
    if frozen_layer:  # registered on the container, so forward never uses it
        model.unused_weight = torch.nn.Parameter(torch.zeros(3, 3))
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.randn(param.shape, generator=gen) * 0.4)
    return model.to(dtype)


def build_batches(seed, count, batch_size=6, in_features=8, out_features=2, dtype=torch.float32):
    gen = generator(seed + 7919)
    return [(torch.randn(batch_size, in_features, generator=gen).to(dtype),
             torch.randn(batch_size, out_features, generator=gen).to(dtype))
            for _ in range(count)]


class _CountingSteps:
    """Counts optimizer steps and returns a token, so a skip is visible and a
    scaler's ``step`` can be checked to return ``optimizer.step``'s value."""
    token = 0.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.step_calls = 0

    def step(self, closure=None):
        self.step_calls += 1
        super().step(closure)
        return self.token


class CountingSGD(_CountingSteps, torch.optim.SGD):
    token = 17.0


class CountingAdam(_CountingSteps, torch.optim.Adam):
    token = 23.0


def build_optimizer(kind, params, lr):
    if kind == "adam":
        return CountingAdam(params, lr=lr, foreach=False)
    if kind == "sgd_momentum":
        return CountingSGD(params, lr=lr, momentum=0.9, foreach=False)
    return CountingSGD(params, lr=lr, foreach=False)


def optimizer_state(optimizer):
    """Optimizer state as plain data: per parameter, its state tensors by name."""
    state = []
    for group in optimizer.param_groups:
        for param in group["params"]:
            entry = optimizer.state.get(param, {})
            state.append({key: (value.detach().clone() if torch.is_tensor(value) else float(value))
                          for key, value in sorted(entry.items())})
    return state


def parameters_of(model):
    return [param.detach().clone() for param in model.parameters()]


def _poison(value):
    return {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}[value]


def exception_names(exc):
    """The raised exception's class names (MRO), or None; the last entry is its message."""
    if exc is None:
        return None
    return [cls.__name__ for cls in type(exc).__mro__] + [str(exc)[:300]]


# -- Module 2: a scaler driving a training loop -------------------------------------
def scaler_training(make_scaler, spec):
    """PyTorch's ``_run_scaling_case`` idea: iterate, inject inf/NaN at chosen
    iterations, record the scale after every update, and return the final
    parameters and optimizer state. ``make_scaler(**options)`` builds the
    scaler under test; the judge passes ``GradScaler('cpu', ...)``."""
    model = build_model(spec["seed"])
    optimizer = build_optimizer(spec.get("optimizer", "sgd"), model.parameters(), spec.get("lr", 0.1))
    scaler = make_scaler(**spec["scaler"])
    batches = build_batches(spec["seed"], spec["iterations"])
    inject = {int(key): value for key, value in spec.get("inject", {}).items()}
    autocast_fp16 = spec.get("autocast") == "fp16"
    scales, step_returns = [], []
    for iteration, (inputs, targets) in enumerate(batches):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.float16, enabled=autocast_fp16):
            loss = F.mse_loss(model(inputs).float(), targets)
        scaler.scale(loss).backward()
        if iteration in inject:
            params = list(model.parameters())
            target = params[spec.get("inject_param", 0) % len(params)]
            with torch.no_grad():
                target.grad.view(-1)[spec.get("inject_index", 0) % target.grad.numel()] = \
                    _poison(inject[iteration])
        if spec.get("explicit_unscale") or spec.get("clip"):
            scaler.unscale_(optimizer)
        if spec.get("clip"):
            torch.nn.utils.clip_grad_norm_(model.parameters(), spec["clip"])
        result = scaler.step(optimizer)
        step_returns.append(None if result is None else float(result))
        scaler.update()
        scales.append(float(scaler.get_scale()))
    try:
        tracker = int(scaler.state_dict()["_growth_tracker"])
    except Exception:  # judged by its own test, not this one
        tracker = None
    return {"scales": scales, "step_returns": step_returns, "step_calls": optimizer.step_calls,
            "parameters": parameters_of(model), "optimizer_state": optimizer_state(optimizer),
            "growth_tracker": tracker}


def scaler_scale_loss(make_scaler, spec):
    """``scale(loss)`` for a loss of a given dtype and shape."""
    scaler = make_scaler(**spec["scaler"])
    loss = torch.full(spec["shape"], spec["value"], dtype=getattr(torch, spec["dtype"]))
    scaled = scaler.scale(loss)
    return {"scaled": scaled}


def scaler_unscale(make_scaler, spec):
    """Unscale hand-made gradients in place: some None, one transposed
    (non-contiguous), maybe one poisoned element; then step once."""
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
        target[tuple(torch.unravel_index(torch.tensor(flat_index), target.shape))] = _poison(spec["poison"])
    grads_before = [None if p.grad is None else p.grad for p in params]
    optimizer = build_optimizer("sgd", params, 0.5)
    scaler = make_scaler(**spec["scaler"])
    scaler.scale(torch.ones(()))  # GradScaler initialises its scale lazily here
    scaler.unscale_(optimizer)
    same_objects = all(p.grad is before for p, before in zip(params, grads_before))
    grads = [None if p.grad is None else p.grad.detach().clone() for p in params]
    step_result = scaler.step(optimizer)
    return {"grads": grads, "same_objects": same_objects, "step_calls": optimizer.step_calls,
            "step_result": None if step_result is None else float(step_result),
            "parameters": [p.detach().clone() for p in params]}


def shape_t(shape, index):
    """Shape of the gradient to create; index 2 is transposed afterwards."""
    return tuple(reversed(shape)) if index == 2 else tuple(shape)


def scaler_misuse(make_scaler, spec):
    """Each case runs in a fresh scaler; returns the exception (class names) or None."""
    outcomes = {}
    for case in spec["cases"]:
        dtype = {"fp16_gradients": torch.float16, "bf16_gradients": torch.bfloat16,
                 "fp64_gradients": torch.float64}.get(case, torch.float32)
        param = torch.nn.Parameter(torch.ones(4, dtype=dtype))
        optimizer = build_optimizer("sgd", [param], 0.1)
        scaler = make_scaler(init_scale=8.0, growth_interval=1000)
        scaler.scale(torch.ones(()))
        param.grad = torch.full((4,), 16.0, dtype=dtype)
        raised = None
        try:
            if case == "double_unscale":
                scaler.unscale_(optimizer)
                scaler.unscale_(optimizer)
            elif case == "unscale_after_step":
                scaler.step(optimizer)
                scaler.unscale_(optimizer)
            elif case == "double_step":
                scaler.step(optimizer)
                scaler.step(optimizer)
            elif case == "update_without_step":
                scaler.update()
            else:
                scaler.unscale_(optimizer)
        except Exception as exc:  # the point of the case
            raised = exc
        grad_after = param.grad.detach().clone()
        outcomes[case] = {"raised": exception_names(raised), "grad_after": grad_after}
    return outcomes


def scaler_state_round_trip(make_scaler, spec):
    """Run, save ``state_dict``, load it into a fresh scaler built with other
    options, and continue: the trajectory must not notice the switch."""
    scaler = make_scaler(**spec["scaler"])
    model = build_model(spec["seed"])
    optimizer = build_optimizer("sgd", model.parameters(), 0.1)
    batches = build_batches(spec["seed"], spec["before"] + spec["after"])
    inject = {int(key): value for key, value in spec.get("inject", {}).items()}
    scales = []
    saved = None
    for iteration, (inputs, targets) in enumerate(batches):
        if iteration == spec["before"]:
            saved = scaler.state_dict()
            scaler = make_scaler(init_scale=3.0, growth_factor=4.0, backoff_factor=0.25,
                                 growth_interval=999)
            scaler.load_state_dict(saved)
        optimizer.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(inputs), targets)
        scaler.scale(loss).backward()
        if iteration in inject:
            with torch.no_grad():
                next(model.parameters()).grad.view(-1)[0] = _poison(inject[iteration])
        scaler.step(optimizer)
        scaler.update()
        scales.append(float(scaler.get_scale()))
    return {"saved": dict(saved), "scales": scales,
            "final_state": dict(scaler.state_dict()), "parameters": parameters_of(model)}


# -- Module 3: one effective update per call ------------------------------------------
def _counting_scaler_class():
    class CountingGradScaler(torch.amp.GradScaler):
        """The real GradScaler, counting the calls a training step makes."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.calls = {"scale": 0, "unscale_": 0, "step": 0, "update": 0}
            self._inside_step = False

        def scale(self, outputs):
            self.calls["scale"] += 1
            return super().scale(outputs)

        def unscale_(self, optimizer):
            if not self._inside_step:
                self.calls["unscale_"] += 1
            return super().unscale_(optimizer)

        def step(self, optimizer, *args, **kwargs):
            self.calls["step"] += 1
            self._inside_step = True
            try:
                return super().step(optimizer, *args, **kwargs)
            finally:
                self._inside_step = False

        def update(self, new_scale=None):
            self.calls["update"] += 1
            return super().update(new_scale)

    return CountingGradScaler


def training_steps(train_step, spec):
    """Call ``train_step`` for ``spec['updates']`` effective updates and record
    everything a judge needs: returned dicts, parameters, optimizer state, call
    counts, the autocast dtype the forward used, gradients left behind."""
    model = build_model(spec["seed"], frozen_layer=spec.get("frozen_layer", False))
    optimizer = build_optimizer(spec.get("optimizer", "sgd"), model.parameters(), spec.get("lr", 0.2))
    scaler = None
    if spec["precision"] == "fp16":
        scaler = _counting_scaler_class()("cpu", **spec.get("scaler", {}))
    k = spec["microbatches"]
    batches = build_batches(spec["seed"], k * spec["updates"])
    forward_dtypes = []
    model[0].register_forward_hook(lambda module, inputs, output: forward_dtypes.append(str(output.dtype)))
    poison = spec.get("inject", {})

    def loss_fn(model_, batch):
        inputs, targets = batch
        return F.mse_loss(model_(inputs).float(), targets)

    reports, grads_left, step_calls = [], [], []
    for update in range(spec["updates"]):
        microbatches = [tuple(t.clone() for t in pair) for pair in batches[update * k:(update + 1) * k]]
        if str(update) in poison:
            where = poison[str(update)]
            microbatches[where["microbatch"]][0][0, 0] = _poison(where["value"])
        before = optimizer.step_calls
        kwargs = {"precision": spec["precision"], "max_norm": spec.get("max_norm", 1.0)}
        if scaler is not None:
            kwargs["scaler"] = scaler
        if spec.get("weights") is not None:
            kwargs["weights"] = spec["weights"]
        report = train_step(model, optimizer, microbatches, loss_fn, **kwargs)
        reports.append(report if isinstance(report, dict) else {"$not_a_dict": type(report).__name__})
        step_calls.append(optimizer.step_calls - before)
        grads_left.append(sum(param.grad is not None for param in model.parameters()))
    return {"reports": reports, "step_calls": step_calls, "grads_left": grads_left,
            "forward_dtypes": sorted(set(forward_dtypes)),
            "scaler_calls": None if scaler is None else dict(scaler.calls),
            "final_scale": None if scaler is None else float(scaler.get_scale()),
            "parameters": parameters_of(model), "optimizer_state": optimizer_state(optimizer)}


def training_step_errors(train_step, spec):
    """Each invalid call in a fresh setup: the exception raised (class names) and
    whether the parameters were left untouched."""
    outcomes = {}
    for case in spec["cases"]:
        model = build_model(spec["seed"])
        optimizer = build_optimizer("sgd", model.parameters(), 0.1)
        batches = build_batches(spec["seed"], 2)
        before = parameters_of(model)
        kwargs = {"precision": "fp32"}
        if case == "unknown_precision":
            kwargs["precision"] = spec.get("bad_precision", "fp8")
        elif case == "fp16_without_scaler":
            kwargs["precision"] = "fp16"
        elif case == "fp16_disabled_scaler":
            kwargs.update(precision="fp16", scaler=torch.amp.GradScaler("cpu", enabled=False))
        elif case in ("fp32_with_scaler", "bf16_with_scaler"):
            kwargs.update(precision=case[:4], scaler=torch.amp.GradScaler("cpu"))
        elif case == "weights_wrong_length":
            kwargs["weights"] = [1.0 / 3] * 3
        elif case == "weights_negative":
            kwargs["weights"] = [1.5, -0.5]
        elif case == "weights_not_summing_to_one":
            kwargs["weights"] = [0.5, 0.25]
        raised = None
        try:
            train_step(model, optimizer, batches,
                       lambda m, b: F.mse_loss(m(b[0]), b[1]), **kwargs)
        except Exception as exc:
            raised = exc
        unchanged = all(torch.equal(a, b) for a, b in zip(before, parameters_of(model)))
        outcomes[case] = {"raised": exception_names(raised), "unchanged": unchanged,
                          "step_calls": optimizer.step_calls}
    return outcomes


def _scaler_runner(function):
    return lambda module, spec: function(module.LossScaler, spec)


def _training_runner(function):
    return lambda module, spec: function(module.train_step, spec)


# name -> runner(student_module, spec), used by the worker
STUDENT_SCENARIOS = {
    "scaler_training": _scaler_runner(scaler_training),
    "scaler_scale_loss": _scaler_runner(scaler_scale_loss),
    "scaler_unscale": _scaler_runner(scaler_unscale),
    "scaler_misuse": _scaler_runner(scaler_misuse),
    "scaler_state_round_trip": _scaler_runner(scaler_state_round_trip),
    "training_steps": _training_runner(training_steps),
    "training_step_errors": _training_runner(training_step_errors),
}
