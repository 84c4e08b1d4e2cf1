"""The judge's reference runs, computed once and shared.

Many checks compare a student's run with a reference run of the same spec:
a framework's own implementation, an oracle's computation. Such a run depends on
its spec alone, and in a class every student gets the same specs (one seed),
so a batch's grading process (:mod:`autograder.batch.slots`), which grades one
student after another, computes each reference once for all of them.

A reference is kept as the plain data of the sandbox's wire codec (tensors,
numbers, strings, lists, tuples, dicts) and every caller -- the first one
included -- gets a fresh decoded copy: a student graded from the cache sees
exactly what one graded without it sees, and no check can change what the
next one reads. A value the codec cannot carry is never kept.
"""
import json

from autograder.sandbox import wire

_known = {}   # key -> the encoded value (plain data: decoding never changes it)
MAX_ENTRIES = 4096  # a class's seed needs a few dozen; a long session's memory stays bounded
_TRUSTED = {"nodes": 10**7, "tensor_bytes": 2**31}  # the judge's own values: no answer's bounds


def _key(kind, spec):
    try:
        return json.dumps([kind, spec], sort_keys=True)
    except (TypeError, ValueError):  # a spec that is not plain data: not kept
        return None


def _opaque(node):
    if isinstance(node, dict):
        return "$opaque" in node or any(_opaque(value) for value in node.values())
    if isinstance(node, list):
        return any(_opaque(value) for value in node)
    return False


def cached(kind, spec, compute):
    """``compute()``'s value for ``(kind, spec)``, computed at most once per process
    (a batch's grading process, a ``watch`` session) while the seed stays."""
    key = _key(kind, spec)
    encoded = _known.get(key) if key is not None else None
    if encoded is None:
        value = compute()
        encoded = wire.encode_value(value)
        if key is None or _opaque(encoded):
            return value
        if len(_known) >= MAX_ENTRIES:
            _known.clear()
        _known[key] = encoded
    return wire.decode_value(encoded, budget=wire.DecodeBudget(**_TRUSTED))


def clear():
    _known.clear()


def entries():
    """What is kept now (key -> plain data): a grading process forked for one module hands
    back what it computed (:func:`keep`), so that the next grade of a ``watch`` session
    finds it."""
    return dict(_known)


def keep(found):
    """Keep ``found`` (from :func:`entries` of another process of this judge)."""
    if len(_known) + len(found) > MAX_ENTRIES:
        _known.clear()
    _known.update(found)
