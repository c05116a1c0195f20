"""Read-only views of the alert engine's tables (alerts, silences, outbox) for the dashboard.

The alert engine owns these tables; nothing here writes to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, or_, select

from monitor.storage.models import Alert, NotificationOutbox, Silence

_A = Alert.__table__.c
_O = NotificationOutbox.__table__.c
_SIL = Silence.__table__.c
LIVE_STATES = ("pending", "firing")
# Below the quorum of vantage points (DESIGN §11; monitor.alerts.scope.VANTAGE_KINDS): one agent's view
# of a target, or of its own path. Kept, shown to operators, never public.
VANTAGE_SCOPES = ("vantage", "agent")


@dataclass(frozen=True)
class AlertView:
    id: int
    rule: str
    scope_kind: str  # target | provider_region | vantage | agent
    scope_key: str
    provider: str | None
    model: str | None
    region: str | None
    prompt: str | None
    state: str  # pending | firing | resolved
    severity: str
    metric: str
    value: float | None  # the latest; once resolved, the value it resolved at
    baseline: float | None
    started_at: datetime
    fired_at: datetime | None
    resolved_at: datetime | None
    summary: str | None
    silenced: bool
    fired_value: float | None = None  # the value when it fired
    worst_value: float | None = None  # its worst while firing (max; min for tps and `below` rules)
    value_text: str | None = None  # kind: change: the new label
    baseline_text: str | None = None  # and the established one it left
    # Vantage points (DESIGN §11): the agent of an alert below the quorum, where it holds and where not,
    # and the network/provider split of a latency change.
    agent: str | None = None
    agents: list[str] | None = None
    agents_clear: list[str] | None = None
    attribution: dict[str, Any] | None = None
    # DESIGN §15: the alert that inhibits this one (kept, delivered nowhere) and what mutes it.
    inhibited_by: int | None = None
    muted: str | None = None  # silence | maintenance

    @property
    def held_back(self) -> str:
        """Why nobody is told of it: `inhibited by #12`, `muted: maintenance`; '' when it notifies."""
        if self.inhibited_by is not None:
            return f"inhibited by #{self.inhibited_by}"
        if self.muted or self.silenced:
            return f"muted: {self.muted or 'silence'}"
        return ""

    @property
    def quorum_confirmed(self) -> bool:
        """Confirmed by the quorum of vantage points: the only alerts the public status, its feed, its
        badges and the Provider health page show (DESIGN §16). A vantage or agent alert is one agent's view."""
        return self.scope_kind not in VANTAGE_SCOPES

    @property
    def is_change(self) -> bool:
        """A `kind: change` alert: a route, model or build changed (its values are labels)."""
        return self.value_text is not None or self.baseline_text is not None

    @property
    def change_text(self) -> str:
        return f"{self.metric}: {self.baseline_text or '?'} → {self.value_text or '?'}"

    @property
    def begins_at(self) -> datetime:
        """When the incident began for a reader: firing time, else when the condition was first seen."""
        return self.fired_at or self.started_at

    def duration_s(self, now: datetime) -> float:
        """How long it has fired (or did): from `begins_at` to its resolution, or to now."""
        return ((self.resolved_at or now) - self.begins_at).total_seconds()

    def covers(self, provider: str, model: str, region: str, prompt: str) -> bool:
        """Does this alert's scope include that target? None in the scope means 'every'."""
        if self.scope_kind == "agent":  # about one agent's path, not about any target
            return False
        wanted = {"provider": provider, "model": model, "region": region, "prompt": prompt}
        return all(getattr(self, k) in (None, v) for k, v in wanted.items())


_ALERT_COLUMNS = [_A[f] for f in AlertView.__dataclass_fields__]


def alerts_between(engine: Engine, start: datetime, end: datetime, *, fired_only: bool = False) -> list[AlertView]:
    """Alerts whose life overlaps [start, end), newest first; live ones always included."""
    query = select(*_ALERT_COLUMNS).where(_A.started_at < end, or_(_A.resolved_at.is_(None), _A.resolved_at >= start))
    if fired_only:
        query = query.where(_A.fired_at.is_not(None))
    with engine.connect() as conn:
        rows = conn.execute(query.order_by(_A.started_at.desc(), _A.id.desc())).all()
    return [AlertView(*r) for r in rows]


def alert(engine: Engine, alert_id: int) -> AlertView | None:
    with engine.connect() as conn:
        row = conn.execute(select(*_ALERT_COLUMNS).where(_A.id == alert_id)).first()
    return None if row is None else AlertView(*row)


def live_alerts(engine: Engine) -> list[AlertView]:
    query = select(*_ALERT_COLUMNS).where(_A.state.in_(LIVE_STATES)).order_by(_A.started_at.desc())
    with engine.connect() as conn:
        return [AlertView(*r) for r in conn.execute(query).all()]


@dataclass(frozen=True)
class SilenceView:
    id: int
    match: dict[str, Any]
    starts_at: datetime
    ends_at: datetime
    reason: str | None
    created_by: str | None

    def active(self, now: datetime) -> bool:
        return self.starts_at <= now < self.ends_at


def silences(engine: Engine, ended_after: datetime) -> list[SilenceView]:
    """Active and future silences, and those that ended after `ended_after`."""
    query = select(_SIL.id, _SIL.match, _SIL.starts_at, _SIL.ends_at, _SIL.reason, _SIL.created_by)
    query = query.where(_SIL.ends_at >= ended_after).order_by(_SIL.ends_at.desc())
    with engine.connect() as conn:
        return [SilenceView(r[0], dict(r[1] or {}), *r[2:]) for r in conn.execute(query).all()]


@dataclass(frozen=True)
class DeliveryView:
    id: int
    alert_id: int
    rule: str | None
    scope_key: str | None
    event: str  # firing | resolved | repeat
    notifier: str
    status: str  # pending | sent | failed
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    sent_at: datetime | None


def deliveries(engine: Engine, limit: int = 200) -> list[DeliveryView]:
    """The newest notification outbox rows with their alert's rule and scope."""
    query = (
        select(
            _O.id,
            _O.alert_id,
            _A.rule,
            _A.scope_key,
            _O.event,
            _O.notifier,
            _O.status,
            _O.attempts,
            _O.next_attempt_at,
            _O.last_error,
            _O.created_at,
            _O.sent_at,
        )
        .select_from(NotificationOutbox.__table__.outerjoin(Alert.__table__, _A.id == _O.alert_id))
        .order_by(_O.created_at.desc(), _O.id.desc())
        .limit(limit)
    )
    with engine.connect() as conn:
        return [DeliveryView(*r) for r in conn.execute(query).all()]
