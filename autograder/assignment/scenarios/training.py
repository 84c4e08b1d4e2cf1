"""Module 3 scenarios: a ``train_step`` (the student's in the worker, the hidden
suite's oracle in the judge) making effective updates with the real GradScaler,
counting its calls, and being called with invalid arguments. Each returns plain
data for the judge.

Trusted grader code without expected values: the sandbox worker imports it
(through :mod:`autograder.assignment.scenarios`). After each scenario, the shape
of its answer for a spec, which the judge holds a box's answer to.
"""
import torch
import torch.nn.functional as F

from autograder.assignment.scenarios.parts import (NAMES, OPTIMIZER_STATE, TENSORS, _poison, build_batches,
                                                   build_model, build_optimizer, exception_names, optimizer_state,
                                                   parameters_of)
from autograder.authoring import ANY, BOOL, FLOAT, INT, NONE, STR, ListOf, MapOf, Record, maybe


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
            "forward_calls": len(forward_dtypes),
            "scaler_calls": None if scaler is None else dict(scaler.calls),
            "final_scale": None if scaler is None else float(scaler.get_scale()),
            "parameters": parameters_of(model), "optimizer_state": optimizer_state(optimizer)}


def training_steps_answer(spec):
    """One report (whatever train_step returned), step count and gradient count per update;
    the scaler's counts and final scale under 'fp16' only."""
    per_update = {key: ListOf(item, length=spec["updates"])
                  for key, item in (("reports", ANY), ("step_calls", INT), ("grads_left", INT))}
    scaled = spec["precision"] == "fp16"
    return Record(dict(per_update, forward_dtypes=ListOf(STR), forward_calls=INT,
                       scaler_calls=Record({call: INT for call in ("scale", "unscale_", "step", "update")})
                       if scaled else NONE,
                       final_scale=FLOAT if scaled else NONE, parameters=TENSORS, optimizer_state=OPTIMIZER_STATE))


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


def training_step_errors_answer(spec):
    return MapOf(Record({"raised": maybe(NAMES), "unchanged": BOOL, "step_calls": INT}), keys=spec["cases"])
