"""A student module stand-in for the suites' tests: every answer is what the reference
solution gives, through the wire's codec, except one call per run whose answer is forged
-- within its declared shape for a scenario (a shape the wire lets through), anyhow for
a direct call (any value the wire carries). The suites must judge any such answer with a
Mistake or the student's failure, never with an exception of their own."""
import json
import math
import types

import torch

from autograder.assignment import scenarios
from autograder.intake import answer_shapes
from autograder.sandbox import assignment_side, wire
from autograder.sandbox.client import Outcome, StudentError
from support.helpers import SOLUTIONS


def solution(module, source=None):
    """The reference solution of ``module`` (or ``source``, e.g. a mutant of it), imported here."""
    if source is None:
        source = (SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")
    loaded = types.ModuleType(f"reference_{module}")
    loaded.__file__ = str(SOLUTIONS / f"{module}.py")
    exec(compile(source, loaded.__file__, "exec"), loaded.__dict__)  # noqa: S102 - our own solutions
    return loaded


def through_the_wire(value):
    """``value`` as the judge gets it back from a box."""
    payload = json.dumps({"value": wire.encode_value(value)}).encode()
    return wire.decode_value(wire.parse_frame(payload)["value"])


def copied(value):
    """A fresh copy of a value that came ``through_the_wire``: what a second trip gives
    (fresh containers and tensors; the rest immutable), at a fraction of its cost."""
    kind = type(value)
    if kind is list:
        return [copied(item) for item in value]
    if kind is tuple:
        return tuple(copied(item) for item in value)
    if kind is dict:
        return {key: copied(item) for key, item in value.items()}
    if kind is torch.Tensor:
        return value.clone()
    return value


# -- random values the wire can carry -------------------------------------------------------
DTYPES = list(wire.DTYPES.values())


def random_tensor(rng, dtype=None, shape=None):
    shape = shape if shape is not None else [rng.randint(0, 4) for _ in range(rng.choice((0, 0, 1, 1, 2, 3)))]
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    values = torch.randn(shape, generator=gen, dtype=torch.float64) * rng.choice((1.0, 100.0, 1e6, 1e-6))
    if values.numel() and rng.random() < 0.3:
        values.view(-1)[rng.randrange(values.numel())] = rng.choice((math.inf, -math.inf, math.nan))
    return values.to(dtype or rng.choice(DTYPES))


def random_value(rng, depth=0):
    kinds = ["none", "bool", "int", "float", "special", "str", "tensor", "opaque"]
    if depth < 4:
        kinds += ["list", "tuple", "dict"] * 2
    kind = rng.choice(kinds)
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice((0, 1, -1, 3, 2**63 - 1, -(2**63) + 1, rng.randint(-10**6, 10**6)))
    if kind == "float":
        return rng.choice((0.0, -0.0, 1.0, 0.5, 1e308, -1e-308, rng.uniform(-1e4, 1e4)))
    if kind == "special":
        return rng.choice((math.inf, -math.inf, math.nan))
    if kind == "str":
        return rng.choice(("", "x", "RuntimeError", "finite_gradient", "non_finite_gradient", "\ud800", "{got:.6g}",
                           "y" * rng.randint(1, 500)))
    if kind == "tensor":
        return random_tensor(rng)
    if kind == "opaque":
        return wire.Opaque(rng.choice(("generator", "Module", "dict with non-string keys")))
    items = [random_value(rng, depth + 1) for _ in range(rng.choice((0, 1, 2, 3, 5)))]
    if kind == "list":
        return items
    if kind == "tuple":
        return tuple(items)
    keys = ("gradients", "grad_norm", "reason", "stepped", "scale", "type", "raised", "x", "$not_a_dict")
    return {rng.choice(keys): item for item in items}


def nearby(value, rng):
    """Another value like ``value`` (same type mostly), or anything at all."""
    if rng.random() < 0.2:
        return random_value(rng)
    if type(value) is bool:
        return not value
    if type(value) is int:
        return rng.choice((0, -1, 1, 2**63 - 1, -(2**63) + 1, value + 1, -value, value * 1000))
    if type(value) is float:
        return rng.choice((0.0, -0.0, math.inf, -math.inf, math.nan, 1e308, -1e-308, value * 2, -value, 1.0))
    if type(value) is str:
        return rng.choice(("", "\ud800", "RuntimeError", "{0}", value[::-1], value * 3))
    if torch.is_tensor(value):
        return rng.choice((random_tensor(rng), random_tensor(rng, dtype=value.dtype),
                           random_tensor(rng, shape=list(value.shape)),
                           random_tensor(rng, dtype=value.dtype, shape=list(value.shape))))
    if type(value) is list:
        choice = rng.randrange(4)
        if choice == 0:
            return value[:rng.randrange(len(value) + 1)]
        if choice == 1:
            return value + [rng.choice(value) if value else random_value(rng)] * rng.randint(1, 3)
        if choice == 2:
            return rng.sample(value, len(value))
        return [nearby(item, rng) for item in value]
    if type(value) is dict:
        changed = dict(value)
        if changed and rng.random() < 0.5:
            changed.pop(rng.choice(sorted(changed)))
        else:
            changed[rng.choice(("x", "type", "$not_a_dict", *changed))] = random_value(rng)
        return changed
    return random_value(rng)


def _places(value, found):
    """Every (container, key) inside ``value``."""
    if type(value) is list:
        for index, item in enumerate(value):
            found.append((value, index))
            _places(item, found)
    elif type(value) is dict:
        for key, item in value.items():
            found.append((value, key))
            _places(item, found)
    return found


def forged(value, rng, count):
    """``value`` (a fresh copy; ``value`` came through the wire) with ``count`` of its
    parts, or itself, replaced."""
    value = copied(value)
    for _ in range(count):
        places = _places(value, [])
        if not places or rng.random() < 0.1:
            value = nearby(value, rng)
            continue
        container, key = rng.choice(places)
        container[key] = nearby(container[key], rng)
    return value


# -- the stand-in ---------------------------------------------------------------------------
class ForgingStudent:
    """``student`` for a suite's test: call number ``forge_at`` is forged (None: none,
    ``"every"``: every call). Students of one ``reference`` may share ``answers``: its
    scenarios' answers by spec, each computed once (a scenario's answer is a function of
    its spec: the specs carry their seeds)."""

    def __init__(self, module, reference, rng, forge_at=None, changes=2, answers=None):
        self.module_name, self.module_file = module, f"{module}.py"
        self.spec = {}
        self.reference, self.rng, self.forge_at, self.changes = reference, rng, forge_at, changes
        self.answers = {} if answers is None else answers
        self.calls = 0
        self.refused = 0  # forged answers the shapes refused (a protocol error)

    def _forging(self):
        self.calls += 1
        return self.forge_at == "every" or self.calls - 1 == self.forge_at

    def call(self, function, *args, timeout=None, **kwargs):
        return self._call(function, args, kwargs, False)

    def call_watching_inputs(self, function, *args, timeout=None, **kwargs):
        return self._call(function, args, kwargs, True)

    def _call(self, function, args, kwargs, inputs_after):
        args, kwargs = through_the_wire(list(args)), through_the_wire(dict(kwargs))
        try:
            value = getattr(self.reference, function)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the reference raising on purpose
            outcome = Outcome(False, error=StudentError("exception", type(exc).__name__, str(exc)))
        else:
            outcome = Outcome(True, through_the_wire(value), *(through_the_wire([args, kwargs]) if inputs_after
                                                             else ([], {})))
        if not self._forging():
            return outcome
        value = forged(outcome.value if outcome.ok else None, self.rng, self.changes)
        if not inputs_after:
            return Outcome(True, value)
        args_after = [forged(item, self.rng, 1) for item in outcome.args_after or through_the_wire(args)]
        kwargs_after = {key: forged(item, self.rng, 1) for key, item in (outcome.kwargs_after or kwargs).items()}
        return Outcome(True, value, args_after, kwargs_after)

    def _reference_answer(self, name, spec):
        """(the reference's answer through the wire, its shape), or the Outcome of its raising."""
        key = (name, json.dumps(spec))
        if key not in self.answers:
            try:
                value = through_the_wire(scenarios.STUDENT_SCENARIOS[name](self.reference, json.loads(key[1])))
            except Exception as exc:  # noqa: BLE001
                self.answers[key] = Outcome(False, error=StudentError("exception", type(exc).__name__, str(exc)))
            else:
                shape = assignment_side.answer_shape(name, spec)
                answer_shapes.check(value, shape)  # the reference's own answer always has its shape
                self.answers[key] = value, shape
        return self.answers[key]

    def scenario(self, name, spec, timeout=None):
        answer = self._reference_answer(name, spec)
        if isinstance(answer, Outcome):
            return answer
        value, shape = answer
        if not self._forging():
            return Outcome(True, copied(value))
        for _attempt in range(40):  # a forged answer the shape lets through, when one is found
            candidate = forged(value, self.rng, self.changes)
            try:
                answer_shapes.check(candidate, shape)
            except answer_shapes.ShapeError:
                continue
            return Outcome(True, candidate)
        self.refused += 1
        return Outcome(False, error=StudentError("protocol", message="an answer of the wrong form"))
