"""Building blocks shared by every scenario: a seeded model, its data and a
step-counting optimizer, built identically in the worker and in the judge, and
the helpers that turn what a run produced into plain data (parameters,
optimizer state, exceptions, returned values).

Trusted grader code without expected values: the sandbox worker imports it
(through :mod:`autograder.assignment.scenarios`). Next to each helper, the shape
of what it returns (:mod:`autograder.intake.answer_shapes`): the judge holds a
box's answer to them before any check reads it.
"""
import math

import torch

from autograder.authoring import FLOAT, INT, NONE, STR, Items, ListOf, MapOf, Record, Tensor, Where, one_of


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


# _poison, _plain and _plain_state are used by the scenario modules only, not by the suites,
# hence the underscore although they are imported across modules.
def _poison(value):
    return {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}[value]


def exception_names(exc):
    """The raised exception's class names (MRO), or None; the last entry is its message."""
    if exc is None:
        return None
    return [cls.__name__ for cls in type(exc).__mro__] + [str(exc)[:300]]


def _plain(value):
    """A returned value as plain data: None, a float, or {'type': its type name}."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        return value[:60]
    if torch.is_tensor(value) and value.numel() == 1:
        return float(value.detach().double())
    return {"type": type(value).__name__[:60]}


def _plain_state(state):
    """A state dict as plain data, int/float types kept (GradScaler's are checked)."""
    if not isinstance(state, dict):
        return {"$not_a_dict": type(state).__name__[:60]}
    return {str(key)[:60]: (value if isinstance(value, (int, float)) and not isinstance(value, bool)
                            else _plain(value)) for key, value in list(state.items())[:20]}


# -- the shapes of what the helpers above return ------------------------------------------
NAMES = ListOf(STR, min_length=2)  # exception_names: the class names, then the message
PLAIN = one_of(NONE, FLOAT, STR, Record({"type": STR}))  # _plain
PLAIN_STATE = one_of(Record({"$not_a_dict": STR}), MapOf(one_of(INT, FLOAT, PLAIN)))  # _plain_state
TENSORS = ListOf(Tensor())  # parameters_of
OPTIMIZER_STATE = ListOf(MapOf(one_of(Tensor(), FLOAT)))  # optimizer_state
# a Module 2 scenario's record of the call that raised (scaler.ScalerStopped)
STOPPED = Record({"call": STR, "iteration": INT, "raised": NAMES, "line": Items(INT, STR)})


def until_stopped(run, per_iteration, iterations):
    """``run`` (a Record with ``stopped``), whose ``per_iteration`` lists hold an entry for
    every iteration before the one that stopped it, for all ``iterations`` when none did."""
    def complete(value):
        stopped = value["stopped"]
        if stopped is not None and not -1 <= stopped["iteration"] < iterations:
            return False
        done = iterations if stopped is None else max(stopped["iteration"], 0)
        return all(len(value[key]) >= done for key in per_iteration)

    return Where(run, complete, f"lists shorter than the iterations run (of {iterations})")
