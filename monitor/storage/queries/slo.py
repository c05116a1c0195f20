"""Good and bad probes of SLO scopes over a period and over its burn-rate windows, from the rollups
(DESIGN §9, §12): a month of 1-minute probes for 200 targets is ~150,000 hourly rows or ~6,000
daily ones, never 8.6 M raw samples.

The period's whole UTC days come from the daily tier, its edges and the burn-rate windows (the
longest is a tenth of the period) from the hourly one. A probe is good when ok and within every
bound; the rollups keep a histogram per metric (`storage.histogram`, buckets 1/32 of an octave
wide), so a bound counts the buckets wholly beyond it as bad and the bucket it cuts in proportion
(at most one bucket, <= 3.1 % of the bound's value, is shared). With several bounds a probe may
break more than one: their bad counts are added (capped at the ok probes), which never reports more
attainment than there was. Probes that failed only their answer checks count as good under
`checks: false` (the rollups keep no latency for failed probes). Windows read whole hours: the
hour holding `end - W` and every one after it. The live alerts (`alerts/slo_evaluator.py`) judge
raw samples exactly; this is the status and dashboard view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from sqlalchemy import Engine, Text, and_, cast, func, or_, select

from monitor.storage.models import RollupDaily, RollupHourly
from monitor.storage.queries.dashfetch import cancelled_count, epoch_s, fetch_rows
from monitor.storage.queries.histmatrix import decode, decode_packed
from monitor.storage.queries.routes import daily_span
from monitor.storage.rollups import DAY, hour_floor

_R = RollupHourly.__table__.c
_D = RollupDaily.__table__.c
PACKED = {"ttft_ms": "ttft_ms_packed", "tps": "tps_packed"}
ASSERTION = "assertion"


@dataclass(frozen=True)
class Bound:
    metric: str
    below: float | None = None  # good values are strictly below
    above: float | None = None  # good values are strictly above


@dataclass(frozen=True)
class ScopeCounts:
    """Per group (an SLO's scope): probes and good ones over the period; per window length, probes
    and bad ones; per UTC day of the period (epoch seconds of its midnight), probes and good ones."""

    probes: np.ndarray
    good: np.ndarray
    window_probes: Mapping[float, np.ndarray] = field(default_factory=dict)
    window_bad: Mapping[float, np.ndarray] = field(default_factory=dict)
    days: np.ndarray = field(default_factory=lambda: np.zeros(0))
    day_probes: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (groups, days)
    day_good: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


def bad_fraction(buckets: np.ndarray, bound: Bound) -> np.ndarray:
    """Per histogram bucket, the share of its values that break the bound (uniform within a bucket)."""
    from monitor.storage.histogram import SUB_BUCKETS

    octave = np.floor_divide(buckets, SUB_BUCKETS)
    slice_ = buckets - octave * SUB_BUCKETS
    base = np.exp2(octave.astype(float))
    low, high = base * (1 + slice_ / SUB_BUCKETS), base * (1 + (slice_ + 1) / SUB_BUCKETS)
    if bound.below is not None:
        return np.clip((high - bound.below) / (high - low), 0.0, 1.0)
    return np.clip((bound.above - low) / (high - low), 0.0, 1.0)


def scope_counts(
    engine: Engine,
    group_of_target: Mapping[str, int],
    n_groups: int,
    bounds: Sequence[Bound],
    *,
    checks: bool,
    start: datetime,
    end: datetime,
    windows_s: Sequence[float] = (),
) -> ScopeCounts:
    ids = sorted(group_of_target)
    longest = max(windows_s, default=0.0)
    recent = min(end, max(start, hour_floor(end - _seconds(longest)))) if windows_s else end
    span = daily_span(engine, start, recent) if ids else None
    hourly = and_(_R.target.in_(ids), _R.hour >= start, _R.hour < end)
    if span is not None:
        hourly = and_(hourly, or_(_R.hour < span[0], _R.hour >= span[1]))
    tiers = [_rows(engine, _R, epoch_s(_R.hour, engine), hourly, bounds, packed=False)] if ids else []
    if span is not None:
        daily = and_(_D.target.in_(ids), _D.day >= span[0], _D.day < span[1])
        tiers.append(_rows(engine, _D, epoch_s(_D.day, engine), daily, bounds, packed=True))
    target_of, bin_s, probes, ok, asserted, violations = (
        (np.concatenate(parts) for parts in zip(*tiers, strict=True)) if tiers else (np.zeros(0),) * 6
    )
    group = np.fromiter((group_of_target[t] for t in target_of), dtype=np.int64, count=len(target_of))
    bad_ok = np.minimum(violations, ok)  # several bounds: added, never more than the ok probes
    good = ok - bad_ok + (0 if checks else asserted)
    counts = ScopeCounts(
        np.bincount(group, weights=probes, minlength=n_groups).round().astype(np.int64),
        np.bincount(group, weights=good, minlength=n_groups).round().astype(np.int64),
    )
    window_probes, window_bad = {}, {}
    end_s = end.timestamp()
    for length in windows_s:
        floor_s = hour_floor(end - _seconds(length)).timestamp()
        inside = bin_s >= floor_s - 0.5
        p = np.bincount(group[inside], weights=probes[inside], minlength=n_groups)
        g = np.bincount(group[inside], weights=good[inside], minlength=n_groups)
        window_probes[length] = p.round().astype(np.int64)
        window_bad[length] = (p - g).round().astype(np.int64)
    first_day = start.timestamp() // 86400 * 86400
    n_days = int((end_s - first_day) // 86400) + 1
    day = np.clip(((bin_s + 0.5 - first_day) // 86400).astype(np.int64), 0, n_days - 1)
    flat = group * n_days + day
    size = n_groups * n_days
    return ScopeCounts(
        counts.probes,
        counts.good,
        window_probes,
        window_bad,
        first_day + 86400.0 * np.arange(n_days),
        np.bincount(flat, weights=probes, minlength=size).reshape(n_groups, n_days).round().astype(np.int64),
        np.bincount(flat, weights=good, minlength=size).reshape(n_groups, n_days).round(),
    )


def _seconds(length_s: float):
    from datetime import timedelta

    return timedelta(seconds=length_s)


def _rows(engine: Engine, c, at, where, bounds: Sequence[Bound], *, packed: bool):
    """One tier: per row (target, bin start in epoch s, measured probes, ok, answer-check failures,
    ok probes breaking the bounds)."""
    asserted = func.coalesce(c.error_counts[ASSERTION].as_integer(), 0)
    hists = []
    for b in bounds:
        hists.append(c[PACKED[b.metric]] if packed and b.metric in PACKED else cast(c[f"{b.metric}_hist"], Text))
        hists.append(c[f"{b.metric}_count"])
    query = select(c.target, at, c.samples - cancelled_count(c), c.ok_count, asserted, *hists).where(where)
    rows = fetch_rows(engine, query)
    n = len(rows)
    if not n:
        empty = np.zeros(0)
        return np.array([], dtype=object), empty, empty, empty, empty, empty
    cols = list(zip(*rows, strict=True))
    ok = np.array(cols[3], dtype=float)
    violations = np.zeros(n)
    for k, b in enumerate(bounds):
        stored, measured = cols[5 + 2 * k], np.array(cols[6 + 2 * k], dtype=float)
        is_packed = packed and b.metric in PACKED
        row, buckets, count = decode_packed(stored) if is_packed else decode([_text(s) for s in stored])
        violations += np.bincount(row, weights=count * bad_fraction(buckets, b), minlength=n) if row.size else 0.0
        violations += ok - measured  # ok probes that did not measure this value cannot show they met it
    return (
        np.array(cols[0], dtype=object),
        np.array(cols[1], dtype=float),
        np.array(cols[2], dtype=float),
        ok,
        np.array(cols[4], dtype=float),
        violations,
    )


def _text(value) -> str | None:
    if value is None or isinstance(value, str):
        return value
    import json

    return json.dumps(value)


__all__ = ["DAY", "Bound", "ScopeCounts", "bad_fraction", "scope_counts"]
