"""Incidents' database edge (DESIGN §16): drafted in the alert engine's write transaction, then
published, updated and resolved by people (`firsttoken incident`, the dashboard's Alerts page).

- `draft_incidents(conn, changes, config, now)`: the engine's write step calls it right after storing
  the round's alert changes, on the same connection: an incident and the alerts that made it commit
  together or not at all. It reads what monitor/incidents/drafting.py needs (the open incidents, which
  of the changed alerts already belong to one, the providers' own incidents near), drafts, writes.
- `status_site.publish: auto` publishes each incident and update as it is written; `manual` keeps them
  drafts until `publish` (which publishes the incident and every draft update it holds).
- `post_update` / `resolve`: a person's update; published at once when the incident is published.

Core SQL on the storage tables; values out (monitor/incidents/views.py reads them back).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update

from monitor.incidents.drafting import (
    FIRING,
    RESOLVED,
    STATES,
    UPDATE,
    AlertMark,
    IncidentPlan,
    OpenIncident,
    draft,
    opens,
)
from monitor.official.match import MATCH_WINDOW
from monitor.storage.models import Alert, IncidentAlertRow, IncidentRow, IncidentUpdateRow
from monitor.storage.queries.official import incidents_near

log = logging.getLogger(__name__)

ALERTS = Alert.__table__
INCIDENTS = IncidentRow.__table__
MARKS = IncidentAlertRow.__table__
UPDATES = IncidentUpdateRow.__table__
DRAFT, PUBLISHED = "draft", "published"
MAX_MESSAGE_CHARS = 5000


class IncidentNotFound(LookupError):
    def __init__(self, incident_id: int) -> None:
        super().__init__(f"no incident {incident_id}")
        self.incident_id = incident_id


# ------------------------------------------------------------------ from the alert engine
def draft_incidents(conn: Connection, changes: Iterable[Any], config: Any, now: datetime) -> int:
    """Draft this round's incident opens, updates and resolutions (DESIGN §16); the number of updates
    written. Runs in the caller's transaction (the alert engine's write).

    Incidents never stop a page: should drafting fail (a bug), it is logged and the round's alerts are
    written all the same; the next round catches up (an alert that stopped firing meanwhile is found
    in the alerts table, not only in a round's changes)."""
    try:
        plans = _plans(conn, [c for c in changes if not c.delete and c.record.fired_at is not None], config, now)
    except Exception:
        log.exception("incidents: drafting failed this round; the alerts are written, incidents catch up")
        return 0
    auto = getattr(getattr(config, "status_site", None), "publish", "auto") == "auto"
    return write_plans(conn, plans, now, auto=auto)


def _plans(conn: Connection, changes: list[Any], config: Any, now: datetime) -> list[IncidentPlan]:
    open_incidents = load_open(conn)
    shown = shown_on_site(config)
    candidates = [c.record for c in changes if opens(c.record, shown)]
    if not open_incidents and not candidates:
        return []  # most rounds: nothing fires, nothing is open
    known = _known(conn, [c.record for c in changes])
    near: dict[str, datetime] = {i.provider: i.started_at for i in open_incidents if i.official_id is None}
    for record in candidates:
        near.setdefault(record.scope.provider, record.fired_at)
    official = {p: incidents_near(conn, p, at, MATCH_WINDOW) for p, at in near.items()}
    gone = _gone(conn, open_incidents)
    return draft(changes, open_incidents, now=now, known=known, official=official, shown=shown, gone=gone)


def _gone(conn: Connection, open_incidents: Sequence[OpenIncident]) -> frozenset[tuple[str, str, datetime]]:
    """The firing marks of open incidents whose alert no longer fires (resolved, or gone)."""
    marks = {m.key for i in open_incidents for m in i.alerts if m.state == FIRING}
    if not marks:
        return frozenset()
    query = select(ALERTS.c.rule, ALERTS.c.scope_key, ALERTS.c.fired_at).where(
        ALERTS.c.state == FIRING,
        ALERTS.c.rule.in_(sorted({k[0] for k in marks})),
        ALERTS.c.scope_key.in_(sorted({k[1] for k in marks})),
    )
    firing = {tuple(r) for r in conn.execute(query)}
    return frozenset(marks - firing)


def shown_on_site(config: Any):
    """`shown(provider, model | None)`: whether the status site's `components:` globs show it; None
    when they show every target."""
    site = getattr(config, "status_site", None)
    globs = tuple(getattr(site, "components", ("*",)) or ("*",))
    if "*" in globs:
        return None
    pairs = {(t.provider, t.model) for t in config.targets if any(fnmatchcase(t.id, g) for g in globs)}
    providers = {p for p, _ in pairs}

    def shown(provider: str, model: str | None) -> bool:
        return provider in providers if model is None else (provider, model) in pairs

    return shown


def load_open(conn: Connection) -> list[OpenIncident]:
    rows = conn.execute(select(INCIDENTS).where(INCIDENTS.c.state != RESOLVED).order_by(INCIDENTS.c.id)).all()
    if not rows:
        return []
    marks: dict[int, list[AlertMark]] = {}
    query = select(MARKS).where(MARKS.c.incident_id.in_([r.id for r in rows])).order_by(MARKS.c.id)
    for m in conn.execute(query):
        marks.setdefault(m.incident_id, []).append(AlertMark(m.rule, m.scope_key, m.fired_at, m.state, m.agents))
    out: dict[str, OpenIncident] = {}
    for r in rows:  # one open incident per provider: the newest wins if a hand-made state left two
        out[r.provider] = OpenIncident(
            r.provider,
            r.title,
            r.state,
            r.started_at,
            tuple(r.components or ()),
            r.vantage_points,
            r.official_id,
            tuple(marks.get(r.id, ())),
            r.id,
        )
    return list(out.values())


def _known(conn: Connection, records: Sequence[Any]) -> frozenset[tuple[str, str, datetime]]:
    """The (rule, scope key, fired at) of these alerts that already belong to an incident."""
    pairs = {(r.rule, r.scope.key) for r in records}
    if not pairs:
        return frozenset()
    wanted = {(r.rule, r.scope.key, r.fired_at) for r in records}
    found = set()
    rules = sorted({rule for rule, _ in pairs})
    keys = sorted({key for _, key in pairs})
    query = select(MARKS.c.rule, MARKS.c.scope_key, MARKS.c.fired_at).where(
        MARKS.c.rule.in_(rules), MARKS.c.scope_key.in_(keys)
    )
    for rule, key, fired_at in conn.execute(query):
        if (rule, key, fired_at) in wanted:
            found.add((rule, key, fired_at))
    return frozenset(found)


def write_plans(conn: Connection, plans: Sequence[IncidentPlan], now: datetime, *, auto: bool) -> int:
    written = 0
    for plan in plans:
        incident = plan.incident
        values = {
            "title": incident.title,
            "state": incident.state,
            "components": list(incident.components),
            "started_at": incident.started_at,
            "resolved_at": now if incident.state == RESOLVED else None,
            "updated_at": now,
            "vantage_points": incident.vantage_points,
            "official_id": incident.official_id,
        }
        if incident.id is None:
            incident_id = conn.execute(
                insert(INCIDENTS)
                .values(provider=incident.provider, status=DRAFT, created_at=now, **values)
                .returning(INCIDENTS.c.id)
            ).scalar_one()
        else:
            incident_id = incident.id
            conn.execute(update(INCIDENTS).where(INCIDENTS.c.id == incident_id).values(**values))
        for mark in plan.marks:
            _write_mark(conn, incident_id, mark)
        for u in plan.updates:
            conn.execute(
                insert(UPDATES).values(
                    incident_id=incident_id, at=u.at, kind=u.kind, state=u.state, message=u.message, published=False
                )
            )
            written += 1
        if auto:
            publish(conn, incident_id, now)
    return written


def _write_mark(conn: Connection, incident_id: int, mark: AlertMark) -> None:
    same = and_(
        MARKS.c.incident_id == incident_id,
        MARKS.c.rule == mark.rule,
        MARKS.c.scope_key == mark.scope_key,
        MARKS.c.fired_at == mark.fired_at,
    )
    if conn.execute(update(MARKS).where(same).values(state=mark.state, agents=mark.agents)).rowcount:
        return
    conn.execute(
        insert(MARKS).values(
            incident_id=incident_id,
            rule=mark.rule,
            scope_key=mark.scope_key,
            fired_at=mark.fired_at,
            state=mark.state,
            agents=mark.agents,
        )
    )


# ------------------------------------------------------------------ by people
def publish(conn: Connection, incident_id: int, now: datetime) -> int:
    """Publish the incident and each of its draft updates; the number of updates published."""
    row = conn.execute(select(INCIDENTS.c.status).where(INCIDENTS.c.id == incident_id)).first()
    if row is None:
        raise IncidentNotFound(incident_id)
    if row.status != PUBLISHED:
        conn.execute(
            update(INCIDENTS)
            .where(INCIDENTS.c.id == incident_id)
            .values(status=PUBLISHED, published_at=now, updated_at=now)
        )
    return conn.execute(
        update(UPDATES)
        .where(UPDATES.c.incident_id == incident_id, UPDATES.c.published.is_(False))
        .values(published=True, published_at=now)
    ).rowcount


def post_update(
    conn: Connection,
    incident_id: int,
    message: str,
    *,
    now: datetime,
    state: str | None = None,
    created_by: str | None = None,
) -> int:
    """A person's update (a new `state`, or the same with a message); the update's id. Published at once
    when the incident is; a draft incident's update waits for `publish` with the rest."""
    message = (message or "").strip()
    if not message:
        raise ValueError("an update needs a message")
    if len(message) > MAX_MESSAGE_CHARS:
        raise ValueError(f"a message holds at most {MAX_MESSAGE_CHARS} characters")
    if state is not None and state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}")
    row = conn.execute(select(INCIDENTS.c.status, INCIDENTS.c.state).where(INCIDENTS.c.id == incident_id)).first()
    if row is None:
        raise IncidentNotFound(incident_id)
    new_state = state or row.state
    values: dict[str, Any] = {"state": new_state, "updated_at": now}
    if new_state == RESOLVED and row.state != RESOLVED:
        values["resolved_at"] = now
    elif new_state != RESOLVED:
        values["resolved_at"] = None  # reopened by hand
    conn.execute(update(INCIDENTS).where(INCIDENTS.c.id == incident_id).values(**values))
    published = row.status == PUBLISHED
    return conn.execute(
        insert(UPDATES)
        .values(
            incident_id=incident_id,
            at=now,
            kind=RESOLVED if new_state == RESOLVED and row.state != RESOLVED else UPDATE,
            state=new_state,
            message=message,
            published=published,
            published_at=now if published else None,
            created_by=created_by,
        )
        .returning(UPDATES.c.id)
    ).scalar_one()


def resolve(
    conn: Connection, incident_id: int, *, now: datetime, message: str | None = None, created_by: str | None = None
) -> int:
    """Resolve by hand (its alerts may still fire: they stay its own and open no other incident)."""
    row = conn.execute(select(INCIDENTS.c.state).where(INCIDENTS.c.id == incident_id)).first()
    if row is None:
        raise IncidentNotFound(incident_id)
    if row.state == RESOLVED:
        raise ValueError(f"incident {incident_id} is already resolved")
    return post_update(conn, incident_id, message or "Resolved.", now=now, state=RESOLVED, created_by=created_by)
