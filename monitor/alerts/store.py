"""The alert engine's database edge: alert rows and their outbox rows, one transaction.

`apply_changes` writes the lifecycle's changes and enqueues each notification
in `notification_outbox` on the caller's connection, so the state change and
the page it causes commit together or not at all: a crash can neither lose a
page (state changed, nothing queued) nor repeat one (queued twice).
Core SQL on the storage tables; no ORM object leaves this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.alerts.payload import build_body
from monitor.alerts.records import LIVE_STATES, REPEAT_EVENT, RESOLVED, AlertRecord, Change
from monitor.alerts.scope import PROVIDER_REGION, Scope
from monitor.redact import redact
from monitor.storage.models import Alert, NotificationOutbox

ALERTS = Alert.__table__
OUTBOX = NotificationOutbox.__table__
_RECORD_COLUMNS = (
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
    "last_evaluated_at",
    "last_notified_at",
    "pending_count",
    "clear_count",
    "silenced",
    "summary",
)


def record_from_row(row: Any) -> AlertRecord:
    m = row._mapping
    scope = Scope(provider=m["provider"], region=m["region"], model=m["model"], prompt=m["prompt"])
    return AlertRecord(scope=scope, id=m["id"], **{c: m[c] for c in _RECORD_COLUMNS})


def _row_values(record: AlertRecord) -> dict[str, Any]:
    values = {c: getattr(record, c) for c in _RECORD_COLUMNS}
    values.update(
        scope_kind=record.scope.kind,
        scope_key=record.scope.key,
        provider=record.scope.provider,
        model=record.scope.model,
        region=record.scope.region,
        prompt=record.scope.prompt,
    )
    return values


def load_live(conn: Connection) -> list[AlertRecord]:
    rows = conn.execute(select(ALERTS).where(ALERTS.c.state.in_(LIVE_STATES)).order_by(ALERTS.c.id))
    return [record_from_row(r) for r in rows]


def group_resolutions(conn: Connection, since: datetime) -> dict[tuple[str, str], datetime]:
    """(rule, provider@region) -> when its provider-region alert last resolved, since `since`."""
    query = (
        select(ALERTS.c.rule, ALERTS.c.scope_key, func.max(ALERTS.c.resolved_at))
        .where(ALERTS.c.scope_kind == PROVIDER_REGION, ALERTS.c.state == RESOLVED, ALERTS.c.resolved_at >= since)
        .group_by(ALERTS.c.rule, ALERTS.c.scope_key)
    )
    return {(rule, key): at for rule, key, at in conn.execute(query)}


def list_alerts(conn: Connection, *, live_only: bool = False, limit: int = 100) -> list[AlertRecord]:
    query = select(ALERTS).order_by(ALERTS.c.id.desc()).limit(limit)
    if live_only:
        query = query.where(ALERTS.c.state.in_(LIVE_STATES))
    return [record_from_row(r) for r in conn.execute(query)]


def apply_changes(
    conn: Connection,
    changes: Iterable[Change],
    notifiers: Sequence[Any],
    *,
    dashboard_url: str | None,
    now: datetime,
    secrets: Iterable[str] = (),
) -> int:
    """Store each change and enqueue its events for every notifier that wants its severity.

    Returns the number of outbox rows queued. Runs in the caller's transaction.
    """
    queued = 0
    url = redact(dashboard_url, secrets) if dashboard_url else None
    for change in changes:
        record = change.record
        if change.delete:
            if record.id is not None:
                conn.execute(delete(ALERTS).where(ALERTS.c.id == record.id))
            continue
        if record.id is None:
            alert_id = conn.execute(insert(ALERTS).values(**_row_values(record)).returning(ALERTS.c.id)).scalar_one()
        else:
            alert_id = record.id
            conn.execute(update(ALERTS).where(ALERTS.c.id == alert_id).values(**_row_values(record)))
        for event in change.events:
            body = build_body(record, event, alert_id, url)
            seq = _next_repeat_seq(conn, alert_id) if event == REPEAT_EVENT else 0
            for notifier in notifiers:
                if notifier.wants(record.severity):
                    queued += _enqueue(conn, alert_id, event, seq, notifier.name, body, now)
    return queued


def _next_repeat_seq(conn: Connection, alert_id: int) -> int:
    last = conn.execute(
        select(func.max(OUTBOX.c.event_seq)).where(OUTBOX.c.alert_id == alert_id, OUTBOX.c.event == REPEAT_EVENT)
    ).scalar()
    return 1 if last is None else int(last) + 1


def _enqueue(
    conn: Connection, alert_id: int, event: str, seq: int, notifier: str, body: dict[str, Any], now: datetime
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
        next_attempt_at=now,
        created_at=now,
    )
    # The unique (alert, event, notifier, seq) key is the last line of defence against a duplicate page.
    stmt = stmt.on_conflict_do_nothing(index_elements=["alert_id", "event", "notifier", "event_seq"])
    return len(conn.execute(stmt.returning(OUTBOX.c.id)).all())
