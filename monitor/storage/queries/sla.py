"""The samples an SLA report reads (DESIGN §17): every probe of some providers over a period.

Bounded by `started_at` (PostgreSQL prunes to the period's day partitions) and read as plain tuples:
a month of a provider is a few hundred thousand rows, and ORM objects would cost seconds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

from sqlalchemy import Engine, select

from monitor.storage.models import SampleRow

_S = SampleRow.__table__.c
COLUMNS = (
    "started_at",
    "provider",
    "model",
    "region",
    "prompt",
    "target",
    "agent",
    "ok",
    "error_kind",
    "tps",
    "ttft_ms",
    "request_id",
)


def provider_probes(
    engine: Engine, providers: Sequence[str], start: datetime, end: datetime, chunk: int = 50_000
) -> Iterator[tuple]:
    """Rows of `COLUMNS` for probes of `providers` started in [start, end), `started_at` in UTC."""
    query = (
        select(*(getattr(_S, c) for c in COLUMNS))
        .where(_S.provider.in_(list(providers)), _S.started_at >= start, _S.started_at < end)
        .execution_options(yield_per=chunk)
    )
    with engine.connect() as conn:
        for row in conn.execute(query):
            at = row[0]
            yield (at if at.tzinfo else at.replace(tzinfo=UTC), *row[1:])
