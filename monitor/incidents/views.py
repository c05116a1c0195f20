"""Incidents read back as values: for `firsttoken incident`, the dashboard, the status site and its feed.

`public_incidents` is what the public may see: published incidents with their published updates only,
each in the state its newest published update announced (with `publish: manual` an incident may be
ahead of what was published).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, or_, select

from monitor.incidents.drafting import AlertMark
from monitor.storage.models import IncidentAlertRow, IncidentRow, IncidentUpdateRow

INCIDENTS = IncidentRow.__table__
MARKS = IncidentAlertRow.__table__
UPDATES = IncidentUpdateRow.__table__


@dataclass(frozen=True, slots=True)
class UpdateView:
    id: int
    incident_id: int
    at: datetime
    kind: str
    state: str
    message: str
    published: bool
    published_at: datetime | None
    created_by: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": _iso(self.at),
            "kind": self.kind,
            "state": self.state,
            "message": self.message,
            "published": self.published,
            "published_at": _iso(self.published_at),
            "created_by": self.created_by,
        }


@dataclass(frozen=True, slots=True)
class IncidentView:
    id: int
    provider: str
    title: str
    status: str  # draft | published
    state: str
    components: tuple[str, ...]
    started_at: datetime
    resolved_at: datetime | None
    created_at: datetime
    updated_at: datetime
    published_at: datetime | None
    vantage_points: int
    official_id: str | None
    updates: tuple[UpdateView, ...] = ()  # oldest first
    alerts: tuple[AlertMark, ...] = ()

    @property
    def drafts(self) -> int:
        return sum(not u.published for u in self.updates)

    def as_json(self, *, with_alerts: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "provider": self.provider,
            "title": self.title,
            "status": self.status,
            "state": self.state,
            "components": list(self.components),
            "started_at": _iso(self.started_at),
            "resolved_at": _iso(self.resolved_at),
            "updated_at": _iso(self.updated_at),
            "published_at": _iso(self.published_at),
            "vantage_points": self.vantage_points,
            "official_id": self.official_id,
            "updates": [u.as_json() for u in self.updates],
        }
        if with_alerts:
            out["alerts"] = [
                {"rule": a.rule, "scope": a.scope_key, "fired_at": _iso(a.fired_at), "state": a.state}
                for a in self.alerts
            ]
        return out


def _iso(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at is not None else None


def _update(row: Any) -> UpdateView:
    return UpdateView(
        row.id, row.incident_id, row.at, row.kind, row.state, row.message, bool(row.published),
        row.published_at, row.created_by,
    )  # fmt: skip


def _incident(row: Any, updates: Sequence[UpdateView] = (), alerts: Sequence[AlertMark] = ()) -> IncidentView:
    return IncidentView(
        row.id, row.provider, row.title, row.status, row.state, tuple(row.components or ()), row.started_at,
        row.resolved_at, row.created_at, row.updated_at, row.published_at, row.vantage_points, row.official_id,
        tuple(updates), tuple(alerts),
    )  # fmt: skip


def _updates_of(conn: Connection, ids: Sequence[int], *, published_only: bool = False) -> dict[int, list[UpdateView]]:
    out: dict[int, list[UpdateView]] = {}
    if not ids:
        return out
    query = select(UPDATES).where(UPDATES.c.incident_id.in_(list(ids)))
    if published_only:
        query = query.where(UPDATES.c.published.is_(True))
    for row in conn.execute(query.order_by(UPDATES.c.at, UPDATES.c.id)):
        out.setdefault(row.incident_id, []).append(_update(row))
    return out


def list_incidents(conn: Connection, *, limit: int = 50, open_only: bool = False) -> list[IncidentView]:
    """The newest incidents first, each with its updates (drafts included)."""
    query = select(INCIDENTS).order_by(INCIDENTS.c.started_at.desc(), INCIDENTS.c.id.desc()).limit(limit)
    if open_only:
        query = query.where(INCIDENTS.c.state != "resolved")
    rows = conn.execute(query).all()
    updates = _updates_of(conn, [r.id for r in rows])
    return [_incident(r, updates.get(r.id, ())) for r in rows]


def get_incident(conn: Connection, incident_id: int) -> IncidentView | None:
    row = conn.execute(select(INCIDENTS).where(INCIDENTS.c.id == incident_id)).first()
    if row is None:
        return None
    marks = [
        AlertMark(m.rule, m.scope_key, m.fired_at, m.state, m.agents)
        for m in conn.execute(select(MARKS).where(MARKS.c.incident_id == incident_id).order_by(MARKS.c.id))
    ]
    return _incident(row, _updates_of(conn, [incident_id]).get(incident_id, ()), marks)


def public_incidents(conn: Connection, since: datetime, *, limit: int = 50) -> list[IncidentView]:
    """Published incidents open now or active since `since`, newest first: their published updates only,
    their state the one the newest of those announced."""
    query = (
        select(INCIDENTS)
        .where(
            INCIDENTS.c.status == "published",
            or_(INCIDENTS.c.resolved_at.is_(None), INCIDENTS.c.resolved_at >= since, INCIDENTS.c.started_at >= since),
        )
        .order_by(INCIDENTS.c.started_at.desc(), INCIDENTS.c.id.desc())
        .limit(limit)
    )
    rows = conn.execute(query).all()
    updates = _updates_of(conn, [r.id for r in rows], published_only=True)
    out = []
    for r in rows:
        shown = updates.get(r.id, [])
        if not shown:
            continue
        view = _incident(r, shown)
        state = shown[-1].state
        resolved_at = view.resolved_at if state == "resolved" else None
        updated_at = max(u.published_at or u.at for u in shown)
        out.append(replace(view, state=state, resolved_at=resolved_at, updated_at=updated_at))
    return out
