"""The judge's reference runs, computed once and shared.

Many checks compare a student's run with a reference run of the same spec:
PyTorch's own GradScaler, an oracle's training step. Such a run depends on
its spec alone, and in a class every student gets the same specs (one seed),
so a batch computes each reference once: a grading child hands what it
computed back to the batch's judge process (:func:`export`, :func:`merge`),
and the children forked after it find it there.

A reference is kept as the plain data of the sandbox's wire codec (tensors,
numbers, strings, lists, tuples, dicts) and every caller -- the first one
included -- gets a fresh decoded copy: a student graded from the cache sees
exactly what one graded without it sees, and no check can change what the
next one reads. A value the codec cannot carry is never kept.
"""
import json
import os

from autograder.sandbox import wire

_known = {}   # key -> JSON text of the encoded value
_fresh = {}   # computed in this process: what a grading child hands back
_TRUSTED = {"nodes": 10**7, "tensor_bytes": 2**31}  # the judge's own values: no answer's bounds
MAX_EXPORT_BYTES = 256 * 2**20


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
    """``compute()``'s value for ``(kind, spec)``, computed at most once per class."""
    key = _key(kind, spec)
    text = _known.get(key) if key is not None else None
    if text is None:
        value = compute()
        encoded = wire.encode_value(value)
        if key is None or _opaque(encoded):
            return value
        text = _known[key] = _fresh[key] = json.dumps(encoded, allow_nan=False)
    return wire.decode_value(json.loads(text), budget=wire.DecodeBudget(**_TRUSTED))


def export(fd):
    """(A grading child) Write what this process computed to ``fd``."""
    data = json.dumps(_fresh).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def merge(fd):
    """(The batch's judge) Take in what a finished grading child wrote to ``fd``
    (a file of this process's own, never one a student can reach)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_EXPORT_BYTES + 1)
        entries = json.loads(data.decode()) if data and len(data) <= MAX_EXPORT_BYTES else {}
    except (OSError, ValueError):
        return 0
    added = 0
    if isinstance(entries, dict):
        for key, text in entries.items():
            if isinstance(key, str) and isinstance(text, str) and key not in _known:
                _known[key] = text
                added += 1
    return added


def clear():
    _known.clear()
    _fresh.clear()
