"""What prompt caching is worth per target over a window (DESIGN §13).

Per cache-probe target: the cold and warm TTFT medians, the saving (cold - warm), the hit
ratio (warm probes that hit among those judged), and the cache tokens the responses stated.
The tiers follow `queries.tiers`: a window shorter than a day reads raw samples (exact medians); a
longer one reads the rollups' cold/warm histograms and cache counts (migration 0012_prompt_cache),
hourly rows for its edges and daily rows for its whole days, never raw samples.
Targets that ran no cache probe are left out. `agent` keeps one vantage point's probes only (its
samples, its own rollup rows), as every other figure of `routes --agent` (DESIGN §11).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from sqlalchemy import Engine, Text, and_, cast, select

from monitor.storage.models import RollupDaily, RollupHourly, SampleRow
from monitor.storage.queries.dashfetch import fetch_rows
from monitor.storage.queries.histmatrix import hist_quantiles, value_quantiles
from monitor.storage.queries.tierread import in_spans, read_plan
from monitor.storage.queries.tiers import Plan

_S = SampleRow.__table__.c
_R = RollupHourly.__table__.c
_D = RollupDaily.__table__.c


@dataclass(frozen=True, slots=True)
class CacheFigures:
    target: str
    cold_ttft_p50_ms: float | None
    warm_ttft_p50_ms: float | None
    cold_probes: int  # ok cold probes with a TTFT
    warm_probes: int  # ok warm probes with a TTFT
    hits: int
    judged: int  # warm probes whose hit could be told
    cache_read_tokens: int
    cache_write_tokens: int

    @property
    def saving_ms(self) -> float | None:
        """What the cache saves on TTFT: cold p50 - warm p50."""
        if self.cold_ttft_p50_ms is None or self.warm_ttft_p50_ms is None:
            return None
        return self.cold_ttft_p50_ms - self.warm_ttft_p50_ms

    @property
    def hit_ratio(self) -> float | None:
        return self.hits / self.judged if self.judged else None

    def saving_usd(self, price) -> float | None:
        """What the cache saved on input cost over the window (a config Price): the reads at
        the input price less their cached price, less what writes cost above the input price."""
        if price is None:
            return None
        read_saving = self.cache_read_tokens * (price.input - (price.cached_input or price.input))
        write_cost = self.cache_write_tokens * ((price.cache_write or price.input) - price.input)
        return (read_saving - write_cost) / 1e6


def cache_figures(
    engine: Engine, target_ids: Sequence[str], end: datetime, window: timedelta, *, agent: str | None = None
) -> dict[str, CacheFigures]:
    """target id -> its figures over [end - window, end), for the targets with cache probes;
    every agent's probes pooled, or `agent`'s alone."""
    ids = list(dict.fromkeys(target_ids))
    if not ids:
        return {}
    plan = read_plan(engine, end - window, end)
    if plan.raw is not None:
        return _raw(engine, ids, plan.raw.start, plan.raw.end, agent)
    return _rollups(engine, ids, plan, agent)


def _raw(engine: Engine, ids: list[str], start: datetime, end: datetime, agent: str | None) -> dict[str, CacheFigures]:
    query = select(
        _S.target, _S.cache_state, _S.ok, _S.ttft_ms, _S.cache_hit, _S.cache_read_tokens, _S.cache_write_tokens
    ).where(_S.target.in_(ids), _S.started_at >= start, _S.started_at < end, _S.cache_state.is_not(None))
    if agent is not None:
        query = query.where(_S.agent == agent)
    rows = fetch_rows(engine, query)
    if not rows:
        return {}
    index = {t: i for i, t in enumerate(ids)}
    n = len(ids)
    targets, states, oks, ttfts, hits, reads, writes = zip(*rows, strict=True)
    group = np.fromiter((index[t] for t in targets), dtype=np.int64, count=len(rows))
    ok = np.array(oks, dtype=bool)
    ttft = np.array([np.nan if v is None else v for v in ttfts], dtype=float)
    ttft[~ok] = np.nan
    warm = np.array([s == "warm" for s in states])
    q_cold, n_cold = value_quantiles(np.where(warm, np.nan, ttft), group, n, (0.5,))
    q_warm, n_warm = value_quantiles(np.where(warm, ttft, np.nan), group, n, (0.5,))
    hit = np.bincount(group, weights=[1.0 if h else 0.0 for h in hits], minlength=n)
    judged = np.bincount(group, weights=[0.0 if h is None else 1.0 for h in hits], minlength=n)
    read = np.bincount(group, weights=[r or 0 for r in reads], minlength=n)
    written = np.bincount(group, weights=[w or 0 for w in writes], minlength=n)
    present = np.bincount(group, minlength=n) > 0
    return {
        ids[i]: _figures(
            ids[i], q_cold[i, 0], q_warm[i, 0], n_cold[i], n_warm[i], hit[i], judged[i], read[i], written[i]
        )
        for i in range(n)
        if present[i]
    }


def _rollups(engine: Engine, ids: list[str], plan: Plan, agent: str | None) -> dict[str, CacheFigures]:
    """The plan's hourly and daily rows (the same columns, merged) that hold cache figures: a cache
    target is a few of a fleet. A target counts when one of its rows measured a cache probe; then
    every row of it does, the cache tokens of an hour whose probes all failed too (as the raw read
    counts them), so a day's row adds up to its hours whichever tier reads it."""
    rows = []
    for c, time, spans in ((_R, _R.hour, plan.hours), (_D, _D.day, plan.days)):
        if spans:
            where = and_(c.target.in_(ids), in_spans(time, spans), _holds_cache(c) > 0)
            rows += fetch_rows(engine, _tier_query(c, where if agent is None else and_(where, c.agent == agent)))
    if not rows:
        return {}
    index = {t: i for i, t in enumerate(ids)}
    n = len(ids)
    targets, measured, cold_hists, warm_hists, hits, judged, reads, writes = zip(*rows, strict=True)
    group = np.fromiter((index[t] for t in targets), dtype=np.int64, count=len(rows))
    q_cold, n_cold = hist_quantiles(cold_hists, group, n, (0.5,))
    q_warm, n_warm = hist_quantiles(warm_hists, group, n, (0.5,))
    sums = [
        np.bincount(group, weights=np.array(col, dtype=float), minlength=n) for col in (hits, judged, reads, writes)
    ]
    present = np.bincount(group, weights=np.array(measured, dtype=float), minlength=n) > 0
    return {
        ids[i]: _figures(ids[i], q_cold[i, 0], q_warm[i, 0], n_cold[i], n_warm[i], *(s[i] for s in sums))
        for i in range(n)
        if present[i]
    }


def _measured_cache(c):
    """Cache probes a rollup row measured: warm ones judged, ok cold and warm ones."""
    return c.cache_judged + c.cold_ttft_ms_count + c.warm_ttft_ms_count


def _holds_cache(c):
    return _measured_cache(c) + c.cache_read_tokens_sum + c.cache_write_tokens_sum


def _tier_query(c, where):
    return select(
        c.target,
        _measured_cache(c),
        cast(c.cold_ttft_ms_hist, Text),
        cast(c.warm_ttft_ms_hist, Text),
        c.cache_hits,
        c.cache_judged,
        c.cache_read_tokens_sum,
        c.cache_write_tokens_sum,
    ).where(where)


def _figures(target, cold, warm, n_cold, n_warm, hits, judged, read, written) -> CacheFigures:
    return CacheFigures(
        target=target,
        cold_ttft_p50_ms=None if np.isnan(cold) else float(cold),
        warm_ttft_p50_ms=None if np.isnan(warm) else float(warm),
        cold_probes=int(n_cold),
        warm_probes=int(n_warm),
        hits=int(hits),
        judged=int(judged),
        cache_read_tokens=int(read),
        cache_write_tokens=int(written),
    )
