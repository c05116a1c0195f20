"""Alert lifecycle, pure: live alerts + this round's detector evaluations + now → changes.

    changes = step_rule(RuleInput(rule, live, evaluations, members, intervals_s), muted, now)

Each `Change` is one alerts row to insert, update or delete, with the
notification events (`firing`, `repeat`, `resolved`) to enqueue for it in the
same transaction. Nothing here reads a clock or a database, so the whole
policy (DESIGN §5) is tested with plain values:

- A target's alert follows its detector: `pending` → `firing` → `resolved`
  (the detector counts `for_evaluations` and `resolve_after`, so flapping is
  decided there). A pending alert whose condition goes away is deleted: it
  never notified anybody and is not an incident.
- Grouping (grouping.py): when most targets of a provider in one region fire
  together, one provider-region alert is opened and the per-target alerts of
  that group are inhibited: still recorded, never notified.
- A target's first page waits `hold_s` after it fired when its provider-region
  has other targets, so that targets degrading a sample apart still group.
- Silences mute notifications only; a silenced firing alert pages when the
  silence ends if it is still firing. A resolution is notified exactly when
  the firing was, so a PagerDuty incident that was opened is also closed.
- Firing alerts re-notify every `repeat_interval_s`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from monitor.alerts.detectors.base import FIRING as DETECTOR_FIRING
from monitor.alerts.detectors.base import OK as DETECTOR_OK
from monitor.alerts.detectors.base import Evaluation
from monitor.alerts.grouping import GroupPolicy, step_groups
from monitor.alerts.quorum import Verdict
from monitor.alerts.records import (
    FIRING,
    FIRING_EVENT,
    PENDING,
    REPEAT_EVENT,
    RESOLVED,
    RESOLVED_EVENT,
    AlertRecord,
    Change,
    RuleView,
    track_values,
)
from monitor.alerts.scope import TARGET, VANTAGE, Scope
from monitor.alerts.summary import resolved_summary, resolved_target_summary, target_summary
from monitor.alerts.vantage_alerts import Attribute, decorate, step_vantage

__all__ = ["Change", "GroupPolicy", "RuleInput", "fold_target", "step_rule"]


@dataclass(frozen=True, slots=True)
class RuleInput:
    rule: RuleView
    live: Mapping[str, AlertRecord]  # scope key -> this rule's pending/firing record
    evaluations: Mapping[str, Sequence[Evaluation]]  # target id -> this round's evaluations, oldest first
    members: Mapping[str, Scope]  # target id -> scope: every configured target the rule applies to
    intervals_s: Mapping[str, float] = field(default_factory=dict)  # target id -> probe interval
    # group key -> when this rule's provider-region alert there last resolved (see `_notify`)
    groups_resolved_at: Mapping[str, datetime] = field(default_factory=dict)
    # Vantage points (vantage.py, vantage_alerts.py): each (target, agent) vantage alert's evaluations by
    # its scope key, the scopes of every (target, agent) evaluated, each target's quorum verdict, and the
    # network/provider split of one agent's series since a moment.
    vantage_evaluations: Mapping[str, Sequence[Evaluation]] = field(default_factory=dict)
    vantage_scopes: Mapping[str, Scope] = field(default_factory=dict)
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    attribute: Attribute | None = None


def step_rule(
    inp: RuleInput, muted: Callable[[Scope], bool], now: datetime, policy: GroupPolicy | None = None
) -> list[Change]:
    policy = policy or GroupPolicy()
    rule = inp.rule
    closed: list[AlertRecord] = []
    live: dict[str, AlertRecord] = {}
    for target_id, scope in inp.members.items():
        done, current = fold_target(rule, scope, inp.live.get(scope.key), inp.evaluations.get(target_id, ()))
        closed += done
        if current is not None:
            v = inp.verdicts.get(target_id)
            if v is not None:
                several = len(v.agents) + len(v.agents_clear) > 1  # one agent: no "seen from" to say
                current = decorate(current, v.agents, v.agents_clear, rule, inp.attribute, say_agents=several)
            live[scope.key] = current
    vantage = step_vantage(
        rule,
        inp.live,
        inp.vantage_evaluations,
        inp.vantage_scopes,
        inp.verdicts,
        fold_target,
        now,
        inp.attribute,
        members=inp.members,
    )
    closed += vantage.closed
    member_keys = {scope.key for scope in inp.members.values()}
    for key, record in inp.live.items():
        if record.scope.kind == TARGET and key not in member_keys:
            # Target gone from the config, or the rule no longer matches it: the alert cannot resolve itself.
            closed.append(_close(record, now, None, "no longer evaluated", rule))
    groups_closed, groups_live = step_groups(rule, inp.live, live, inp.members, now, policy)
    closed += groups_closed
    released = dict(inp.groups_resolved_at)
    released.update({g.scope.key: now for g in groups_closed})

    group_size: dict[str, int] = {}
    for scope in inp.members.values():
        group_size[scope.group_key] = group_size.get(scope.group_key, 0) + 1
    out: list[Change] = []
    for record in closed:  # before the live ones: a scope's new alert may follow its resolved one
        out.append(_closed_change(record, now))
    for record in [*groups_live.values(), *live.values(), *vantage.live.values()]:
        kind = record.scope.kind
        inhibited = (kind in (TARGET, VANTAGE) and record.scope.group_key in groups_live) or (
            record.scope.key in vantage.inhibited
        )
        hold_s = 0.0
        if (kind == TARGET and group_size.get(record.scope.group_key, 0) >= 2) or kind == VANTAGE:
            # A vantage alert always waits: the agent's other targets may fold it into one about the agent.
            interval_s = inp.intervals_s.get(record.scope.target_key, 0.0)
            hold_s = max(policy.group_wait_s, policy.group_wait_intervals * interval_s)
        updated, events = _notify(
            record,
            rule,
            inhibited=inhibited,
            silenced=muted(record.scope),
            hold_s=hold_s,
            released_at=released.get(record.scope.group_key) if kind == TARGET else None,
            now=now,
        )
        if events or updated != inp.live.get(record.scope.key):
            out.append(Change(updated, events))
    return out


def fold_target(
    rule: RuleView, scope: Scope, live: AlertRecord | None, evaluations: Sequence[Evaluation]
) -> tuple[list[AlertRecord], AlertRecord | None]:
    """Follow one target's detector through this round: (records that closed, the live record or None).

    Driven by the detector's state rather than its edge flags, so a record and
    a detector that disagree (a detector reset by a rule edit, say) converge.
    """
    closed: list[AlertRecord] = []
    for ev in evaluations:
        at = datetime.fromtimestamp(ev.timestamp, UTC)
        if ev.state == DETECTOR_OK:
            if live is not None:
                closed.append(_close(live, at, ev, "accepted as the new normal" if ev.new_normal else "", rule))
                live = None
            continue
        if live is None:
            live = AlertRecord(
                rule=rule.name, scope=scope, state=PENDING, severity=rule.severity, metric=rule.metric, started_at=at
            )
        if ev.state == DETECTOR_FIRING and live.state == PENDING:
            live = replace(live, state=FIRING, fired_at=at, clear_count=0)
        live = _observe(live, ev, at, rule)
    return closed, live


def _observe(record: AlertRecord, ev: Evaluation, at: datetime, rule: RuleView) -> AlertRecord:
    if not ev.evaluated:
        return record
    value = ev.value if ev.value is not None else record.value
    baseline = ev.baseline if ev.baseline is not None else record.baseline
    value_text = ev.value_text if ev.value_text is not None else record.value_text
    baseline_text = ev.baseline_text if ev.baseline_text is not None else record.baseline_text
    if record.state == PENDING:
        counts = {"pending_count": record.pending_count + (1 if ev.condition else 0)}
    else:
        counts = {"clear_count": 0 if ev.condition else record.clear_count + 1}
    summary = target_summary(
        record.rule, record.scope, record.metric, value, baseline, rule.reference, value_text, baseline_text
    )
    record = replace(
        record,
        value=value,
        baseline=baseline,
        value_text=value_text,
        baseline_text=baseline_text,
        last_evaluated_at=at,
        summary=summary,
        **counts,
    )
    return track_values(record, rule.higher_is_worse)


def _close(record: AlertRecord, at: datetime, ev: Evaluation | None, reason: str, rule: RuleView) -> AlertRecord:
    """A pending record that closes is dropped (state stays pending); a firing one resolves.
    Its last `value` is then the value it resolved at; the clearing value never counts as worst."""
    if record.state == PENDING:
        return record
    if ev is not None and ev.evaluated:
        record = replace(_observe(record, ev, at, rule), worst_value=record.worst_value)
    text = resolved_target_summary(
        record.rule, record.scope, record.metric, record.value, record.baseline,
        record.fired_value, record.worst_value, rule.reference,
    )  # fmt: skip
    return replace(record, state=RESOLVED, resolved_at=at, summary=resolved_summary(text, reason))


def _closed_change(record: AlertRecord, now: datetime) -> Change:
    if record.state == PENDING:
        return Change(record, delete=True)
    if record.last_notified_at is not None:  # the firing was sent: close what it opened
        return Change(replace(record, last_notified_at=now), (RESOLVED_EVENT,))
    return Change(record)


def _notify(
    record: AlertRecord,
    rule: RuleView,
    *,
    inhibited: bool,
    silenced: bool,
    hold_s: float,
    released_at: datetime | None,
    now: datetime,
) -> tuple[AlertRecord, tuple[str, ...]]:
    record = replace(record, silenced=silenced)
    if record.state != FIRING or inhibited or silenced:
        return record, ()
    if record.last_notified_at is None:
        held_from = record.fired_at or record.started_at
        if released_at is not None and released_at > held_from:
            # Its group just resolved: the stragglers of a provider incident clear a sample or two
            # later; only one still firing a full hold after that pages on its own.
            held_from = released_at
        if now >= held_from + timedelta(seconds=hold_s):
            return replace(record, last_notified_at=now), (FIRING_EVENT,)
        return record, ()
    if (now - record.last_notified_at).total_seconds() >= rule.repeat_interval_s:
        return replace(record, last_notified_at=now), (REPEAT_EVENT,)
    return record, ()
