"""Values the lifecycle works on: one alert (a row of `alerts`), a rule's view, a change."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from monitor.alerts.scope import Scope
from monitor.units import HOUR_S

PENDING, FIRING, RESOLVED = "pending", "firing", "resolved"
LIVE_STATES = (PENDING, FIRING)
FIRING_EVENT, REPEAT_EVENT, RESOLVED_EVENT = "firing", "repeat", "resolved"


@dataclass(frozen=True, slots=True)
class AlertRecord:
    """One alert: a rule on one scope, from pending to resolved. `id` is None until stored."""

    rule: str
    scope: Scope
    state: str  # pending | firing | resolved
    severity: str
    metric: str
    started_at: datetime  # the condition first held (pending)
    fired_at: datetime | None = None
    resolved_at: datetime | None = None
    value: float | None = None  # the metric's current value, in its units
    baseline: float | None = None  # what is normal for it (regression) or the bound (threshold): RuleView.reference
    value_text: str | None = None  # kind: change: the new label
    baseline_text: str | None = None  # kind: change: the established label it left
    fired_value: float | None = None  # `value` when the alert went firing
    worst_value: float | None = None  # the worst `value` while firing (RuleView.higher_is_worse says which way)
    last_evaluated_at: datetime | None = None
    last_notified_at: datetime | None = None  # None while firing: nobody has been paged yet
    pending_count: int = 0
    clear_count: int = 0
    silenced: bool = False
    summary: str | None = None
    # Vantage points (DESIGN §11): where the condition holds, where it does not, and for a latency rule
    # the change split into {network_ms, provider_ms, dominant}.
    agents: tuple[str, ...] = ()
    agents_clear: tuple[str, ...] = ()
    attribution: dict | None = None
    id: int | None = None
    # SLO burn-rate alerts only (DESIGN §12): `value` is the burn rate, `baseline` the pair's factor.
    slo: str | None = None
    burn_window: str | None = None  # the window pair that holds, `1h/5m`
    budget_remaining: float | None = None  # of the period's error budget, 1 = untouched
    # DESIGN §15: the alert that inhibits this one (kept, delivered nowhere) and what mutes it. While
    # the inhibiting alert is new this round it has no id yet: `inhibited_by` is then UNSTORED,
    # `inhibitor` names it, and the write stage (store.py) puts in its id.
    inhibited_by: int | None = None
    muted: str | None = None  # silence | maintenance
    # What this round found that the summary says (render.py); not stored, not compared.
    facts: Facts | None = field(default=None, compare=False)
    inhibitor: tuple[str, str] | None = field(default=None, compare=False)  # (rule, scope key) inhibiting it

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES


UNSTORED = 0  # inhibited_by of an alert whose inhibitor is written in the same transaction


@dataclass(frozen=True, slots=True)
class Facts:
    """This round's findings about one alert that are not columns of its row, for its summary.

    Set by the stage that finds them; `render` reads them once, at the end of the round."""

    reference: str = "baseline"  # what `baseline` is, in words: baseline, threshold, was
    say_agents: bool = False  # name where it is seen and where not (several vantage points probe it)
    own_path: tuple[str, ...] = ()  # a lone agent's alarm held as its own path: the providers it rose towards
    firing: int = 0  # a provider-region alert: its targets firing, of `members`
    members: int = 0
    providers: tuple[str, ...] = ()  # an agent-wide alert: the providers its path degraded towards
    targets: int = 0  # ...over this many targets
    others_clear: bool = False  # ...and other vantage points see them normal
    reason: str = ""  # why it resolved, when that is not the metric itself
    slo_objective: float | None = None  # an SLO alert: its objective and period
    slo_period_s: float | None = None


@dataclass(frozen=True, slots=True)
class RuleView:
    """What the lifecycle needs of a rule (also built for a rule that left the config)."""

    name: str
    severity: str = "page"
    metric: str = "ttft_ms"
    repeat_interval_s: float = 4 * HOUR_S
    reference: str = "baseline"  # what an alert's `baseline` holds, in words: "baseline", "threshold", "was"
    higher_is_worse: bool = True  # latencies and error rates; False for tps and `below` thresholds
    vantage_severity: str = "ticket"  # below the quorum of vantage points (DESIGN §11)
    confirm: object = None  # the rule's `confirm:` (agents or share), None for the default quorum

    @classmethod
    def of(cls, rule) -> RuleView:
        reference = {"threshold": "threshold", "change": "was"}.get(rule.kind, "baseline")
        return cls(
            rule.name,
            rule.severity,
            rule.metric,
            rule.repeat_interval_s,
            reference,
            higher_is_worse(rule),
            getattr(rule, "vantage_severity", "ticket"),
            getattr(rule, "confirm", None),
        )


def higher_is_worse(rule) -> bool:
    """Which way a rule's metric goes bad: a `below` threshold and decode speed get worse downwards."""
    if getattr(rule, "kind", None) == "threshold":
        return getattr(rule, "below", None) is None
    return rule.metric != "tps"


def track_values(record: AlertRecord, higher_worse: bool) -> AlertRecord:
    """Keep the value the alert fired at and its worst value since, from its current `value`."""
    if record.state != FIRING or record.value is None:
        return record
    value = record.value
    fired = record.fired_value if record.fired_value is not None else value
    worst = record.worst_value
    if worst is None or (value > worst if higher_worse else value < worst):
        worst = value
    if fired == record.fired_value and worst == record.worst_value:
        return record
    return replace(record, fired_value=fired, worst_value=worst)


@dataclass(frozen=True, slots=True)
class Change:
    """Store `record` (insert when its id is None), or delete it; then enqueue `events` for it."""

    record: AlertRecord
    events: tuple[str, ...] = ()
    delete: bool = False
