"""The fold stage (DESIGN §15), pure: one rule's evaluations this round → its target and vantage alerts.

A target's alert follows the quorum's evaluations (vantage.TargetFold made them): `pending` →
`firing` → `resolved`, driven by the detector's state rather than its edge flags, so a record and
a detector that disagree (a detector reset by a rule edit) converge. A pending alert whose condition
goes away closes unsent and leaves no row. Each probing agent's own evaluations below the quorum
make its vantage alert (`scope.agent` set, the rule's `vantage_severity`).

Alerts of targets the rule no longer applies to, and vantage alerts of agents that stopped probing,
resolve here too: nothing else could resolve them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from monitor.alerts.attribution import LATENCY_RULE_METRICS, combine
from monitor.alerts.detectors.base import FIRING as DETECTOR_FIRING
from monitor.alerts.detectors.base import OK as DETECTOR_OK
from monitor.alerts.detectors.base import Evaluation
from monitor.alerts.quorum import OK, Verdict
from monitor.alerts.records import FIRING, PENDING, RESOLVED, AlertRecord, Facts, RuleView, track_values
from monitor.alerts.scope import TARGET, VANTAGE, Scope
from monitor.alerts.series import Attribute, RuleRound


@dataclass(frozen=True, slots=True)
class Folded:
    live: dict[str, AlertRecord]  # scope key -> live target or vantage record
    closed: list[AlertRecord]  # resolved, or pending that closed (dropped by the hold stage)


def fold_rule(
    rule: RuleView, members: Mapping[str, Scope], rr: RuleRound, live: Mapping[str, AlertRecord], now: datetime
) -> Folded:
    """`live`: this rule's live records by scope key, as the round read them."""
    closed: list[AlertRecord] = []
    out: dict[str, AlertRecord] = {}
    for target_id, scope in members.items():  # a target's scope key is its id
        record, evaluations = live.get(target_id), rr.evaluations.get(target_id, ())
        if record is None and not evaluations:
            continue  # most targets of a healthy fleet: nothing live, nothing new
        done, current = fold_series(rule, scope, record, evaluations)
        closed += done
        if current is not None:
            v = rr.verdicts.get(target_id)
            if v is not None:
                several = len(v.agents) + len(v.agents_clear) > 1  # one agent: no "seen from" to say
                current = seen(current, v.agents, v.agents_clear, rule, rr.attribute, say_agents=several)
            out[scope.key] = current
    vantage = replace(rule, severity=rule.vantage_severity)
    for key, scope in rr.scopes.items():
        done, current = fold_series(vantage, scope, live.get(key), rr.evaluations_v.get(key, ()))
        v = rr.verdicts.get(scope.target_key)
        if v is not None and v.state != OK:
            # The quorum confirmed it before anybody was told: it is the target alert's now (this agent is in
            # its `agents`); one never notified leaves no row, as a pending alert that clears leaves none.
            done = [replace(r, state=PENDING) if r.last_notified_at is None else r for r in done]
        closed += done
        if current is not None:
            clear, own_path = (v.agents_clear, v.own_path) if v else ((), ())
            out[key] = seen(current, (scope.agent,), clear, rule, rr.attribute, own_path=own_path)
    for key, record in live.items():
        kind = record.scope.kind
        if kind == TARGET and key not in members:
            # Target gone from the config, or the rule no longer matches it: the alert cannot resolve itself.
            closed.append(close(record, now, None, "no longer evaluated", rule))
        elif kind == VANTAGE and key not in rr.scopes:
            if record.scope.target_key not in members:
                closed.append(close(record, now, None, "no longer evaluated", rule))
            elif record.scope.target_key in rr.verdicts:  # judged this round; one whose samples paused keeps it
                closed.append(close(record, now, None, f"no longer probed from {record.scope.agent}", rule))
    return Folded(out, closed)


def fold_series(
    rule: RuleView, scope: Scope, live: AlertRecord | None, evaluations: Sequence[Evaluation]
) -> tuple[list[AlertRecord], AlertRecord | None]:
    """Follow one series' evaluations through this round: (records that closed, the live record or None)."""
    closed: list[AlertRecord] = []
    for ev in evaluations:
        at = datetime.fromtimestamp(ev.timestamp, UTC)
        if ev.state == DETECTOR_OK:
            if live is not None:
                closed.append(close(live, at, ev, "accepted as the new normal" if ev.new_normal else "", rule))
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
    if record.state == PENDING:
        counts = {"pending_count": record.pending_count + (1 if ev.condition else 0)}
    else:
        counts = {"clear_count": 0 if ev.condition else record.clear_count + 1}
    record = replace(
        record,
        value=ev.value if ev.value is not None else record.value,
        baseline=ev.baseline if ev.baseline is not None else record.baseline,
        value_text=ev.value_text if ev.value_text is not None else record.value_text,
        baseline_text=ev.baseline_text if ev.baseline_text is not None else record.baseline_text,
        last_evaluated_at=at,
        facts=Facts(reference=rule.reference),
        **counts,
    )
    return track_values(record, rule.higher_is_worse)


def close(record: AlertRecord, at: datetime, ev: Evaluation | None, reason: str, rule: RuleView) -> AlertRecord:
    """A pending record that closes is dropped (state stays pending); a firing one resolves.
    Its last `value` is then the value it resolved at; the clearing value never counts as worst."""
    if record.state == PENDING:
        return record
    if ev is not None and ev.evaluated:
        record = replace(_observe(record, ev, at, rule), worst_value=record.worst_value)
    return replace(record, state=RESOLVED, resolved_at=at, facts=Facts(reference=rule.reference, reason=reason))


def seen(
    record: AlertRecord,
    agents: Sequence[str],
    agents_clear: Sequence[str],
    rule: RuleView,
    attribute: Attribute | None,
    *,
    say_agents: bool = True,
    own_path: tuple[str, ...] = (),
) -> AlertRecord:
    """Where it holds and where not, and for a latency rule the network/provider split since it began."""
    attribution: dict[str, Any] | None = record.attribution
    if attribute is not None and rule.metric in LATENCY_RULE_METRICS and record.scope.model is not None:
        fresh = combine(attribute(record.scope.target_key, a, record.started_at.timestamp()) for a in agents)
        attribution = fresh or attribution
    facts = replace(record.facts or Facts(reference=rule.reference), say_agents=say_agents, own_path=own_path)
    return replace(record, agents=tuple(agents), agents_clear=tuple(agents_clear), attribution=attribution, facts=facts)


__all__ = ["Folded", "Verdict", "close", "fold_rule", "fold_series", "seen"]
