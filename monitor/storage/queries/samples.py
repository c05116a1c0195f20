"""Raw-sample queries for alerting and `firsttoken samples`.

Every query is bounded in time: on PostgreSQL that prunes to the few day
partitions involved and uses the (target, started_at) or (started_at) index.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from sqlalchemy import Engine, select

from monitor.sample import Sample
from monitor.storage.ingest import BatchInserter
from monitor.storage.models import Agent, SampleRow
from monitor.storage.rows import row_to_sample

_S = SampleRow.__table__.c
SERIES_METRICS: tuple[str, ...] = tuple(
    c.name for c in SampleRow.__table__.columns if c.name.endswith("_ms") or c.name in ("tps", "output_tokens")
)
DEFAULT_SINCE = timedelta(hours=1)
_INSERT_CHUNK = 5_000


class Series(NamedTuple):
    """One target's metric over time, oldest first; `values` is None where the metric is missing."""

    timestamps: tuple[datetime, ...]
    values: tuple[float | None, ...]
    ok: tuple[bool, ...]


def insert_samples(engine: Engine, samples: Iterable[Sample]) -> None:
    """Synchronous and idempotent: a sample id already stored is skipped."""
    inserter = BatchInserter(engine)
    now = datetime.now(UTC)
    batch: list[Sample] = []
    try:
        for sample in samples:
            batch.append(sample)
            if len(batch) >= _INSERT_CHUNK:
                inserter.insert(batch, now=now, idempotent=True)
                batch = []
        inserter.insert(batch, now=now, idempotent=True)
    finally:
        inserter.close()


def recent_samples(
    engine: Engine,
    target_glob: str | None = None,
    since: datetime | None = None,
    limit: int | None = None,
    *,
    until: datetime | None = None,
    agent: str | None = None,
) -> list[Sample]:
    """Samples started in [since, until), oldest first; `since` defaults to an hour ago.

    With `limit`, the newest `limit` samples (still returned oldest first).
    `target_glob` is an fnmatch pattern over target ids, case-sensitive.
    """
    since = since or datetime.now(UTC) - DEFAULT_SINCE
    query = select(SampleRow.__table__).where(_S.started_at >= since)
    if until is not None:
        query = query.where(_S.started_at < until)
    if agent is not None:
        query = query.where(_S.agent == agent)
    exact = True
    if target_glob and target_glob != "*":
        clause, exact = _glob_clause(engine, target_glob)
        query = query.where(clause)
    if limit is not None and exact:
        query = query.order_by(_S.started_at.desc(), _S.id.desc()).limit(limit)
    else:
        query = query.order_by(_S.started_at, _S.id)
    with engine.connect() as conn:
        samples = [row_to_sample(r._mapping) for r in conn.execute(query)]
    if not exact:
        samples = [s for s in samples if fnmatch.fnmatchcase(s.target, target_glob or "*")]
        return samples[-limit:] if limit is not None else samples
    return samples[::-1] if limit is not None else samples


def _glob_clause(engine: Engine, pattern: str):
    """(SQL condition, exact): SQLite's GLOB is fnmatch; PostgreSQL gets LIKE.

    A `[...]` class has no LIKE spelling: PostgreSQL then filters by the prefix
    before it and the caller finishes with fnmatch (exact=False).
    """
    if engine.dialect.name == "sqlite":
        return _S.target.op("GLOB")(pattern), True
    exact = "[" not in pattern
    head = pattern if exact else pattern[: pattern.index("[")] + "*"
    like = "".join("%" if ch == "*" else "_" if ch == "?" else "\\" + ch if ch in "%_\\" else ch for ch in head)
    return _S.target.like(like, escape="\\"), exact


def series(
    engine: Engine,
    target_id: str,
    metric: str,
    since: datetime,
    until: datetime | None = None,
    *,
    agent: str | None = None,
) -> Series:
    """(timestamps, values, ok flags) of one target in [since, until), oldest first."""
    if metric not in SERIES_METRICS:
        raise ValueError(f"unknown metric {metric!r}; one of {', '.join(SERIES_METRICS)}")
    query = select(_S.started_at, _S[metric], _S.ok).where(_S.target == target_id, _S.started_at >= since)
    if until is not None:
        query = query.where(_S.started_at < until)
    if agent is not None:
        query = query.where(_S.agent == agent)
    with engine.connect() as conn:
        rows = conn.execute(query.order_by(_S.started_at, _S.id)).all()
    return Series(tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(bool(r[2]) for r in rows))


def latest_sample_per_agent(engine: Engine, agents: Sequence[str] | None = None) -> dict[str, Sample]:
    """The newest stored sample of each agent.

    The writer keeps `agents.last_sample_at`, so each lookup is a tiny
    index range instead of a scan for the maximum over all samples.
    """
    a = Agent.__table__.c
    out: dict[str, Sample] = {}
    with engine.connect() as conn:
        query = select(a.name, a.last_sample_at).where(a.last_sample_at.is_not(None))
        if agents is not None:
            query = query.where(a.name.in_(list(agents)))
        for name, last in conn.execute(query.order_by(a.name)).all():
            row = conn.execute(
                select(SampleRow.__table__)
                .where(_S.agent == name, _S.started_at >= last)
                .order_by(_S.started_at.desc(), _S.id.desc())
                .limit(1)
            ).first()
            if row is not None:
                out[name] = row_to_sample(row._mapping)
    return out
