"""Good and bad probes of SLO scopes over a period and over its burn-rate windows, from the rollups
(DESIGN §9, §12): a month of 1-minute probes for 200 targets is ~5,400 daily rows and a few
thousand hourly ones, never 8.6 M raw samples.

The tiers follow `queries.tiers` (rollups only, whatever the length): whole UTC days come from the
daily tier, except the days a burn-rate window starts inside (the longest window is a tenth of the
period; the window starts are the plan's cuts) and the current day, which come from the hourly tier
merged in the database per target, day and stretch between window starts. A probe is good when ok and
within every bound; the rollups keep a histogram per metric (`storage.histogram`, buckets 1/32 of
an octave wide), so a bound counts the buckets wholly beyond it as bad and the bucket it cuts in
proportion (at most one bucket, <= 3.1 % of the bound's value, is shared). With several bounds a
probe may break more than one: their bad counts are added (capped at the ok probes), which never
reports more attainment than there was. Probes that failed only their answer checks count as good
under `checks: false` (the rollups keep no latency for failed probes). Windows read whole hours:
the hour holding `end - W` and every one after it; the period likewise starts at its first whole
hour. The live alerts (`alerts/slo_source.py`) judge raw samples exactly; this is the status
and dashboard view.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from sqlalchemy import Engine, Float, Text, and_, case, cast, func, literal, or_, select

from monitor.storage.models import RollupDaily, RollupHourly, SampleRow
from monitor.storage.queries.dashfetch import CANCELLED, cancelled_count, epoch_s, fetch_rows
from monitor.storage.queries.histmatrix import decode, decode_packed
from monitor.storage.queries.tierread import in_spans, read_plan
from monitor.storage.queries.tiers import Plan
from monitor.storage.rollups import DAY, hour_floor

_R = RollupHourly.__table__.c
_D = RollupDaily.__table__.c
_S = SampleRow.__table__.c
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
    # Per group, the start (epoch s) of the first rollup hour in [start, end) holding one of its
    # probes; NaN: none. How much of the period its data spans (monitor.slo.budget).
    first_s: np.ndarray = field(default_factory=lambda: np.zeros(0))


def bad_fraction(buckets: np.ndarray, bound: Bound) -> np.ndarray:
    """Per histogram bucket, the share of its values that break the bound (uniform within a bucket).
    Computed once per distinct bucket (a few hundred) and looked up for the ~10^6 entries of a month."""
    from monitor.storage.histogram import SUB_BUCKETS

    if buckets.size == 0:
        return np.zeros(0)
    low_bucket = int(buckets.min())
    distinct = np.arange(low_bucket, int(buckets.max()) + 1)
    octave = np.floor_divide(distinct, SUB_BUCKETS)
    slice_ = distinct - octave * SUB_BUCKETS
    base = np.exp2(octave.astype(float))
    low, high = base * (1 + slice_ / SUB_BUCKETS), base * (1 + (slice_ + 1) / SUB_BUCKETS)
    if bound.below is not None:
        table = np.clip((high - bound.below) / (high - low), 0.0, 1.0)
    else:
        table = np.clip((bound.above - low) / (high - low), 0.0, 1.0)
    return table[buckets - low_bucket]


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
    excluded: Mapping[str, Sequence[tuple[datetime, datetime]]] | None = None,
) -> ScopeCounts:
    """`excluded`: per target, spans whose probes do not count (maintenance windows, DESIGN §16):
    their raw samples are judged and taken back out of what the rollups hold (`_excluded_rows`)."""
    ids = sorted(group_of_target)
    cuts = sorted({hour_floor(end - _seconds(w)) for w in windows_s})  # a window reads from its start's hour
    plan = read_plan(engine, start, end, cuts=cuts, raw=False) if ids else Plan()
    parts = []
    if plan.hours:
        hourly = and_(_R.target.in_(ids), in_spans(_R.hour, plan.hours))
        parts.append(_rows(engine, _grouped_hours(engine, hourly, bounds, cuts, checks), bounds, packed=False))
    if plan.days:
        daily = and_(_D.target.in_(ids), in_spans(_D.day, plan.days))
        parts.append(_rows(engine, _day_rows(engine, daily, bounds, checks), bounds, packed=True))
    target_of, bin_s, probes, ok, asserted, violations = (
        (np.concatenate(cols) for cols in zip(*parts, strict=True)) if parts else (np.zeros(0),) * 6
    )
    group = np.fromiter((group_of_target[t] for t in target_of), dtype=np.int64, count=len(target_of))
    first_s = _first_hours(engine, group_of_target, n_groups, target_of, group, bin_s, probes, plan.day_starts())
    bad_ok = np.minimum(violations, ok)  # several bounds: added, never more than the ok probes
    good = ok - bad_ok + (0 if checks else asserted)
    if excluded:
        out_target, out_bin, out_good = _excluded_rows(engine, plan, excluded, group_of_target, bounds, checks)
        if out_target.size:
            group = np.concatenate([group, np.array([group_of_target[t] for t in out_target], dtype=np.int64)])
            bin_s = np.concatenate([bin_s, out_bin])
            probes = np.concatenate([probes, -np.ones(out_target.size)])
            good = np.concatenate([good, -out_good])
    counts = ScopeCounts(
        _at_least_0(np.bincount(group, weights=probes, minlength=n_groups)),
        _at_least_0(np.bincount(group, weights=good, minlength=n_groups)),
    )
    window_probes, window_bad = {}, {}
    end_s = end.timestamp()
    for length in windows_s:
        floor_s = hour_floor(end - _seconds(length)).timestamp()
        inside = bin_s >= floor_s - 0.5
        p = np.bincount(group[inside], weights=probes[inside], minlength=n_groups)
        g = np.bincount(group[inside], weights=good[inside], minlength=n_groups)
        window_probes[length] = _at_least_0(p)
        window_bad[length] = _at_least_0(p - g)
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
        _at_least_0(np.bincount(flat, weights=probes, minlength=size).reshape(n_groups, n_days)),
        np.maximum(np.bincount(flat, weights=good, minlength=size).reshape(n_groups, n_days).round(), 0.0),
        first_s,
    )


def _at_least_0(counts: np.ndarray) -> np.ndarray:
    """Whole counts; never below 0 (a maintenance window's newest probes may not be rolled up yet
    when they are taken back out)."""
    return np.maximum(counts.round(), 0).astype(np.int64)


EXCLUDED_CHUNK = 100  # (span, targets) conditions per query: SQLite's expression depth is 1000


def _excluded_rows(
    engine: Engine,
    plan: Plan,
    excluded: Mapping[str, Sequence[tuple[datetime, datetime]]],
    group_of_target: Mapping[str, int],
    bounds: Sequence[Bound],
    checks: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The raw probes inside the excluded spans that the rollups read here counted: per probe its
    target, the start of the rollup bin that holds it (its hour, or its UTC day where the daily tier
    serves) and 1.0 if it counted as good, judged as the rollups judge (`_judged`). Maintenance windows
    are short, so this reads a few raw samples; once their raw samples are gone (retention) nothing
    is taken out."""
    by_span: dict[tuple[datetime, datetime, bool], list[str]] = {}
    tiers = [(span, False) for span in plan.hours] + [(span, True) for span in plan.days]
    for target, spans in excluded.items():
        if target not in group_of_target:
            continue
        for begins, ends in spans:
            for span, daily in tiers:
                lo, hi = max(begins, span.start), min(ends, span.end)
                if lo < hi:
                    by_span.setdefault((lo, hi, daily), []).append(target)
    c = _S
    metrics = sorted({b.metric for b in bounds})
    columns = [c.target, epoch_s(c.started_at, engine), c.ok, c.error_kind, c.cache_state, *(c[m] for m in metrics)]
    keys = list(by_span)
    targets, bins, goods = [], [], []
    for at in range(0, len(keys), EXCLUDED_CHUNK):
        chunk = keys[at : at + EXCLUDED_CHUNK]
        where = or_(*(and_(c.target.in_(sorted(by_span[k])), c.started_at >= k[0], c.started_at < k[1]) for k in chunk))
        daily_spans = [(k[0].timestamp(), k[1].timestamp()) for k in chunk if k[2]]
        for target, started_s, ok, error_kind, cache_state, *values in fetch_rows(
            engine, select(*columns).where(where)
        ):
            if error_kind == CANCELLED:
                continue  # the rollups leave cancelled probes out too
            started_s = round(float(started_s), 3)  # SQLite's julianday arithmetic is a few µs off
            step = 86400.0 if any(lo <= started_s < hi for lo, hi in daily_spans) else 3600.0
            targets.append(target)
            bins.append(math.floor(started_s / step) * step)
            goods.append(
                _judged(bool(ok), error_kind, cache_state, dict(zip(metrics, values, strict=True)), bounds, checks)
            )
    return np.array(targets, dtype=object), np.array(bins, dtype=float), np.array(goods, dtype=float)


def _judged(
    ok: bool, error_kind, cache_state, values: Mapping[str, float | None], bounds: Sequence[Bound], checks: bool
) -> float:
    """1.0 if the rollups counted this probe good: ok and within every bound (a warm half measures
    only its TTFT there, `_columns`), or under `checks: false` a probe that failed only its checks."""
    if not ok:
        return 1.0 if error_kind == ASSERTION and not checks else 0.0
    for b in bounds:
        value = values.get(b.metric)
        if value is None or (cache_state == "warm" and b.metric != "ttft_ms"):
            return 0.0
        if (b.below is not None and not value < b.below) or (b.above is not None and not value > b.above):
            return 0.0
    return 1.0


def _first_hours(
    engine: Engine,
    group_of_target: Mapping[str, int],
    n_groups: int,
    target_of: np.ndarray,
    group: np.ndarray,
    bin_s: np.ndarray,
    probes: np.ndarray,
    days: Sequence[datetime],
) -> np.ndarray:
    """Per group, the first hour holding a probe (NaN: none). A bin of the hourly tier starts at its
    first hour already; a day of the daily tier starts at midnight, maybe hours before its probes
    began (a young target), so for the groups whose first bin is such a day, that day's hourly rows
    of the targets in it are read: one day of a few targets, and only while the data is younger
    than the period."""
    first = np.full(n_groups, np.nan)
    held = probes > 0
    np.fmin.at(first, group[held], bin_s[held])
    daily_s = {round(d.timestamp()) for d in days}
    by_day: dict[int, set[str]] = {}
    for t, g, b in zip(target_of[held], group[held], bin_s[held], strict=True):
        if b == first[g] and round(b) in daily_s:
            by_day.setdefault(round(b), set()).add(t)
    if not by_day:
        return first
    where = or_(
        *(
            and_(_R.target.in_(sorted(ts)), _R.hour >= _utc(day_s), _R.hour < _utc(day_s) + DAY)
            for day_s, ts in sorted(by_day.items())
        )
    )
    query = select(_R.target, func.min(epoch_s(_R.hour, engine))).where(where).group_by(_R.target)
    refined: dict[int, float] = {}
    for target, hour_s in fetch_rows(engine, query):
        g = group_of_target[target]
        # Whole seconds: SQLite's julianday arithmetic lands a few µs off the hour.
        refined[g] = min(refined.get(g, math.inf), float(round(hour_s)))
    for g, hour_s in refined.items():
        first[g] = hour_s
    return first


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _seconds(length_s: float):
    from datetime import timedelta

    return timedelta(seconds=length_s)


def _asserted(c, checks: bool):
    """Probes that failed only their answer checks: counted under `checks: false` alone (read with
    `cancelled_count`'s LIKE first: parsing every row's JSON costs more than the rest of the scan)."""
    if checks:
        return literal(0)
    has = cast(c.error_counts, Text).like(f'%"{ASSERTION}"%')
    return case((has, func.coalesce(c.error_counts[ASSERTION].as_integer(), 0)), else_=0)


def _columns(bound: Bound) -> tuple[str, ...]:
    """The rollup histograms that hold a bound's metric. A cache probe's warm half (DESIGN §13) is kept
    apart from `ttft_ms_hist` (the route's figure is the cold half) but is a probe like any other for
    an SLO, as the live alerts judge it: a TTFT bound reads both. The rollups keep no other latency of
    a warm half, so a bound on those counts warm halves as not measured, hence bad."""
    return (bound.metric, "warm_ttft_ms") if bound.metric == "ttft_ms" else (bound.metric,)


def _day_rows(engine: Engine, where, bounds: Sequence[Bound], checks: bool):
    """The daily tier's rows as they are (packed histograms where kept)."""
    c = _D
    hists = []
    for b in bounds:
        for m in _columns(b):
            hists += [c[PACKED[m]] if m in PACKED else cast(c[f"{m}_hist"], Text), c[f"{m}_count"]]
    return select(
        c.target, epoch_s(c.day, engine), c.samples - cancelled_count(c), c.ok_count, _asserted(c, checks), *hists
    ).where(where)


def _grouped_hours(engine: Engine, where, bounds: Sequence[Bound], cuts: Sequence[datetime], checks: bool):
    """The hourly tier merged in the database per target, UTC day and stretch between window starts
    (`cuts`): a row per target and window per day instead of one per hour, histogram texts joined
    (`histmatrix.decode` reads `{..},{..}` as one histogram). Each group lies wholly inside or
    outside every window, so its earliest hour decides."""
    c = _R
    pg = engine.dialect.name == "postgresql"
    segments = [case(*((c.hour >= cut, i + 1) for i, cut in reversed(list(enumerate(cuts)))), else_=0)] if cuts else []
    # The UTC day whatever the session's TimeZone (SQLite keeps naive UTC text).
    day = func.date_trunc("day", func.timezone("UTC", c.hour)) if pg else func.substr(cast(c.hour, Text), 1, 10)
    joined = []
    for m in (m for b in bounds for m in _columns(b)):
        text_ = case((c[f"{m}_count"] > 0, cast(c[f"{m}_hist"], Text)))  # `{}` would join as `,,`
        joined += [func.string_agg(text_, ",") if pg else func.group_concat(text_, ","), func.sum(c[f"{m}_count"])]
    return (
        select(
            c.target,
            func.min(epoch_s(c.hour, engine)),
            _float(func.sum(c.samples - cancelled_count(c))),
            _float(func.sum(c.ok_count)),
            _float(func.sum(_asserted(c, checks))),
            *joined,
        )
        .where(where)
        .group_by(c.target, day, *segments)
    )


def _float(sum_):
    """A SUM as float8: PostgreSQL sums bigints as numeric, which arrive as Decimal (slow to convert)."""
    return cast(sum_, Float)


def _rows(engine: Engine, query, bounds: Sequence[Bound], *, packed: bool):
    """One tier: per row (target, bin start in epoch s, measured probes, ok, answer-check failures,
    ok probes breaking the bounds)."""
    rows = fetch_rows(engine, query)
    n = len(rows)
    if not n:
        empty = np.zeros(0)
        return np.array([], dtype=object), empty, empty, empty, empty, empty
    cols = list(zip(*rows, strict=True))
    ok = np.array(cols[3], dtype=float)
    violations = np.zeros(n)
    k = 0
    for b in bounds:
        measured = np.zeros(n)
        for m in _columns(b):
            stored = cols[5 + 2 * k]
            measured += np.array(cols[6 + 2 * k], dtype=float)
            k += 1
            row, buckets, count = (
                decode_packed(stored) if packed and m in PACKED else decode([_text(s) for s in stored])
            )
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
