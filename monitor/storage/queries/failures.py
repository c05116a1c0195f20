"""One target's failed probes over a window, by error kind, for the dashboard's target page.

Failures are a few percent of probes, so even a month of them is a small read
on the (target, started_at) index; cancelled probes are not failures of the
provider (DESIGN §1) and are left out.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, func, select

from monitor.storage.models import SampleRow

_S = SampleRow.__table__.c
CANCELLED = "cancelled"


def failures(engine: Engine, target: str, start: datetime, end: datetime) -> list[tuple[datetime, str]]:
    """(started_at, error_kind) of every failed probe of `target` in [start, end), oldest first."""
    query = (
        select(_S.started_at, func.coalesce(_S.error_kind, "unknown"))
        .where(_S.target == target, _S.started_at >= start, _S.started_at < end, _S.ok.is_(False))
        .where(func.coalesce(_S.error_kind, "") != CANCELLED)
        .order_by(_S.started_at)
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return [(at if at.tzinfo else at.replace(tzinfo=UTC), kind) for at, kind in rows]
