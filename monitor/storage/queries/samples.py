"""Raw-sample queries for alerting and `firsttoken samples`.

Every query is bounded in time: on PostgreSQL that prunes to the few day
partitions involved and uses the (target, started_at) or (started_at) index.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, select

from monitor.sample import Sample
from monitor.storage.ingest import BatchInserter
from monitor.storage.models import SampleRow
from monitor.storage.rows import row_to_sample

_S = SampleRow.__table__.c
DEFAULT_SINCE = timedelta(hours=1)
_INSERT_CHUNK = 5_000


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
