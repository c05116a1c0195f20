"""Vectorised percentiles for the dashboard (pure numpy, no database).

Two sources, one answer shape (`(groups, len(qs))` arrays, NaN where a group
is empty):

- `hist_quantiles`: hourly-rollup histograms (their compact JSON text,
  `{"-97":3,"210":1}`) merged per group. Decoding tens of thousands of
  histograms one `json.loads` and one dict merge at a time cost more than the
  query itself; here all texts become one comma-separated string parsed by
  numpy in C, and merging is one `bincount`. Results equal
  `monitor.storage.histogram.quantiles` on the merged histogram (same bucket
  midpoints, same 'linear' rank rule), so the ≤ 2% error bound carries over.
  `packed_quantiles` merges texts with packed histograms (`histogram.pack`,
  the daily rollups' binary copy), which numpy reads without parsing.
- `value_quantiles`: raw values per group, numpy's default 'linear' method,
  without a Python loop over groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from monitor.storage.histogram import SUB_BUCKETS

_STRIP = str.maketrans({"{": None, "}": None, '"': None, " ": None, ":": ","})


def bucket_midpoints(buckets: np.ndarray) -> np.ndarray:
    """`histogram.bucket_value`, vectorised (floor division matches Python's divmod)."""
    octave = np.floor_divide(buckets, SUB_BUCKETS)
    slice_ = buckets - octave * SUB_BUCKETS
    return np.exp2(octave.astype(float)) * (1 + (slice_ + 0.5) / SUB_BUCKETS)


def decode(texts: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row index, bucket, count) of every entry of every histogram text."""
    texts = [t if t and t != "{}" else "" for t in texts]
    sizes = np.fromiter((t.count(":") for t in texts), dtype=np.int64, count=len(texts))
    joined = ",".join(t for t in texts if t).translate(_STRIP)
    if ",," in joined or joined.startswith(",") or joined.endswith(","):
        # A rollup bucket aggregated in SQL joins each row's text, empty ones ("{}") too:
        # a target whose probes never measured a metric (no TPS with one-token answers).
        joined = ",".join(part for part in joined.split(",") if part)
    if not joined:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    flat = _parse_ints(joined)
    pairs = flat.reshape(-1, 2)
    rows = np.repeat(np.arange(len(texts)), sizes)
    return rows, pairs[:, 0], pairs[:, 1]


def _parse_ints(joined: str) -> np.ndarray:
    # np.fromstring's text mode parses ~30 M ints/s; it is deprecated only for binary input.
    return np.fromstring(joined, dtype=np.int64, sep=",")


def decode_packed(blobs: Sequence[bytes | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row index, bucket, count) of every entry of every packed histogram."""
    blobs = [b or b"" for b in blobs]
    sizes = np.fromiter((len(b) // 8 for b in blobs), dtype=np.int64, count=len(blobs))
    pairs = np.frombuffer(b"".join(blobs), dtype="<i4").reshape(-1, 2).astype(np.int64)
    return np.repeat(np.arange(len(blobs)), sizes), pairs[:, 0], pairs[:, 1]


def merged_counts(texts: Sequence[str | None], group_of_row: np.ndarray, n_groups: int):
    """(bucket midpoints (B,), counts (n_groups, B)): histograms summed per group."""
    rows, buckets, counts = decode(texts)
    return _merge(np.asarray(group_of_row)[rows] if rows.size else rows, buckets, counts, n_groups)


def _merge(groups: np.ndarray, buckets: np.ndarray, counts: np.ndarray, n_groups: int):
    """`merged_counts` from entries already decoded, each with its group."""
    if buckets.size == 0:
        return np.zeros(0), np.zeros((n_groups, 0), dtype=np.int64)
    # Buckets are small integers: offsetting beats a sort (np.unique) on 10^6 entries.
    low = int(buckets.min())
    width = int(buckets.max()) - low + 1
    flat = groups * width + (buckets - low)
    dense = np.bincount(flat, weights=counts, minlength=n_groups * width).reshape(n_groups, width)
    used = np.flatnonzero(dense.any(axis=0))
    return bucket_midpoints(used + low), dense[:, used].astype(np.int64)


def counts_quantiles(midpoints: np.ndarray, counts: np.ndarray, qs: Sequence[float]) -> np.ndarray:
    """Quantiles of each row of a dense (groups, buckets) count matrix."""
    n_groups = counts.shape[0]
    out = np.full((n_groups, len(qs)), np.nan)
    if counts.size == 0:
        return out
    cum = np.cumsum(counts, axis=1)
    total = cum[:, -1]
    has = total > 0
    last = counts.shape[1] - 1
    for j, q in enumerate(qs):
        rank = q * (total - 1)
        low = np.floor(rank)
        frac = rank - low
        # Index of the first bucket whose cumulative count exceeds the rank.
        i_low = np.minimum((cum <= low[:, None]).sum(axis=1), last)
        i_high = np.minimum((cum <= (low + 1)[:, None]).sum(axis=1), last)
        v_low, v_high = midpoints[i_low], midpoints[i_high]
        value = np.where(frac > 0, v_low + (v_high - v_low) * frac, v_low)
        out[:, j] = np.where(has, value, np.nan)
    return out


def hist_quantiles(
    texts: Sequence[str | None], group_of_row: np.ndarray, n_groups: int, qs: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """(quantiles (n_groups, len(qs)), sample count per group) of merged histograms."""
    mids, counts = merged_counts(texts, group_of_row, n_groups)
    return counts_quantiles(mids, counts, qs), counts.sum(axis=1) if counts.size else np.zeros(n_groups, np.int64)


def packed_quantiles(
    texts: Sequence[str | None],
    group_of_text: np.ndarray,
    blobs: Sequence[bytes | None],
    group_of_blob: np.ndarray,
    n_groups: int,
    qs: Sequence[float],
) -> np.ndarray:
    """Quantiles (n_groups, len(qs)) of histograms merged per group, some given as JSON texts and
    some packed; the same figures `hist_quantiles` gives had all been texts."""
    t_rows, t_buckets, t_counts = decode(texts)
    p_rows, p_buckets, p_counts = decode_packed(blobs)
    groups = np.concatenate(
        (np.asarray(group_of_text, dtype=np.int64)[t_rows], np.asarray(group_of_blob, dtype=np.int64)[p_rows])
    )
    mids, counts = _merge(
        groups, np.concatenate((t_buckets, p_buckets)), np.concatenate((t_counts, p_counts)), n_groups
    )
    return counts_quantiles(mids, counts, qs)


def value_quantiles(
    values: np.ndarray, group_of_value: np.ndarray, n_groups: int, qs: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """(quantiles (n_groups, len(qs)), count per group) of raw values; NaN values are ignored."""
    values = np.asarray(values, dtype=float)
    groups = np.asarray(group_of_value, dtype=np.int64)
    keep = ~np.isnan(values)
    values, groups = values[keep], groups[keep]
    order = np.lexsort((values, groups))
    values, groups = values[order], groups[order]
    sizes = np.bincount(groups, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out = np.full((n_groups, len(qs)), np.nan)
    has = sizes > 0
    if not has.any():
        return out, sizes
    for j, q in enumerate(qs):
        rank = q * (sizes[has] - 1)
        low = np.floor(rank).astype(np.int64)
        frac = rank - low
        high = np.minimum(low + 1, sizes[has] - 1)
        v_low = values[starts[has] + low]
        v_high = values[starts[has] + high]
        out[has, j] = v_low + (v_high - v_low) * frac
    return out, sizes
