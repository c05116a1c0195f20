"""What each route measured over a window, for `firsttoken routes` and GET /routes.

The tiers follow `queries.tiers`: a window shorter than a day reads raw samples (exact percentiles,
fallbacks, cost; PostgreSQL aggregates them itself, SQLite hands them to numpy); a longer one reads
the rollups: the hours it covers, with every whole UTC day in its middle read from the daily rollups
instead of as 24 hourly rows (a 30-day window: ~54 rows a target instead of 720). Daily rows are the
merge of their hours, so the answer is the hourly one exactly (cost sums up to float rounding).
Either way the newest `served_by` comes from
the window's last hour, and the OpenRouter-shaped uptimes from raw counts
over the last 30 minutes plus the rollups of the last day.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import Engine, Float, Integer, Text, and_, case, cast, func, select, text, true

from monitor.routing.rank import DEFAULT_MIN_AVAILABILITY, RankedRoute, RouteStats, rank_routes
from monitor.storage.models import RollupDaily, RollupHourly, SampleRow
from monitor.storage.queries.cache_figures import cache_figures
from monitor.storage.queries.dashfetch import CANCELLED, cancelled_count, fetch_rollups, fetch_rows
from monitor.storage.queries.histmatrix import hist_quantiles, packed_quantiles, value_quantiles
from monitor.storage.queries.targets import TargetRef, list_targets
from monitor.storage.queries.tierread import in_spans, read_plan
from monitor.storage.queries.tiers import Plan

# `served_by` is "who answers now": the newest named upstream of the window's last hour (an index
# range per target, not a day's scan when a target names nothing).
SERVED_BY_LOOKBACK = timedelta(hours=1)
QS = (0.5, 0.75, 0.9, 0.99)
UPTIME_WINDOWS = {"5m": timedelta(minutes=5), "30m": timedelta(minutes=30)}
_S = SampleRow.__table__.c
_R = RollupHourly.__table__.c
_D = RollupDaily.__table__.c


def _f(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def route_stats(
    engine: Engine,
    targets: Sequence[TargetRef],
    end: datetime,
    window: timedelta,
    *,
    uptimes: bool = False,
    daily: bool = True,
    agent: str | None = None,
) -> list[RouteStats]:
    """One RouteStats per target over [end - window, end). `uptimes` adds the
    OpenRouter endpoint windows (5 min, 30 min, 1 day) that GET /routes returns.
    `daily=False` reads a long window from hourly rollups only (the reference the
    daily tier must equal; the tests and the benchmark compare the two). `agent` keeps
    one vantage point's samples and rollups only (DESIGN §11)."""
    if not targets:
        return []
    start = end - window
    ids = [t.id for t in targets]
    index = {t: i for i, t in enumerate(ids)}
    n = len(ids)
    recent = max(start, end - SERVED_BY_LOOKBACK)
    plan = read_plan(engine, start, end)
    if plan.raw is not None and engine.dialect.name == "postgresql":
        measured, served = _raw_pg(engine, ids, index, start, end, recent, agent)
    else:
        if plan.raw is not None:
            measured = _raw(engine, ids, index, start, end, agent)
        elif daily or agent is not None:
            measured = _rollups(engine, ids, index, plan, agent)
        else:
            measured = _hourly_rollups(engine, ids, index, start, end)
        served = _last_served_by(engine, ids, recent, end, agent)
    up = _uptimes(engine, ids, index, end, agent) if uptimes else [{} for _ in range(n)]
    out = []
    for t in targets:
        i = index[t.id]
        m = measured[i]
        out.append(
            RouteStats(
                target=t.id,
                provider=t.provider,
                model=t.model,
                canonical_model=t.canonical,
                region=t.region,
                prompt=t.prompt,
                served_by=served.get(t.id),
                uptime=up[i],
                **m,
            )
        )
    return out


# PostgreSQL aggregates a raw window itself: one pass, a row per target back instead of every sample.
# percentile_cont interpolates linearly between order statistics, as value_quantiles (numpy) does on SQLite.
_RAW_PG = text("""
SELECT target,
       count(*) FILTER (WHERE measured),
       count(*) FILTER (WHERE measured AND ok),
       percentile_cont(ARRAY[0.5, 0.75, 0.9, 0.99]) WITHIN GROUP (ORDER BY ttft_ms) FILTER (WHERE ok AND not_warm),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE ok AND not_warm),
       count(*) FILTER (WHERE ok AND fallback),
       sum(cost_usd) FILTER (WHERE measured),
       count(cost_usd) FILTER (WHERE measured),
       (array_agg(served_by ORDER BY started_at DESC)
            FILTER (WHERE served_by IS NOT NULL AND started_at >= :recent))[1]
FROM (SELECT *, error_kind IS DISTINCT FROM 'cancelled' AS measured,
             cache_state IS DISTINCT FROM 'warm' AS not_warm FROM samples
      WHERE target = ANY(:ids) AND started_at >= :start AND started_at < :end
        AND (CAST(:agent AS text) IS NULL OR agent = :agent)) AS s
GROUP BY target
""")


def _raw_pg(
    engine: Engine,
    ids: list[str],
    index: dict[str, int],
    start: datetime,
    end: datetime,
    recent: datetime,
    agent: str | None = None,
) -> tuple[list[dict], dict[str, str]]:
    out = [_empty() for _ in ids]
    served: dict[str, str] = {}
    with engine.connect() as conn:
        params = {"ids": ids, "start": start, "end": end, "recent": recent, "agent": agent}
        rows = conn.execute(_RAW_PG, params).all()
    for target, samples, ok, ttft, tps, fallbacks, cost, cost_n, served_by in rows:
        q = list(ttft) if ttft else [None] * 4
        out[index[target]] = {
            "samples": int(samples),
            "ok": int(ok),
            "ttft_p50_ms": q[0],
            "ttft_p75_ms": q[1],
            "ttft_p90_ms": q[2],
            "ttft_p99_ms": q[3],
            "tps_p50": tps,
            "fallbacks": int(fallbacks),
            "cost_usd_sum": float(cost or 0.0),
            "cost_samples": int(cost_n),
        }
        if served_by is not None:
            served[target] = served_by
    return out, served


def _of_agent(table_c, agent: str | None):
    """One vantage point's rows (`--agent`), or every agent's."""
    return true() if agent is None else table_c.agent == agent


def _raw(
    engine: Engine, ids: list[str], index: dict[str, int], start: datetime, end: datetime, agent: str | None = None
) -> list[dict]:
    cancelled = _S.error_kind == CANCELLED
    fallback = case((and_(_S.ok, _S.fallback.is_(True)), 1), else_=0)
    query = select(
        _S.target,
        _S.ok,
        cast(cancelled, Integer),
        _S.ttft_ms,
        _S.tps,
        _S.cost_usd,
        fallback,
        _S.cache_state,
    ).where(_S.started_at >= start, _S.started_at < end, _S.target.in_(ids), _of_agent(_S, agent))
    rows = fetch_rows(engine, query)
    n = len(ids)
    if not rows:
        return [_empty() for _ in range(n)]
    cols = list(zip(*rows, strict=True))
    group = np.fromiter((index[t] for t in cols[0]), dtype=np.int64, count=len(rows))
    ok = np.array(cols[1], dtype=bool)
    cancelled_ = np.array(cols[2], dtype=bool)
    warm = np.array([s == "warm" for s in cols[7]], dtype=bool)

    def floats(col) -> np.ndarray:
        values = np.array([np.nan if v is None else v for v in col], dtype=float)
        values[~ok | warm] = np.nan  # failures never enter a percentile; a cache probe's warm half has its own
        return values

    q_ttft, _ = value_quantiles(floats(cols[3]), group, n, QS)
    q_tps, _ = value_quantiles(floats(cols[4]), group, n, (0.5,))
    cost = np.array([np.nan if v is None else v for v in cols[5]], dtype=float)
    known = ~np.isnan(cost) & ~cancelled_
    samples = np.bincount(group, weights=~cancelled_, minlength=n)
    oks = np.bincount(group, weights=ok & ~cancelled_, minlength=n)
    fallbacks = np.bincount(group, weights=np.array(cols[6], dtype=float), minlength=n)
    cost_sum = np.bincount(group, weights=np.where(known, cost, 0.0), minlength=n)
    cost_n = np.bincount(group, weights=known, minlength=n)
    return [
        _route_row(samples[i], oks[i], q_ttft[i], q_tps[i], int(fallbacks[i]), float(cost_sum[i]), int(cost_n[i]))
        for i in range(n)
    ]


def _rollups(engine: Engine, ids: list[str], index: dict[str, int], plan: Plan, agent: str | None = None) -> list[dict]:
    """The plan's hours, and its whole days from the daily tier (their packed histograms).
    Rows come back as they are (a GROUP BY with string_agg cost PostgreSQL more than the
    scan) and are merged here."""
    n = len(ids)
    hours = and_(_R.target.in_(ids), in_spans(_R.hour, plan.hours), _of_agent(_R, agent))
    h_group, h_counts, h_ttft, h_tps = _tier_rows(
        engine, index, _R, hours, cast(_R.ttft_ms_hist, Text), cast(_R.tps_hist, Text)
    )
    d_group, d_counts, d_ttft, d_tps = _NO_ROWS
    if plan.days:
        days = and_(_D.target.in_(ids), in_spans(_D.day, plan.days), _of_agent(_D, agent))
        d_group, d_counts, d_ttft, d_tps = _tier_rows(engine, index, _D, days, _D.ttft_ms_packed, _D.tps_packed)
    q_ttft = packed_quantiles(h_ttft, h_group, d_ttft, d_group, n, QS)
    q_tps = packed_quantiles(h_tps, h_group, d_tps, d_group, n, (0.5,))
    groups = np.concatenate((h_group, d_group))
    samples, ok, cost = (
        np.bincount(groups, weights=np.concatenate((h_counts[:, k], d_counts[:, k])), minlength=n) for k in range(3)
    )
    # As the hourly path: rollups count no fallbacks (None), and a cost is known when any was summed.
    return [
        _route_row(samples[i], ok[i], q_ttft[i], q_tps[i], None, float(cost[i]), int(samples[i]) if cost[i] else 0)
        for i in range(n)
    ]


_NO_ROWS = (np.zeros(0, dtype=np.int64), np.zeros((0, 3)), (), ())


def _tier_rows(engine: Engine, index: dict[str, int], c, where, ttft, tps):
    """One rollup tier's rows: (target index per row, (measured, ok, cost) per row, ttft and tps
    histograms as stored (texts or packed))."""
    query = select(c.target, (c.samples - cancelled_count(c)), c.ok_count, c.cost_usd_sum, ttft, tps).where(where)
    rows = fetch_rows(engine, query)
    if not rows:
        return _NO_ROWS
    targets, measured, oks, costs, ttfts, tpss = zip(*rows, strict=True)
    return (
        np.fromiter((index[t] for t in targets), dtype=np.int64, count=len(rows)),
        np.array([measured, oks, costs], dtype=float).T,
        ttfts,
        tpss,
    )


def _hourly_rollups(
    engine: Engine, ids: list[str], index: dict[str, int], start: datetime, end: datetime, agent: str | None = None
) -> list[dict]:
    """Hourly rollups only (before the daily tier; `route_stats(daily=False)`)."""
    n = len(ids)
    span_s = 3600 * (int((end - start).total_seconds() // 3600) + 2)  # one bucket: a row per target
    rows = fetch_rollups(engine, start, end, ids, bucket_s=span_s, agent=agent)
    code = np.array([index[t] for t in rows.targets] or [0], dtype=np.int64)
    group = code[rows.target] if len(rows) else rows.target
    q_ttft, _ = hist_quantiles(rows.hists["ttft_ms"], group, n, QS)
    q_tps, _ = hist_quantiles(rows.hists["tps"], group, n, (0.5,))
    samples = np.bincount(group, weights=rows.samples - rows.cancelled, minlength=n)
    oks = np.bincount(group, weights=rows.ok, minlength=n)
    cost = _rollup_cost(engine, ids, start, end, agent)
    # Rollups count no fallbacks (None), and sum cost without counting priced samples: a cost
    # is known when any was summed.
    return [
        _route_row(
            samples[i],
            oks[i],
            q_ttft[i],
            q_tps[i],
            None,
            cost.get(ids[i], 0.0),
            int(samples[i]) if cost.get(ids[i]) else 0,
        )
        for i in range(n)
    ]


def _route_row(samples, oks, q_ttft, q_tps, fallbacks: int | None, cost_usd_sum: float, cost_samples: int) -> dict:
    """One target's figures over the window, whichever source (raw or rollups) they came from."""
    return {
        "samples": int(samples),
        "ok": int(oks),
        "ttft_p50_ms": _f(q_ttft[0]),
        "ttft_p75_ms": _f(q_ttft[1]),
        "ttft_p90_ms": _f(q_ttft[2]),
        "ttft_p99_ms": _f(q_ttft[3]),
        "tps_p50": _f(q_tps[0]),
        "fallbacks": fallbacks,
        "cost_usd_sum": cost_usd_sum,
        "cost_samples": cost_samples,
    }


def _rollup_cost(
    engine: Engine, ids: list[str], start: datetime, end: datetime, agent: str | None = None
) -> dict[str, float]:
    query = (
        select(_R.target, cast(func.sum(_R.cost_usd_sum), Float))
        .where(_R.hour >= start, _R.hour < end, _R.target.in_(ids), _of_agent(_R, agent))
        .group_by(_R.target)
    )
    return {t: float(v) for t, v in fetch_rows(engine, query) if v}


def _last_served_by(
    engine: Engine, ids: list[str], start: datetime, end: datetime, agent: str | None = None
) -> dict[str, str]:
    """The newest named upstream of each target: max(started_at) per target on the
    (target, started_at) index, joined back to its row."""
    named = and_(
        _S.target.in_(ids),
        _S.started_at >= start,
        _S.started_at < end,
        _S.served_by.is_not(None),
        _of_agent(_S, agent),
    )
    newest = select(_S.target.label("t"), func.max(_S.started_at).label("at")).where(named).group_by(_S.target)
    newest = newest.subquery()
    # The outer range repeats the window: without it PostgreSQL probes every day partition per target.
    query = (
        select(_S.target, _S.served_by)
        .join(newest, and_(_S.target == newest.c.t, _S.started_at == newest.c.at))
        .where(named)
    )
    return {t: s for t, s in fetch_rows(engine, query)}


def _uptimes(
    engine: Engine, ids: list[str], index: dict[str, int], end: datetime, agent: str | None = None
) -> list[dict]:
    n = len(ids)
    out: list[dict[str, float | None]] = [{} for _ in range(n)]
    measured = _S.error_kind.is_(None) | (_S.error_kind != CANCELLED)
    cols = []
    for span in UPTIME_WINDOWS.values():
        recent = and_(_S.started_at >= end - span, measured)
        cols += [func.sum(case((recent, 1), else_=0)), func.sum(case((and_(recent, _S.ok), 1), else_=0))]
    query = (
        select(_S.target, *cols)
        .where(
            _S.target.in_(ids),
            _S.started_at >= end - max(UPTIME_WINDOWS.values()),
            _S.started_at < end,
            _of_agent(_S, agent),
        )
        .group_by(_S.target)
    )
    for target, *counts in fetch_rows(engine, query):
        for k, name in enumerate(UPTIME_WINDOWS):
            total, ok = counts[2 * k] or 0, counts[2 * k + 1] or 0
            out[index[target]][name] = ok / total if total else None
    day = (
        select(_R.target, func.sum(_R.samples - cancelled_count()), func.sum(_R.ok_count))
        .where(_R.target.in_(ids), _R.hour >= end - timedelta(days=1), _R.hour < end, _of_agent(_R, agent))
        .group_by(_R.target)
    )
    for target, total, ok in fetch_rows(engine, day):
        out[index[target]]["1d"] = (ok or 0) / total if total else None
    missing = [t for t in ids if "1d" not in out[index[t]]]
    if missing:  # no rollups yet (a young deployment): the day is small enough to count raw
        raw_day = (
            select(
                _S.target, func.sum(case((measured, 1), else_=0)), func.sum(case((and_(measured, _S.ok), 1), else_=0))
            )
            .where(
                _S.target.in_(missing),
                _S.started_at >= end - timedelta(days=1),
                _S.started_at < end,
                _of_agent(_S, agent),
            )
            .group_by(_S.target)
        )
        for target, total, ok in fetch_rows(engine, raw_day):
            out[index[target]]["1d"] = (ok or 0) / total if total else None
    for row in out:
        for name in (*UPTIME_WINDOWS, "1d"):
            row.setdefault(name, None)
    return out


def with_cache_figures(
    engine: Engine, stats: list[RouteStats], end: datetime, window: timedelta, agent: str | None = None
) -> list[RouteStats]:
    """The routes with cache probes get their warm and cold TTFT and hit ratio (DESIGN §13), from
    `agent`'s probes alone when given: the ranking by `warm_ttft` is then that vantage point's."""
    figures = cache_figures(engine, [s.target for s in stats], end, window, agent=agent)
    return [
        replace(
            s,
            cold_ttft_p50_ms=f.cold_ttft_p50_ms,
            warm_ttft_p50_ms=f.warm_ttft_p50_ms,
            cache_hit_ratio=f.hit_ratio,
        )
        if (f := figures.get(s.target))
        else s
        for s in stats
    ]


def _empty() -> dict:
    return {"samples": 0, "ok": 0, "fallbacks": 0}


def load_routes(
    engine: Engine,
    end: datetime,
    window: timedelta,
    *,
    model: str | None = None,
    prompt: str | None = None,
    min_availability: float = DEFAULT_MIN_AVAILABILITY,
    by: str = "ttft",
    endpoint: bool = False,
    daily: bool = True,
    agent: str | None = None,
) -> tuple[list[RankedRoute], dict[str, RouteStats]]:
    """Ranked routes with samples in the window (`model` matches the canonical name
    or the provider's id; `agent` one vantage point's samples); with `endpoint`, also each target's last-30-minute stats
    with uptimes, for OpenRouter's endpoint shape."""
    targets = [
        t
        for t in list_targets(engine)
        if (model is None or model in (t.canonical, t.model)) and (prompt is None or t.prompt == prompt)
    ]
    stats = [s for s in route_stats(engine, targets, end, window, daily=daily, agent=agent) if s.samples]
    stats = with_cache_figures(engine, stats, end, window, agent)
    ranked = rank_routes(stats, min_availability, by)
    recent: dict[str, RouteStats] = {}
    if endpoint and ranked:
        ranked_ids = {r.stats.target for r in ranked}
        chosen = [t for t in targets if t.id in ranked_ids]
        recent = {
            s.target: s for s in route_stats(engine, chosen, end, timedelta(minutes=30), uptimes=True, agent=agent)
        }
    return ranked, recent
