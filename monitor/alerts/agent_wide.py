"""The vantage stage (DESIGN §11, §15), pure: one agent's path degrading towards several providers at
once is one alert about the agent (`scope.agent` set, no provider), not one per target.

Its per-target vantage alerts stay recorded; the inhibit stage marks them inhibited by it, as a
provider-region alert inhibits its targets'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime

from monitor.alerts.attribution import combine
from monitor.alerts.quorum import agent_wide
from monitor.alerts.records import FIRING, RESOLVED, AlertRecord, Facts, RuleView
from monitor.alerts.scope import AGENT, VANTAGE, Scope


def step_agents(
    rule: RuleView, previous: Mapping[str, AlertRecord], folded: Mapping[str, AlertRecord], now: datetime
) -> tuple[dict[str, AlertRecord], list[AlertRecord]]:
    """(live agent-wide records by scope key, those that resolved). `previous`: the rule's live records as
    read; `folded`: its live target and vantage records after the fold stage."""
    firing: dict[str, list[AlertRecord]] = {}
    for record in folded.values():
        if record.scope.kind == VANTAGE and record.state == FIRING:
            firing.setdefault(record.scope.agent, []).append(record)
    wide = agent_wide({a: [r.scope.provider for r in rs] for a, rs in firing.items()})
    current = {r.scope.agent: r for r in previous.values() if r.scope.kind == AGENT}
    out: dict[str, AlertRecord] = {}
    closed: list[AlertRecord] = []
    for agent in sorted(set(current) | wide):
        records = firing.get(agent, [])
        record = current.get(agent)
        if record is not None and not records:
            closed.append(replace(record, state=RESOLVED, resolved_at=now, last_evaluated_at=now, facts=Facts()))
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
        facts = Facts(
            providers=tuple(sorted({r.scope.provider for r in records if r.scope.provider})),
            targets=len(records),
            others_clear=any(r.agents_clear for r in records),
        )
        attribution = combine(r.attribution for r in records) or record.attribution
        updated = replace(record, agents=(agent,), attribution=attribution, facts=facts)
        if updated != record or record.last_evaluated_at is None:
            updated = replace(updated, last_evaluated_at=now)
        out[updated.scope.key] = updated
    return out, closed
