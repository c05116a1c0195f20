"""Mergeable log-linear histograms for hourly rollups (pure).

A value v > 0 falls in octave `e = floor(log2 v)` and, inside it, in one of
`SUB_BUCKETS` equal-width slices. Bucket `e * SUB_BUCKETS + s` covers
`[2**e * (1 + s/S), 2**e * (1 + (s+1)/S))`; reporting its midpoint is off by at
most `1 / (2 S)` of the true value: 1.56 % with S = 32, inside the 2 % budget.
The scheme is scale-free, so the same buckets serve milliseconds (0.1 ms … 10 min
is ~23 octaves) and tokens/s (0.1 … 100,000 is ~20 octaves).

A histogram is a sparse `dict[int, int]` {bucket: count}; merging is adding
counts, so any span of hours can be summarised from the hourly rows. Stored as
compact JSON text with string keys (`{"-97":3,"210":1}`).

The bucket formula is mirrored in SQL by `rollups_pg.py`; both use
`ln(v) / ln(2)` and clamp the slice, so rounding at an exact octave edge can
only move a value into the neighbouring bucket, whose midpoint is still within
the bound.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterable, Mapping

SUB_BUCKETS = 32
MAX_RELATIVE_ERROR = 1 / (2 * SUB_BUCKETS)
# Values are clamped into this range: zero or negative durations (clock quirks)
# land in the lowest bucket instead of breaking the log.
MIN_VALUE = 1e-3
MAX_VALUE = 1e9
_LN2 = math.log(2.0)

Histogram = dict[int, int]


def bucket_of(value: float) -> int:
    v = min(max(value, MIN_VALUE), MAX_VALUE)
    octave = math.floor(math.log(v) / _LN2)
    slice_ = math.floor((v / 2.0**octave - 1.0) * SUB_BUCKETS)
    return octave * SUB_BUCKETS + min(max(slice_, 0), SUB_BUCKETS - 1)


def bucket_bounds(bucket: int) -> tuple[float, float]:
    octave, slice_ = divmod(bucket, SUB_BUCKETS)
    base = 2.0**octave
    return base * (1 + slice_ / SUB_BUCKETS), base * (1 + (slice_ + 1) / SUB_BUCKETS)


def bucket_value(bucket: int) -> float:
    low, high = bucket_bounds(bucket)
    return (low + high) / 2


def from_values(values: Iterable[float | None]) -> Histogram:
    hist: Histogram = {}
    for value in values:
        if value is None or not math.isfinite(value):
            continue
        b = bucket_of(value)
        hist[b] = hist.get(b, 0) + 1
    return hist


def merge(hists: Iterable[Mapping[int, int]]) -> Histogram:
    out: Histogram = {}
    for hist in hists:
        for b, n in hist.items():
            out[b] = out.get(b, 0) + n
    return out


def count(hist: Mapping[int, int]) -> int:
    return sum(hist.values())


def quantile(hist: Mapping[int, int], q: float) -> float | None:
    """The q-quantile (0..1) with numpy's default 'linear' rank rule.

    Rank `q * (n - 1)` is interpolated between the two neighbouring order
    statistics, each represented by its bucket's midpoint; a positive blend of
    values that are each within the bound is itself within the bound.
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError("q must be between 0 and 1")
    return quantiles(hist, (q,))[0]


def quantiles(hist: Mapping[int, int], qs: Iterable[float]) -> list[float | None]:
    items = sorted((b, n) for b, n in hist.items() if n > 0)
    total = sum(n for _, n in items)
    if total == 0:
        return [None for _ in qs]
    return [_quantile_sorted(items, total, q) for q in qs]


def _quantile_sorted(items: list[tuple[int, int]], total: int, q: float) -> float:
    rank = q * (total - 1)
    low_rank = math.floor(rank)
    frac = rank - low_rank
    low = _value_at(items, low_rank)
    if frac == 0.0:
        return low
    high = _value_at(items, low_rank + 1)
    return low + (high - low) * frac


def _value_at(items: list[tuple[int, int]], rank: int) -> float:
    seen = 0
    for b, n in items:
        seen += n
        if rank < seen:
            return bucket_value(b)
    return bucket_value(items[-1][0])


def to_json(hist: Mapping[int, int]) -> str:
    return json.dumps({str(b): n for b, n in sorted(hist.items()) if n}, separators=(",", ":"))


def pack(hist: Mapping[int, int]) -> bytes:
    """The compact binary form the daily rollups also keep: (bucket, count) pairs as
    little-endian int32, buckets ascending, no empty buckets (`histmatrix.decode_packed`)."""
    flat = [v for b, n in sorted(hist.items()) if n for v in (b, n)]
    return struct.pack(f"<{len(flat)}i", *flat)


def unpack(data: bytes | None) -> Histogram:
    if not data:
        return {}
    flat = struct.unpack(f"<{len(data) // 4}i", data)
    return dict(zip(flat[0::2], flat[1::2], strict=True))


def from_json(data: str | Mapping[str, int] | None) -> Histogram:
    """Accepts the stored text, or the dict a JSON column already decoded."""
    if data is None:
        return {}
    raw = json.loads(data) if isinstance(data, str) else data
    return {int(b): int(n) for b, n in raw.items()}
