"""Percentile bands over time for the dashboard's Trends page.

The tiers follow `queries.tiers`: ranges of a day or more read the rollups
(their histograms merged per time bucket, ≤ 2% error), shorter ranges raw
samples (exact, numpy's 'linear' percentiles). Buckets of a day (ranges over a
month) take whole days from the daily tier; shorter buckets cut every day, so
those ranges read hours. Series are the selected targets grouped by a label
(`split_by`): one band per model, per provider, per target …
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import Engine

from monitor.storage.queries.dashfetch import fetch_raw, fetch_tiers
from monitor.storage.queries.histmatrix import value_quantiles
from monitor.storage.queries.targets import TargetRef
from monitor.storage.queries.tierread import read_plan
from monitor.storage.queries.tiers import reads_raw

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
# "agent": one line per vantage point (the probe agent that took the samples; DESIGN §11).
SPLITS = ("provider/model", "provider", "model", "region", "prompt", "target", "agent", "all")
# (range up to, bucket): about 30-120 points per line, hourly or coarser on rollups.
_BUCKETS = (
    (timedelta(hours=1), timedelta(minutes=2)),
    (timedelta(hours=6), timedelta(minutes=5)),
    (timedelta(hours=23, minutes=59), timedelta(minutes=15)),
    (timedelta(days=2), timedelta(hours=1)),
    (timedelta(days=7), timedelta(hours=2)),
    (timedelta(days=31), timedelta(hours=6)),
)


def bucket_for(span: timedelta) -> timedelta:
    for limit, bucket in _BUCKETS:
        if span <= limit:
            return bucket
    return timedelta(days=1)


@dataclass(frozen=True)
class Bands:
    """Per time bucket; None where the bucket has no measurement."""

    p01: tuple[float | None, ...]
    p10: tuple[float | None, ...]
    p50: tuple[float | None, ...]
    p90: tuple[float | None, ...]
    p99: tuple[float | None, ...]


@dataclass(frozen=True)
class TrendSeries:
    label: str
    provider: str | None  # set when every target of the series has the same provider
    bucket_starts: tuple[datetime, ...]
    ttft_ms: Bands
    tps: Bands
    measured: tuple[int, ...]  # samples minus cancelled
    failed: tuple[int, ...]

    @property
    def error_rate(self) -> tuple[float | None, ...]:
        return tuple(f / m if m else None for f, m in zip(self.failed, self.measured, strict=True))


@dataclass(frozen=True)
class Trend:
    start: datetime
    end: datetime
    bucket: timedelta
    source: str  # raw | rollups
    series: tuple[TrendSeries, ...]


def _bands(q: np.ndarray) -> Bands:
    cols = [tuple(None if np.isnan(v) else float(v) for v in q[:, j]) for j in range(q.shape[1])]
    return Bands(*cols)


def trend(
    engine: Engine,
    targets: Sequence[TargetRef],
    start: datetime,
    end: datetime,
    split_by: str = "provider/model",
    bucket: timedelta | None = None,
) -> Trend:
    if split_by not in SPLITS:
        raise ValueError(f"split_by must be one of {', '.join(SPLITS)}")
    span = end - start
    rollups = not reads_raw(start, end)
    bucket = bucket or bucket_for(span)
    if rollups:
        bucket = max(bucket, timedelta(hours=1))
    step = bucket.total_seconds()
    origin = (start.timestamp() // step) * step
    if rollups:
        origin = min(origin, (start.timestamp() // 3600) * 3600)
    n_buckets = int(np.ceil((end.timestamp() - origin) / step))
    by_agent = split_by == "agent"
    by_id = {t.id: t for t in targets}
    ids = list(by_id)
    query_start = datetime.fromtimestamp(origin, UTC)
    if rollups:
        # Every bucket edge cuts its day unless it falls on a midnight (buckets of whole days).
        edges = [datetime.fromtimestamp(origin + i * step, UTC) for i in range(1, n_buckets)]
        plan = read_plan(engine, start, end, read_from=query_start, cuts=edges)
        rows = fetch_tiers(engine, plan, ids, bucket_s=step, by_agent=by_agent)
        t_s, measured, failed = rows.hour_s, rows.samples - rows.cancelled, rows.samples - rows.ok - rows.cancelled
    else:
        rows = fetch_raw(engine, query_start, end, ids, by_agent=by_agent)
        t_s, measured, failed = rows.t_s, (~rows.cancelled).astype(int), (~rows.ok & ~rows.cancelled).astype(int)
    if by_agent:
        labels = list(rows.agents)  # the vantage points that probed these targets in the range
        series_of_row = rows.agent
    else:
        labels = sorted({t.label(split_by) for t in targets})
        index = {name: i for i, name in enumerate(labels)}
        series_of_code = np.array([index[by_id[tid].label(split_by)] for tid in rows.targets], dtype=np.int64)
        series_of_row = series_of_code[rows.target] if len(rows) else np.zeros(0, np.int64)
    label_index = {name: i for i, name in enumerate(labels)}
    b = np.clip(((t_s - origin) // step).astype(np.int64), 0, max(n_buckets - 1, 0))
    group = series_of_row * n_buckets + b if len(rows) else np.zeros(0, np.int64)
    n_groups = len(labels) * n_buckets
    quants = {}
    for metric in ("ttft_ms", "tps"):
        if rollups:
            quants[metric] = rows.quantiles(metric, group, n_groups, QUANTILES)
        else:
            quants[metric], _ = value_quantiles(rows.metrics[metric], group, n_groups, QUANTILES)
    measured_g = np.bincount(group, weights=measured, minlength=n_groups).astype(np.int64)
    failed_g = np.bincount(group, weights=failed, minlength=n_groups).astype(np.int64)
    starts = tuple(datetime.fromtimestamp(origin + i * step, UTC) for i in range(n_buckets))
    providers: dict[str, set[str]] = {}
    for t in targets:
        for name in labels if by_agent else (t.label(split_by),):
            providers.setdefault(name, set()).add(t.provider)
    out = []
    for name, i in label_index.items():
        sl = slice(i * n_buckets, (i + 1) * n_buckets)
        provs = providers[name]
        out.append(
            TrendSeries(
                label=name,
                provider=next(iter(provs)) if len(provs) == 1 else None,
                bucket_starts=starts,
                ttft_ms=_bands(quants["ttft_ms"][sl]),
                tps=_bands(quants["tps"][sl]),
                measured=tuple(int(x) for x in measured_g[sl]),
                failed=tuple(int(x) for x in failed_g[sl]),
            )
        )
    return Trend(start, end, bucket, "rollups" if rollups else "raw", tuple(out))
