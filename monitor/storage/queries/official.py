"""Providers' official incidents (table `provider_incidents`): upsert what a status page lists, close
what it stopped listing, read them back for the timeline and the alert lead times."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, and_, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.storage.models import ProviderIncident

_T = ProviderIncident.__table__
_C = _T.c


@dataclass(frozen=True, slots=True)
class OfficialIncident:
    provider: str
    source_id: str
    name: str
    status: str
    impact: str | None
    started_at: datetime
    resolved_at: datetime | None
    updated_at: datetime
    shortlink: str | None = None


def store_incidents(engine: Engine, provider: str, listed: Iterable[OfficialIncident], now: datetime) -> int:
    """Upsert the incidents a status page lists now; an open one it no longer lists resolved `now`
    (a summary lists unresolved incidents only). Returns the number of rows written."""
    listed = list(listed)
    dialect_insert = pg_insert if engine.dialect.name == "postgresql" else sqlite_insert
    written = 0
    with engine.begin() as conn:
        for i in listed:
            values = {
                "provider": provider,
                "source_id": i.source_id,
                "name": i.name,
                "status": i.status,
                "impact": i.impact,
                "started_at": i.started_at,
                "resolved_at": i.resolved_at,
                "updated_at": i.updated_at,
                "shortlink": i.shortlink,
                "fetched_at": now,
            }
            stmt = dialect_insert(_T).values(**values)
            stmt = stmt.on_conflict_do_update(
                index_elements=["provider", "source_id"],
                set_={k: stmt.excluded[k] for k in values if k not in ("provider", "source_id", "started_at")},
            )
            conn.execute(stmt)
            written += 1
        gone = and_(_C.provider == provider, _C.resolved_at.is_(None))
        if listed:
            gone = and_(gone, _C.source_id.not_in([i.source_id for i in listed]))
        written += conn.execute(
            update(_T).where(gone).values(resolved_at=now, status="resolved", updated_at=now, fetched_at=now)
        ).rowcount
    return written


def incidents_between(engine: Engine, start: datetime, end: datetime) -> list[OfficialIncident]:
    """Official incidents whose life overlaps [start, end), oldest first."""
    query = (
        select(*(_C[f] for f in OfficialIncident.__dataclass_fields__))
        .where(_C.started_at < end, or_(_C.resolved_at.is_(None), _C.resolved_at >= start))
        .order_by(_C.started_at, _C.id)
    )
    with engine.connect() as conn:
        return [OfficialIncident(*r) for r in conn.execute(query).all()]


def incidents_near(conn, provider: str, moment: datetime, window) -> list[OfficialIncident]:
    """A provider's incidents that began within `window` of `moment`, on the caller's connection."""
    query = select(*(_C[f] for f in OfficialIncident.__dataclass_fields__)).where(
        _C.provider == provider, _C.started_at >= moment - window, _C.started_at <= moment + window
    )
    return [OfficialIncident(*r) for r in conn.execute(query).all()]
