"""The fold stage for SLO burn-rate verdicts (DESIGN §12, §15), pure: one SLO scope's verdicts this
round → its alert. `rule` is `slo:<name>`, `metric` `burn_rate`, `value` the burn rate over the long
window of the pair that holds, `baseline` that pair's factor. From here on an SLO alert goes through
the same stages as a rule's: inhibit, mute, hold and repeat, render, write."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from monitor.alerts.records import FIRING, RESOLVED, AlertRecord, Facts
from monitor.slo.burn import ESCALATED, Verdict
from monitor.slo.burn import FIRING as FIRED
from monitor.slo.burn import RESOLVED as CLEARED
from monitor.slo.windows import SEVERITY_RANK, TICKET

RULE_PREFIX = "slo:"
METRIC = "burn_rate"


def rule_of(slo_name: str) -> str:
    return RULE_PREFIX + slo_name


@dataclass(frozen=True, slots=True)
class SloVerdicts:
    """What one SLO scope's burn said this round (monitor.alerts.slo_source)."""

    slo: object  # the config's Slo
    scope: object  # monitor.slo.scopes.SloScope
    targets: tuple[str, ...]
    events: tuple[Verdict, ...]  # firing / escalated / resolved, oldest first
    severity: str | None  # the burn's severity after the round (None: not firing)
    last: Verdict | None  # the last verdict while firing
    fired_ts: float | None  # when the current firing began
    rebuilt: bool  # the series was rebuilt from history this round: a firing it finds is not news
    budget_remaining: float | None = None


def fold_slo(v: SloVerdicts, record: AlertRecord | None, now: datetime) -> tuple[list[AlertRecord], AlertRecord | None]:
    """(records that resolved, the live record or None)."""
    closed: list[AlertRecord] = []
    if v.rebuilt and v.severity is not None and record is None:
        at = datetime.fromtimestamp(v.fired_ts or now.timestamp(), UTC)
        record = _open(v, at, v.severity or TICKET)
    for verdict in v.events:
        at = datetime.fromtimestamp(verdict.timestamp_s, UTC)
        if verdict.event == FIRED and record is None:
            record = _observed(_open(v, at, verdict.severity), verdict)  # it fired at this verdict's burn
        elif verdict.event == ESCALATED and record is not None:
            record = replace(record, severity=verdict.severity)
        elif verdict.event == CLEARED and record is not None:
            closed.append(_close(_observed(record, v.last), at))
            record = None
    if record is not None and v.severity is None:  # rebuilt state says it is over
        closed.append(_close(record, now))
        record = None
    if record is None:
        return closed, None
    if SEVERITY_RANK.get(v.severity or "", 0) > SEVERITY_RANK.get(record.severity, 0):
        record = replace(record, severity=v.severity)
    record = replace(
        _observed(record, v.last),
        budget_remaining=v.budget_remaining if v.budget_remaining is not None else record.budget_remaining,
        last_evaluated_at=now,
        facts=Facts(slo_objective=v.slo.objective, slo_period_s=v.slo.period_s),
    )
    return closed, record


def _open(v: SloVerdicts, at: datetime, severity: str) -> AlertRecord:
    return AlertRecord(
        rule=rule_of(v.slo.name),
        scope=v.scope,
        state=FIRING,
        severity=severity,
        metric=METRIC,
        started_at=at,
        fired_at=at,
        slo=v.slo.name,
    )


def _observed(record: AlertRecord, verdict: Verdict | None) -> AlertRecord:
    if verdict is None or verdict.window is None:
        return record
    rate = verdict.burn_rate
    worst = record.worst_value
    if worst is None or (rate is not None and rate > worst):
        worst = rate
    return replace(
        record,
        value=rate,
        baseline=verdict.window.factor,
        burn_window=verdict.window.name,
        fired_value=record.fired_value if record.fired_value is not None else rate,
        worst_value=worst,
    )


def _close(record: AlertRecord, at: datetime, reason: str = "") -> AlertRecord:
    return replace(record, state=RESOLVED, resolved_at=at, facts=Facts(reason=reason))


def closed_slos(records: Sequence[AlertRecord], now: datetime) -> list[AlertRecord]:
    """SLO alerts whose SLO or scope left the config: nothing else could resolve them."""
    return [_close(r, now, "no longer evaluated") for r in records]
