"""The lab's statistics and its strict-JSON numbers: the median and nearest-rank P95 of the
measured step times (their definitions are written into every record), and non-finite values
turned into null."""
from __future__ import annotations

import math

MEDIAN_DEFINITION = (
    "middle value of the sorted measured step times; the mean of the two middle values "
    "when their count is even"
)
P95_DEFINITION = "nearest rank: the ceil(0.95 * n)-th smallest measured step time"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of an empty list")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def percentile_nearest_rank(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of an empty list")
    rank = max(1, math.ceil(percent / 100.0 * len(ordered)))
    return float(ordered[rank - 1])


def finite_or_none(value):
    """JSON has no NaN/Infinity: a non-finite measurement is recorded as null."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def strip_non_finite(obj):
    if isinstance(obj, float):
        return finite_or_none(obj)
    if isinstance(obj, dict):
        return {key: strip_non_finite(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strip_non_finite(value) for value in obj]
    return obj
