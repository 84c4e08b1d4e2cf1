"""The shape an answer from a box must have before any check reads it.

A box runs student code, so it can send any well-formed answer it likes: a list
where a run returns a dict, a dict without a key, a string where a tensor goes.
An assignment declares, next to each run it has the worker do, what that run
returns (:func:`check` walks a decoded answer against it); an answer of another
shape is the box's protocol error, never the checks' surprise.

A shape is built from a few plain pieces: ``FLOAT``, ``INT``, ``NUMBER``,
``BOOL``, ``STR``, ``NONE``, ``ANY``, :class:`Tensor`, :class:`ListOf`,
:class:`Items` (a list of fixed positions), :class:`Record` (a dict with these
keys, some optional), :class:`MapOf` (string keys, one shape of value, maybe a
fixed set of keys), :func:`one_of`, :func:`maybe` and :class:`Where` (a rule
over a value already of its shape, e.g. lengths that depend on each other).
Types are exact, as the wire decodes them: ``True`` is not an ``INT``, a tuple
is not a list. Hand-written rather than JSON Schema or pydantic: the values are
decoded answers holding ``torch.Tensor`` objects, the shapes live in modules the
sandbox's zygote imports, and a check must cost one walk of the answer, which
the wire has already bounded.

:func:`check` raises :class:`ShapeError` and nothing else, saying where the
answer differs (``value['scales'][3]: expected a float or None, got list``),
with type names only: never a value the box chose.
"""


class ShapeError(ValueError):
    """An answer that does not have its declared shape (``mistyped``: the value at
    ``path`` itself has the wrong type, as opposed to something inside it)."""

    def __init__(self, problem, path, mistyped=False):
        super().__init__(f"{_where(path)}: {problem}")
        self.path, self.mistyped = path, mistyped


# A place in an answer is the root's name or (the parent's place, key): built for every value
# checked, turned into text (``value['scales'][3]``) only when a check fails.
def _where(path):
    keys = []
    while isinstance(path, tuple):
        path, key = path
        keys.append(f"[{key[:40]!r}]" if isinstance(key, str) else f"[{key}]")
    return path + "".join(reversed(keys))


def _kind(value):
    name = type(value).__name__
    return "tensor" if name == "Tensor" else name


def _fail(path, shape, value):
    raise ShapeError(f"expected {shape.describe()}, got {_kind(value)}", path, mistyped=True)


class Shape:
    types = None  # the Python types a value of this shape can have (None: any), to pick alternatives

    def check(self, value, path):  # pragma: no cover - every shape defines it
        raise NotImplementedError

    def describe(self):
        return type(self).__name__


class _Exact(Shape):
    def __init__(self, types, words):
        self.types, self.words = frozenset(types), words

    def check(self, value, path):
        if type(value) not in self.types:
            _fail(path, self, value)

    def describe(self):
        return self.words


class _Any(Shape):
    def check(self, value, path):
        pass

    def describe(self):
        return "anything"


FLOAT = _Exact((float,), "a float")
INT = _Exact((int,), "an int")
NUMBER = _Exact((int, float), "a number")
BOOL = _Exact((bool,), "a bool")
STR = _Exact((str,), "a string")
NONE = _Exact((type(None),), "None")
ANY = _Any()


class Tensor(Shape):
    """A tensor; ``dtype`` (``"float32"``) and ``shape`` (a tuple) when they are fixed."""

    _types = None

    def __init__(self, dtype=None, shape=None):
        self.dtype, self.shape = dtype, None if shape is None else tuple(shape)

    @property
    def types(self):
        if Tensor._types is None:
            import torch  # the judge holds torch already; process A never checks an answer

            Tensor._types = frozenset((torch.Tensor,))
        return Tensor._types

    def check(self, value, path):
        import torch

        if type(value) is not torch.Tensor:
            _fail(path, self, value)
        if self.dtype is not None and value.dtype != getattr(torch, self.dtype):
            raise ShapeError(f"expected a {self.dtype} tensor, got {str(value.dtype)[6:]}", path)
        if self.shape is not None and tuple(value.shape) != self.shape:
            raise ShapeError(f"expected a tensor of shape {self.shape}, got {tuple(value.shape)}", path)

    def describe(self):
        return f"a {self.dtype} tensor" if self.dtype else "a tensor"


def _entries(count):
    return f"{count} entry" if count == 1 else f"{count} entries"


class ListOf(Shape):
    """A list of ``item``; ``length`` exactly, or between ``min_length`` and ``max_length``."""
    types = frozenset((list,))

    def __init__(self, item, length=None, min_length=0, max_length=None):
        self.item = item
        self.min_length = length if length is not None else min_length
        self.max_length = length if length is not None else max_length

    def check(self, value, path):
        if type(value) is not list:
            _fail(path, self, value)
        if len(value) < self.min_length or (self.max_length is not None and len(value) > self.max_length):
            wanted = (_entries(self.min_length) if self.min_length == self.max_length
                      else f"{self.min_length} to {_entries(self.max_length)}" if self.max_length is not None
                      else f"at least {_entries(self.min_length)}")
            raise ShapeError(f"expected {wanted}, got {len(value)}", path)
        check_item = self.item.check
        for index, item in enumerate(value):
            check_item(item, (path, index))

    def describe(self):
        return "a list"


class Items(Shape):
    """A list of exactly these positions (e.g. ``[line, source text]``)."""
    types = frozenset((list,))

    def __init__(self, *items):
        self.items = items

    def check(self, value, path):
        if type(value) is not list:
            _fail(path, self, value)
        if len(value) != len(self.items):
            raise ShapeError(f"expected {_entries(len(self.items))}, got {len(value)}", path)
        for index, (item, shape) in enumerate(zip(value, self.items)):
            shape.check(item, (path, index))

    def describe(self):
        return f"a list of {len(self.items)}"


def _keys_text(keys, limit=4):
    shown = sorted(keys)[:limit]
    return ", ".join(repr(key)[:40] for key in shown) + (", ..." if len(keys) > limit else "")


class Record(Shape):
    """A dict with exactly the keys of ``fields`` and maybe those of ``optional``."""
    types = frozenset((dict,))

    def __init__(self, fields, optional=None):
        self.fields, self.optional = dict(fields), dict(optional or {})

    def check(self, value, path):
        if type(value) is not dict:
            _fail(path, self, value)
        missing = self.fields.keys() - value.keys()
        if missing:
            raise ShapeError(f"no {_keys_text(missing)}", path)
        extra = value.keys() - self.fields.keys() - self.optional.keys()
        if extra:
            raise ShapeError(f"unexpected {_keys_text(extra)}", path)
        for key, item in value.items():
            (self.fields.get(key) or self.optional[key]).check(item, (path, key))

    def describe(self):
        return f"a dict of {_keys_text(self.fields)}"


class MapOf(Shape):
    """A dict of string keys (exactly ``keys`` when given) to ``value`` each."""
    types = frozenset((dict,))

    def __init__(self, value, keys=None):
        self.value, self.keys = value, None if keys is None else frozenset(keys)

    def check(self, value, path):
        if type(value) is not dict:
            _fail(path, self, value)
        if self.keys is not None and value.keys() != self.keys:
            missing = self.keys - value.keys()
            raise ShapeError(f"no {_keys_text(missing)}" if missing
                             else f"unexpected {_keys_text(value.keys() - self.keys)}", path)
        check_item = self.value.check
        for key, item in value.items():
            if type(key) is not str:
                raise ShapeError("a key that is not a string", path)
            check_item(item, (path, key))

    def describe(self):
        return "a dict"


class _OneOf(Shape):
    def __init__(self, shapes):
        self.shapes = shapes
        kinds = [shape.types for shape in shapes]
        self.types = None if any(kind is None for kind in kinds) else frozenset().union(*kinds)

    def check(self, value, path):
        # only the alternatives a value of its type can fit are tried: an answer of many
        # values pays no failed alternative for each
        fitting = [shape for shape in self.shapes if shape.types is None or type(value) in shape.types]
        if len(fitting) == 1:
            return fitting[0].check(value, path)
        problems = []
        for shape in fitting:
            try:
                return shape.check(value, path)
            except ShapeError as exc:
                problems.append(exc)
        # an alternative that fits the value's type and fails inside it says more than the list
        inside = [exc for exc in problems if not (exc.mistyped and exc.path is path)]
        if len(inside) == 1:
            raise inside[0]
        _fail(path, self, value)

    def describe(self):
        return " or ".join(shape.describe() for shape in self.shapes)


def one_of(*shapes):
    """The first of ``shapes`` that fits (each is tried on the whole value)."""
    flat = []
    for shape in shapes:
        flat.extend(shape.shapes if isinstance(shape, _OneOf) else [shape])
    return _OneOf(tuple(flat))


def maybe(shape):
    return one_of(shape, NONE)


class Where(Shape):
    """``shape``, and then ``rule(value)`` holds; ``what`` says what the rule asks."""

    def __init__(self, shape, rule, what):
        self.shape, self.rule, self.what = shape, rule, what

    @property
    def types(self):
        return self.shape.types

    def check(self, value, path):
        self.shape.check(value, path)
        if not self.rule(value):
            raise ShapeError(self.what, path)

    def describe(self):
        return self.shape.describe()


def check(value, shape, path="value"):
    """Raise :class:`ShapeError` unless ``value`` has ``shape`` (None: any)."""
    if shape is not None:
        shape.check(value, path)
