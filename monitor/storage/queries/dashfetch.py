"""Column fetchers for the dashboard: raw samples and rollups (hourly, daily) as numpy arrays.

Both return plain arrays (epoch seconds, target codes, counts, values with NaN
for missing) rather than rows of values: the dashboard groups and takes
percentiles over tens of thousands of rows, which numpy does in milliseconds
and a per-row Python loop does not. Times come back as epoch seconds computed
by the database, so no datetime object is built per row.

Cancelled samples (`error_kind = 'cancelled'`, the service stopping mid-probe)
are not measurements: they are counted apart so availability can leave them
out. Histograms in the rollups hold only ok samples, and raw latency values of
failed samples are dropped here, so failures never enter a percentile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from sqlalchemy import Engine, Float, Integer, Text, case, cast, func, select

from monitor.sample import SAMPLE_METRICS
from monitor.storage.models import PACKED_METRICS, RollupDaily, RollupHourly, SampleRow
from monitor.storage.queries.histmatrix import packed_quantiles
from monitor.storage.queries.tierread import in_spans
from monitor.storage.queries.tiers import Plan, Span

_S = SampleRow.__table__.c
_R = RollupHourly.__table__.c
_D = RollupDaily.__table__.c
CANCELLED = "cancelled"


def cancelled_count(columns=_R):
    """Cancelled probes of a rollup row (hourly, or another tier's `columns`), from its `error_counts` JSON.

    Most rows have no cancellation: a LIKE on the stored text (free: `json` is
    stored as text) spares parsing the document of every row, which cost
    PostgreSQL more than the rest of a 30,000-row scan.
    """
    has = cast(columns.error_counts, Text).like(f'%"{CANCELLED}"%')
    return case((has, func.coalesce(columns.error_counts[CANCELLED].as_integer(), 0)), else_=0)


def epoch_s(column, engine: Engine):
    """Seconds since 1970 as a float, computed by the database."""
    if engine.dialect.name == "postgresql":
        return cast(func.extract("epoch", column), Float)
    # SQLite stores naive UTC text; julianday parses it, fractional seconds included.
    return (func.julianday(column) - 2440587.5) * 86400.0


def fetch_rows(engine: Engine, query) -> list[tuple]:
    """All rows of a Core query as plain tuples.

    On PostgreSQL the compiled statement goes straight to a psycopg cursor in
    binary mode: SQLAlchemy's Row objects cost ~5 µs each, more than the query
    itself for the 10-30 thousand rows a page reads. SQLite (small, embedded)
    takes the ordinary path, which also applies its naive-UTC bind conversion.
    """
    with engine.connect() as conn:
        if engine.dialect.name != "postgresql":
            return [tuple(r) for r in conn.execute(query).all()]
        compiled = query.compile(dialect=engine.dialect, compile_kwargs={"render_postcompile": True})
        cursor = conn.connection.dbapi_connection.cursor(binary=True)
        try:
            cursor.execute(str(compiled), compiled.params)
            return cursor.fetchall()
        finally:
            cursor.close()


def _codes(values: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    names = tuple(sorted(set(values)))
    index = {name: i for i, name in enumerate(names)}
    return np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values)), names


def _floats(values: Sequence[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


@dataclass(frozen=True)
class RawRows:
    t_s: np.ndarray
    target: np.ndarray  # index into `targets`
    targets: tuple[str, ...]
    ok: np.ndarray
    cancelled: np.ndarray
    error_kind: tuple[str | None, ...]
    metrics: dict[str, np.ndarray]  # NaN where missing or not ok
    agent: np.ndarray | None = None  # with `by_agent`: index into `agents` (one line per vantage point)
    agents: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.t_s.size)


def fetch_raw(
    engine: Engine,
    start: datetime,
    end: datetime,
    target_ids: Sequence[str] | None = None,
    metrics: Sequence[str] = ("ttft_ms", "tps"),
    *,
    by_agent: bool = False,
) -> RawRows:
    extra = [_S.agent] if by_agent else []
    query = select(
        epoch_s(_S.started_at, engine),
        _S.target,
        _S.ok,
        _S.error_kind,
        _S.cache_state,
        *(_S[m] for m in metrics),
        *extra,
    )
    query = query.where(_S.started_at >= start, _S.started_at < end)
    if target_ids is not None:
        query = query.where(_S.target.in_(list(target_ids)))
    rows = fetch_rows(engine, query)
    cols = list(zip(*rows, strict=True)) if rows else [()] * (5 + len(metrics) + len(extra))
    target, targets = _codes(cols[1])
    agent, agents = _codes(cols[5 + len(metrics)]) if by_agent else (None, ())
    ok = np.array(cols[2], dtype=bool)
    # A cache probe's warm half measures the cache, not the route: its latencies stay out, as in
    # the rollups, alerts and /metrics (its own figures: queries.cache_figures).
    warm = np.array([s == "warm" for s in cols[4]], dtype=bool)
    values = {m: _floats(cols[5 + i]) for i, m in enumerate(metrics)}
    for m, v in values.items():
        v[~ok | warm if m in SAMPLE_METRICS else ~ok] = np.nan
    kinds = tuple(cols[3])
    return RawRows(
        t_s=np.array(cols[0], dtype=float),
        target=target,
        targets=targets,
        ok=ok,
        cancelled=np.array([k == CANCELLED for k in kinds], dtype=bool),
        error_kind=kinds,
        metrics=values,
        agent=agent,
        agents=agents,
    )


@dataclass(frozen=True)
class RollupRows:
    hour_s: np.ndarray  # the row's hour, day or bucket start
    target: np.ndarray
    targets: tuple[str, ...]
    samples: np.ndarray
    ok: np.ndarray
    cancelled: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    hists: dict[str, list[str | None]]  # metric -> compact JSON text per row (None: packed instead)
    agent: np.ndarray | None = None  # with `by_agent`: index into `agents`
    agents: tuple[str, ...] = ()
    packed: dict[str, list[bytes | None]] = field(default_factory=dict)  # metric -> daily rows' packed

    def __len__(self) -> int:
        return int(self.hour_s.size)

    def quantiles(self, metric: str, group_of_row: np.ndarray, n_groups: int, qs: Sequence[float]) -> np.ndarray:
        """Quantiles (n_groups, len(qs)) of the metric's histograms merged per group, JSON and packed alike."""
        blobs = self.packed.get(metric, ())
        return packed_quantiles(self.hists[metric], group_of_row, blobs, group_of_row, n_groups, qs)


def concat_texts(engine: Engine, text_expr):
    """Texts of a group joined with commas (histogram texts: `decode` reads `{..},{..}` as one)."""
    if engine.dialect.name == "postgresql":
        return func.string_agg(text_expr, ",")
    return func.group_concat(text_expr, ",")


def fetch_rollups(
    engine: Engine,
    start: datetime,
    end: datetime,
    target_ids: Sequence[str] | None = None,
    hists: Sequence[str] = ("ttft_ms", "tps"),
    bucket_s: float | None = None,
    agent: str | None = None,
    by_agent: bool = False,
) -> RollupRows:
    """Hourly rollup rows with `start <= hour < end` (`fetch_tiers` for one hourly span)."""
    only_hours = Plan(hours=(Span(start, end),))
    return fetch_tiers(engine, only_hours, target_ids, hists, bucket_s, agent=agent, by_agent=by_agent)


def fetch_tiers(
    engine: Engine,
    plan: Plan,
    target_ids: Sequence[str] | None = None,
    hists: Sequence[str] = ("ttft_ms", "tps"),
    bucket_s: float | None = None,
    *,
    agent: str | None = None,
    by_agent: bool = False,
) -> RollupRows:
    """The rollup rows of a plan (`queries.tiers`): hourly rows of its hour spans, daily rows of
    its day spans; every agent's row included (merge by summing), or only `agent`'s.

    With `bucket_s` (a whole number of hours, aligned to the epoch) the database
    already groups each target's hours into buckets: counts summed, histogram
    texts concatenated (`decode` reads `{..},{..}` as one histogram's entries).
    `hour_s` is then the bucket's start. A 30-day, 20-target trend reads 2,400
    rows instead of 14,400, and the per-row Python work shrinks with it. Daily
    rows come back one each (a day of a target is one row per agent already),
    with their packed histograms where kept (`RollupRows.quantiles` merges both).
    """
    packed = [m for m in hists if m in PACKED_METRICS]
    kept = (target_ids, agent, by_agent)
    hour_rows = _tier_rows(engine, _R, _R.hour, plan.hours, hists, (), bucket_s, *kept) if plan.hours else []
    day_rows = _tier_rows(engine, _D, _D.day, plan.days, hists, packed, None, *kept) if plan.days else []
    rows = hour_rows + day_rows
    cols = list(zip(*rows, strict=True)) if rows else [()] * (7 + len(hists) + int(by_agent))
    target, targets = _codes(cols[1])
    agent_code, agents = _codes(cols[7 + len(hists)]) if by_agent else (None, ())
    n_hours, n_days = len(hour_rows), len(day_rows)
    texts = {m: list(cols[7 + i]) for i, m in enumerate(hists)}
    return RollupRows(
        # Whole seconds: SQLite's julianday arithmetic lands a few µs off, on the wrong side of a bucket edge.
        hour_s=np.round(np.array(cols[0], dtype=float)),
        target=target,
        targets=targets,
        samples=np.array(cols[2], dtype=np.int64),
        ok=np.array(cols[3], dtype=np.int64),
        cancelled=np.array(cols[4], dtype=np.int64),
        input_tokens=np.array(cols[5], dtype=np.int64),
        output_tokens=np.array(cols[6], dtype=np.int64),
        hists={m: t[:n_hours] + [None] * n_days if m in packed else t for m, t in texts.items()},
        agent=agent_code,
        agents=agents,
        packed={m: [None] * n_hours + texts[m][n_hours:] for m in packed},
    )


def _tier_rows(
    engine: Engine,
    c,
    time,
    spans: Sequence[Span],
    hists: Sequence[str],
    packed: Sequence[str],
    bucket_s: float | None,
    target_ids: Sequence[str] | None,
    agent: str | None,
    by_agent: bool,
) -> list[tuple]:
    """One tier's rows (`c`: its columns, `time`: its hour or day) in RollupRows' order: epoch
    seconds, target, samples, ok, cancelled, input and output tokens, a histogram per metric (the
    packed copy for `packed`, else the JSON text), and the agent with `by_agent`."""
    values = [c.samples, c.ok_count, cancelled_count(c), c.input_tokens_sum, c.output_tokens_sum]
    stored = [c[f"{m}_packed"] if m in packed else cast(c[f"{m}_hist"], Text) for m in hists]
    extra = [c.agent] if by_agent else []  # one row per (target, agent): a line per vantage point
    t_s = epoch_s(time, engine)
    if bucket_s and bucket_s > 3600:
        # + 0.5 s: SQLite's julianday epoch can land microseconds short of the hour.
        slot = (
            func.floor((t_s + 0.5) / bucket_s)
            if engine.dialect.name == "postgresql"
            else cast((t_s + 0.5) / bucket_s, Integer)
        )
        query = select(
            slot * bucket_s,
            c.target,
            *(cast(func.sum(v), Integer) for v in values),
            *(concat_texts(engine, t) for t in stored),
            *extra,
        ).group_by(slot, c.target, *extra)
    else:
        query = select(t_s, c.target, *(cast(v, Integer) for v in values), *stored, *extra)
    query = query.where(in_spans(time, spans))
    if target_ids is not None:
        query = query.where(c.target.in_(list(target_ids)))
    if agent is not None:
        query = query.where(c.agent == agent)
    return fetch_rows(engine, query)
