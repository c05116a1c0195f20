"""Confirmation probes through the database (DESIGN §11): the leader asks, every other agent probes once.

When one vantage point's detector begins to see a target degrade, the leader's
alert engine writes a `confirmation_requests` row in the same transaction as
its alert changes (`request`); every agent polls the table every few seconds
(`after`) and probes each asked-for target it probes itself, unless it is the
agent that saw it first. So a quorum forms within seconds, not after two more
scheduled rounds at a 5-minute interval. Bounded: at most one ask per target
per its probe interval; the probe itself waits for the per-provider cap like
any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import NamedTuple

from sqlalchemy import Connection, Engine, delete, func, insert, select

from monitor.storage.models import ConfirmationRequest

_C = ConfirmationRequest.__table__
KEEP = timedelta(days=1)  # asks older than this are deleted when new ones are written


class Ask(NamedTuple):
    id: int
    target: str
    seen_from: str
    requested_at: datetime


def request(conn: Connection, asks: Mapping[str, str], intervals_s: Mapping[str, float], now: datetime) -> int:
    """Write an ask per target (target -> the agent that saw it) unless one was written within the target's
    interval. Returns how many were written. Runs in the caller's transaction."""
    if not asks:
        return 0
    longest = max((intervals_s.get(t, 60.0) for t in asks), default=60.0)
    recent = dict(
        conn.execute(
            select(_C.c.target, func.max(_C.c.requested_at))
            .where(_C.c.target.in_(sorted(asks)), _C.c.requested_at > now - timedelta(seconds=longest))
            .group_by(_C.c.target)
        ).all()
    )
    rows = [
        {"target": t, "seen_from": agent, "requested_at": now}
        for t, agent in sorted(asks.items())
        if t not in recent or recent[t] <= now - timedelta(seconds=intervals_s.get(t, 60.0))
    ]
    if rows:
        conn.execute(insert(_C), rows)
        conn.execute(delete(_C).where(_C.c.requested_at < now - KEEP))
    return len(rows)


def newest_id(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.max(_C.c.id))).scalar() or 0)


def after(engine: Engine, last_id: int, since: datetime) -> list[Ask]:
    """Asks newer than `last_id` and written since `since` (an ask older than that is moot), oldest first."""
    query = select(_C.c.id, _C.c.target, _C.c.seen_from, _C.c.requested_at)
    query = query.where(_C.c.id > last_id, _C.c.requested_at >= since).order_by(_C.c.id)
    with engine.connect() as conn:
        return [Ask(*row) for row in conn.execute(query)]
