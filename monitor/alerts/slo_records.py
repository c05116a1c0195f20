"""SLO burn-rate alerts as alert records (DESIGN §12), pure but for `load_live_slo`: open one, follow
its burn rate, close it, decide what to notify. `rule` is `slo:<name>`, `metric` `burn_rate`,
`value` the burn rate over the long window of the pair that holds, `baseline` that pair's factor."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from sqlalchemy import select

from monitor.alerts.records import FIRING, FIRING_EVENT, REPEAT_EVENT, RESOLVED, RESOLVED_EVENT, AlertRecord, Change
from monitor.alerts.store import ALERTS, RECORD_COLUMNS
from monitor.slo.burn import Verdict
from monitor.slo.scopes import SloScope
from monitor.units import HOUR_S, format_duration

RULE_PREFIX = "slo:"
METRIC = "burn_rate"
REPEAT_INTERVAL_S = 4 * HOUR_S  # as an alert rule's default repeat_interval


def rule_of(slo_name: str) -> str:
    return RULE_PREFIX + slo_name


def open_record(slo, scope: SloScope, at: datetime, severity: str) -> AlertRecord:
    return AlertRecord(
        rule=rule_of(slo.name),
        scope=scope,
        state=FIRING,
        severity=severity,
        metric=METRIC,
        started_at=at,
        fired_at=at,
        slo=slo.name,
    )


def observed(record: AlertRecord, verdict: Verdict | None) -> AlertRecord:
    if verdict is None or verdict.window is None:
        return record
    rate = verdict.burn_rate
    worst = (
        rate if record.worst_value is None or (rate is not None and rate > record.worst_value) else record.worst_value
    )
    return replace(
        record,
        value=rate,
        baseline=verdict.window.factor,
        burn_window=verdict.window.name,
        fired_value=record.fired_value if record.fired_value is not None else rate,
        worst_value=worst,
    )


def close_record(record: AlertRecord, at: datetime, reason: str) -> list[Change]:
    text = f"SLO {record.slo}: {record.scope.key} no longer burns its error budget fast enough to alert"
    record = replace(record, state=RESOLVED, resolved_at=at, summary=text + (f" ({reason})" if reason else ""))
    if record.last_notified_at is not None:  # the firing was sent: close what it opened
        return [Change(record, (RESOLVED_EVENT,))]
    return [Change(record)]


def notify(record: AlertRecord, escalated: bool, silenced: bool, now: datetime) -> tuple[AlertRecord, tuple[str, ...]]:
    record = replace(record, silenced=silenced)
    if silenced:
        return record, ()
    if record.last_notified_at is None:
        return replace(record, last_notified_at=now), (FIRING_EVENT,)
    if escalated or (now - record.last_notified_at).total_seconds() >= REPEAT_INTERVAL_S:
        return replace(record, last_notified_at=now), (REPEAT_EVENT,)
    return record, ()


def summary_of(slo, scope: SloScope, record: AlertRecord) -> str:
    left = "" if record.budget_remaining is None else f"; {record.budget_remaining * 100:.0f}% of the budget left"
    rate = "n/a" if record.value is None else f"{record.value:.1f}x"
    return (
        f"SLO {slo.name} ({slo.objective * 100:g}% over {format_duration(slo.period_s)}): {scope.key} burns its error "
        f"budget at {rate} over {record.burn_window} (alerts at {record.baseline:g}x){left}"
    )


def load_live_slo(conn) -> dict[tuple[str, str], AlertRecord]:
    rows = conn.execute(
        select(ALERTS).where(ALERTS.c.slo.is_not(None), ALERTS.c.state.in_((FIRING, "pending"))).order_by(ALERTS.c.id)
    )
    out = {}
    for row in rows:
        m = row._mapping
        per = m["scope_kind"].removeprefix("slo_")
        scope = SloScope(per, m["provider"], m["model"], m["region"], m["prompt"])
        out[(m["rule"], m["scope_key"])] = AlertRecord(scope=scope, id=m["id"], **{c: m[c] for c in RECORD_COLUMNS})
    return out
