"""Vantage alerts (DESIGN §11), pure: below the quorum, an alert about what one agent sees.

`step_vantage` follows each (target, agent) vantage alert through its
evaluations (vantage.TargetFold made them: the agent's own detector while
the target is below the quorum), closes those of agents that stopped probing,
and folds an agent whose path degrades towards several providers at once
into one alert about the agent (`scope.agent` set, no provider): its
per-target vantage alerts are then inhibited, as a provider-region alert
inhibits its targets'.

`decorate` adds what every live alert carries: `agents`, `agents_clear`, the
"is it them or us" attribution, and both in words at the end of the summary.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from monitor import fmt
from monitor.alerts.attribution import LATENCY_RULE_METRICS, attribution_text, combine
from monitor.alerts.detectors.base import Evaluation
from monitor.alerts.own_path import own_path_text
from monitor.alerts.quorum import OK, Verdict, agent_wide, seen_from_text
from monitor.alerts.records import FIRING, PENDING, RESOLVED, AlertRecord, RuleView
from monitor.alerts.scope import AGENT, VANTAGE, Scope
from monitor.alerts.summary import resolved_summary

TAIL = " — "  # what follows it in a summary is this module's; rebuilt each round
Attribute = Callable[[str, str, float], dict[str, Any] | None]  # (target id, agent, since epoch s) -> split


@dataclass(frozen=True, slots=True)
class VantageResult:
    closed: list[AlertRecord]
    live: dict[str, AlertRecord]  # scope key -> live vantage or agent-wide record
    inhibited: frozenset[str]  # vantage scope keys whose agent has an agent-wide alert


def vantage_view(rule: RuleView) -> RuleView:
    return replace(rule, severity=rule.vantage_severity)


def step_vantage(
    rule: RuleView,
    live: Mapping[str, AlertRecord],
    evaluations: Mapping[str, Sequence[Evaluation]],
    scopes: Mapping[str, Scope],
    verdicts: Mapping[str, Verdict],
    fold: Callable,
    now: datetime,
    attribute: Attribute | None = None,
    members: Collection[str] = (),
) -> VantageResult:
    """`scopes`: vantage key -> scope of every (target, agent) the rule evaluates from a probing agent.
    `fold` is lifecycle.fold_target (passed in: this module sits below the lifecycle); `members` the
    target ids the rule applies to."""
    view = vantage_view(rule)
    closed: list[AlertRecord] = []
    out: dict[str, AlertRecord] = {}
    for key, scope in scopes.items():
        done, current = fold(view, scope, live.get(key), evaluations.get(key, ()))
        v = verdicts.get(scope.target_key)
        if v is not None and v.state != OK:
            # The quorum confirmed it before anybody was told: it is the target alert's now (this agent is in
            # its `agents`); one never notified leaves no row, as a pending alert that clears leaves none.
            done = [replace(r, state=PENDING) if r.last_notified_at is None else r for r in done]
        closed += done
        if current is not None:
            clear, own_path = (v.agents_clear, v.own_path) if v else ((), ())
            out[key] = decorate(current, (scope.agent,), clear, rule, attribute, own_path=own_path)
    for key, record in live.items():
        if record.scope.kind != VANTAGE or key in scopes:
            continue
        if record.scope.target_key not in members:  # the target left the config, or the rule did
            closed.append(_resolve(record, now, "no longer evaluated"))
        elif record.scope.target_key in verdicts:  # judged this round; one whose samples paused keeps its alerts
            closed.append(_resolve(record, now, f"no longer probed from {record.scope.agent}"))
    agent_live, agent_closed = _agent_wide(rule, live, out, now)
    closed += agent_closed
    inhibited = frozenset(k for k, r in out.items() if r.scope.agent in agent_live)
    out.update({f"agent:{a}": r for a, r in agent_live.items()})
    return VantageResult(closed, out, inhibited)


def _agent_wide(
    rule: RuleView, live: Mapping[str, AlertRecord], vantage: Mapping[str, AlertRecord], now: datetime
) -> tuple[dict[str, AlertRecord], list[AlertRecord]]:
    firing: dict[str, list[AlertRecord]] = {}
    for record in vantage.values():
        if record.state == FIRING:
            firing.setdefault(record.scope.agent, []).append(record)
    wide = agent_wide({a: [r.scope.provider for r in rs] for a, rs in firing.items()})
    current = {r.scope.agent: r for r in live.values() if r.scope.kind == AGENT}
    out: dict[str, AlertRecord] = {}
    closed: list[AlertRecord] = []
    for agent in sorted(set(current) | wide):
        records = firing.get(agent, [])
        record = current.get(agent)
        if record is not None and not records:
            closed.append(_resolve(record, now, f"the path from {agent} is normal again"))
            continue
        if record is None:
            record = AlertRecord(
                rule=rule.name,
                scope=Scope.of_agent(agent),
                state=FIRING,
                severity=rule.vantage_severity,
                metric=rule.metric,
                started_at=min(r.started_at for r in records),
                fired_at=now,
            )
        providers = sorted({r.scope.provider for r in records if r.scope.provider})
        # A lone agent's own path (own_path.py) has nobody to compare with: say so rather than "others see it normal".
        others = (
            "other vantage points see them normal"
            if any(r.agents_clear for r in records)
            else f"no other vantage point probes them: {agent}'s own path moved, not the providers"
        )
        summary = (
            f"{rule.name}: the path from {agent} degraded towards {fmt.counted(len(providers), 'provider')} at once "
            f"({', '.join(providers)}; {fmt.counted(len(records), 'target')}); {others}"
        )
        attribution = combine(r.attribution for r in records) or record.attribution
        updated = replace(
            record, agents=(agent,), attribution=attribution, summary=_with_tail(summary, attribution_text(attribution))
        )
        if updated != record or record.last_evaluated_at is None:
            updated = replace(updated, last_evaluated_at=now)
        out[agent] = updated
    return out, closed


def decorate(
    record: AlertRecord,
    agents: Sequence[str],
    agents_clear: Sequence[str],
    rule: RuleView,
    attribute: Attribute | None,
    *,
    say_agents: bool = True,
    own_path: tuple[str, ...] = (),
) -> AlertRecord:
    """`agents`, `agents_clear`, the attribution, and the summary tail that says them (and, for a lone
    agent's alarm held as its own path, the providers its path rose towards)."""
    attribution = record.attribution
    if attribute is not None and rule.metric in LATENCY_RULE_METRICS and record.scope.model is not None:
        since = record.started_at.timestamp()
        fresh = combine(attribute(record.scope.target_key, a, since) for a in agents)
        attribution = fresh or attribution
    words = [seen_from_text(agents, agents_clear)] if say_agents and agents else []
    if attribution_text(attribution):
        words.append(attribution_text(attribution))
    if own_path and agents:
        words.append(own_path_text(agents[0], own_path))
    summary = _with_tail(record.summary or "", "; ".join(words))
    return replace(
        record, agents=tuple(agents), agents_clear=tuple(agents_clear), attribution=attribution, summary=summary
    )


def _with_tail(summary: str, tail: str) -> str:
    base = summary.split(TAIL, 1)[0]
    return f"{base}{TAIL}{tail}" if tail else base


def _resolve(record: AlertRecord, now: datetime, reason: str) -> AlertRecord:
    if record.state != FIRING:
        return record  # pending: dropped by the lifecycle
    return replace(record, state=RESOLVED, resolved_at=now, last_evaluated_at=now, summary=resolved_summary(
        _with_tail(record.summary or "", ""), reason))  # fmt: skip
