"""The alert engine's database edge: alert rows and their outbox rows, one transaction.

`apply_changes` writes the lifecycle's changes and enqueues each notification
in `notification_outbox` on the caller's connection, so the state change and
the page it causes commit together or not at all: a crash can neither lose a
page (state changed, nothing queued) nor repeat one (queued twice).
Core SQL on the storage tables; no ORM object leaves this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.alerts.payload import build_body, with_alternative
from monitor.alerts.records import (
    FIRING,
    LIVE_STATES,
    REPEAT_EVENT,
    RESOLVED,
    RESOLVED_EVENT,
    UNSTORED,
    AlertRecord,
    Change,
)
from monitor.alerts.scope import PROVIDER_REGION, TARGET, Scope
from monitor.alerts.signing import AlertLinks
from monitor.official.match import MATCH_WINDOW, lead_text, matching_incident
from monitor.redact import redact
from monitor.slo.scopes import SloScope
from monitor.storage.models import Alert, NotificationOutbox
from monitor.storage.queries.official import incidents_near

ALERTS = Alert.__table__
OUTBOX = NotificationOutbox.__table__
RECORD_COLUMNS = (
    "rule",
    "state",
    "severity",
    "metric",
    "started_at",
    "fired_at",
    "resolved_at",
    "value",
    "baseline",
    "value_text",
    "baseline_text",
    "fired_value",
    "worst_value",
    "last_evaluated_at",
    "last_notified_at",
    "pending_count",
    "clear_count",
    "silenced",
    "summary",
    "slo",
    "burn_window",
    "budget_remaining",
    "inhibited_by",
    "muted",
)


def record_from_row(row: Any) -> AlertRecord:
    m = row._mapping
    if m["slo"] is not None:  # an SLO alert's scope is the SLO's `per:` (DESIGN §12)
        per = m["scope_kind"].removeprefix("slo_")
        scope = SloScope(per, m["provider"], m["model"], m["region"], m["prompt"])
    else:
        scope = Scope(m["provider"], m["region"], m["model"], m["prompt"], m["agent"])
    return AlertRecord(
        scope=scope,
        id=m["id"],
        agents=tuple(m["agents"] or ()),
        agents_clear=tuple(m["agents_clear"] or ()),
        attribution=m["attribution"],
        **{c: m[c] for c in RECORD_COLUMNS},
    )


def _row_values(record: AlertRecord) -> dict[str, Any]:
    values = {c: getattr(record, c) for c in RECORD_COLUMNS}
    values.update(
        scope_kind=record.scope.kind,
        agent=getattr(record.scope, "agent", None),
        scope_key=record.scope.key,
        provider=record.scope.provider,
        model=record.scope.model,
        region=record.scope.region,
        prompt=record.scope.prompt,
        agents=list(record.agents) or None,
        agents_clear=list(record.agents_clear) or None,
        attribution=record.attribution,
    )
    return values


def load_live(conn: Connection) -> list[AlertRecord]:
    rows = conn.execute(select(ALERTS).where(ALERTS.c.state.in_(LIVE_STATES)).order_by(ALERTS.c.id))
    return [record_from_row(r) for r in rows]


def runbooks_of(config) -> dict[str, str]:
    """Alert name -> the `runbook:` URL of its rule, or of its SLO (`slo:NAME`), where one is set."""
    found = {rule.name: rule.runbook for rule in config.alerts}
    found |= {f"slo:{slo.name}": slo.runbook for slo in config.slos}
    return {name: str(url) for name, url in found.items() if url}


def group_resolutions(conn: Connection, since: datetime) -> dict[tuple[str, str], datetime]:
    """(rule, provider@region) -> when its provider-region alert last resolved, since `since`."""
    query = (
        select(ALERTS.c.rule, ALERTS.c.scope_key, func.max(ALERTS.c.resolved_at))
        .where(ALERTS.c.scope_kind == PROVIDER_REGION, ALERTS.c.state == RESOLVED, ALERTS.c.resolved_at >= since)
        .group_by(ALERTS.c.rule, ALERTS.c.scope_key)
    )
    return {(rule, key): at for rule, key, at in conn.execute(query)}


def apply_changes(
    conn: Connection,
    changes: Iterable[Change],
    notifiers: Sequence[Any],
    *,
    dashboard_url: str | None,
    now: datetime,
    secrets: Iterable[str] = (),
    alternatives: Mapping[str, dict[str, Any] | None] | None = None,
    runbooks: Mapping[str, str] | None = None,
    links: AlertLinks | None = None,
) -> int:
    """Store each change and enqueue its events for every notifier that wants its severity.
    `alternatives` (alert scope key -> route, monitor.alerts.alternatives) names the route to take
    instead in each target alert's body and summary; `runbooks` (rule name, or `slo:NAME` -> URL)
    and `links` (the signer of the chart and silence links, monitor.alerts.signing) fill the
    body's DESIGN §18 links.

    Returns the number of outbox rows queued. Runs in the caller's transaction.
    """
    queued = 0
    url = redact(dashboard_url, secrets) if dashboard_url else None
    ids: dict[tuple[str, str], int] = {}
    # An alert inhibited by one new this round is written after it, with its id (DESIGN §15).
    for change in sorted(changes, key=lambda c: c.record.inhibited_by == UNSTORED):
        record = change.record
        if change.delete:
            if record.id is not None:
                conn.execute(delete(ALERTS).where(ALERTS.c.id == record.id))
            continue
        if record.inhibited_by == UNSTORED:
            record = replace(record, inhibited_by=ids.get(record.inhibitor or ("", "")))
        if record.id is None:
            alert_id = conn.execute(insert(ALERTS).values(**_row_values(record)).returning(ALERTS.c.id)).scalar_one()
        else:
            alert_id = record.id
            conn.execute(update(ALERTS).where(ALERTS.c.id == alert_id).values(**_row_values(record)))
        ids[(record.rule, record.scope.key)] = alert_id
        note = _official_note(conn, record) if change.events else ""
        for event in change.events:
            runbook = (runbooks or {}).get(record.rule)
            body = build_body(record, event, alert_id, url, runbook=runbook, links=links, now=now)
            if record.scope.kind == TARGET:
                with_alternative(body, (alternatives or {}).get(record.scope.key))
            if note:  # how far ahead of the provider's own status page this alert fired
                body["official_incident"] = note
            seq = _next_repeat_seq(conn, alert_id) if event == REPEAT_EVENT else 0
            for notifier in notifiers:
                # A resolution also closes what an earlier severity opened (an SLO alert escalates).
                if notifier.wants(record.severity) or (
                    event == RESOLVED_EVENT and _was_sent(conn, alert_id, notifier.name)
                ):
                    if event == RESOLVED_EVENT:
                        _drop_unsent_repeats(conn, alert_id, notifier.name)
                    queued += _enqueue(conn, alert_id, event, seq, notifier.name, body, now)
    return queued


def _official_note(conn: Connection, record: AlertRecord) -> str:
    if record.scope.provider is None:
        return ""
    fired = record.fired_at or record.started_at
    near = incidents_near(conn, record.scope.provider, fired, MATCH_WINDOW)
    return lead_text(fired, matching_incident(record.scope.provider, fired, near))


def _was_sent(conn: Connection, alert_id: int, notifier: str) -> bool:
    query = select(OUTBOX.c.id).where(OUTBOX.c.alert_id == alert_id, OUTBOX.c.notifier == notifier).limit(1)
    return conn.execute(query).first() is not None


def _drop_unsent_repeats(conn: Connection, alert_id: int, notifier: str) -> None:
    """A repeat not yet tried has nothing left to say once the alert resolved; left queued it would
    hold the resolution back until its own due time (rows of one alert go out in order)."""
    conn.execute(
        delete(OUTBOX).where(
            OUTBOX.c.alert_id == alert_id,
            OUTBOX.c.notifier == notifier,
            OUTBOX.c.event == REPEAT_EVENT,
            OUTBOX.c.status == "pending",
            OUTBOX.c.attempts == 0,
        )
    )


def queue_resend(
    conn: Connection, alert_id: int, notifier: str, body: dict[str, Any], *, now: datetime, due_at: datetime
) -> int:
    """Chain the next `repeat` of a firing alert to one notifier that wants a re-post every so often
    (Alertmanager forgets an alert it stops hearing about). Nothing when the alert no longer fires,
    is silenced, or already has a row waiting for this notifier. Runs in the caller's transaction."""
    alert = conn.execute(select(ALERTS.c.state, ALERTS.c.silenced).where(ALERTS.c.id == alert_id)).first()
    if alert is None or alert.state != FIRING or alert.silenced:
        return 0
    waiting = conn.execute(
        select(func.count())
        .select_from(OUTBOX)
        .where(OUTBOX.c.alert_id == alert_id, OUTBOX.c.notifier == notifier, OUTBOX.c.status == "pending")
    ).scalar()
    if waiting:
        return 0
    return _enqueue(conn, alert_id, REPEAT_EVENT, _next_repeat_seq(conn, alert_id), notifier, body, now, due_at=due_at)


def _next_repeat_seq(conn: Connection, alert_id: int) -> int:
    last = conn.execute(
        select(func.max(OUTBOX.c.event_seq)).where(OUTBOX.c.alert_id == alert_id, OUTBOX.c.event == REPEAT_EVENT)
    ).scalar()
    return 1 if last is None else int(last) + 1


def _enqueue(
    conn: Connection,
    alert_id: int,
    event: str,
    seq: int,
    notifier: str,
    body: dict[str, Any],
    now: datetime,
    *,
    due_at: datetime | None = None,
) -> int:
    dialect_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    stmt = dialect_insert(OUTBOX).values(
        alert_id=alert_id,
        event=event,
        event_seq=seq,
        notifier=notifier,
        payload=body,
        status="pending",
        attempts=0,
        next_attempt_at=due_at or now,
        created_at=now,
    )
    # The unique (alert, event, notifier, seq) key is the last line of defence against a duplicate page.
    stmt = stmt.on_conflict_do_nothing(index_elements=["alert_id", "event", "notifier", "event_seq"])
    return len(conn.execute(stmt.returning(OUTBOX.c.id)).all())
