"""The inhibit stage (DESIGN §15), pure: which live alerts another firing alert makes redundant.

Three sources of inhibition, one mark (`inhibited_by`): an inhibited alert is kept and shown,
delivered nowhere, and pages on its own if it still fires once its inhibitor is gone.
- a provider-region alert inhibits the target and vantage alerts of its rule in that group (§5);
- an agent-wide alert inhibits that agent's vantage alerts of its rule (§11);
- an `inhibit:` rule: a firing alert matching `source` inhibits every live alert matching `target`
  whose scope labels named in `equal` are the same (Alertmanager's shape; an alert never inhibits
  itself). A label a scope does not carry (a provider-wide SLO has no region) is null, and null
  equals only null, as in Alertmanager.

Unlike Alertmanager, an alert inhibited by another rule's stays inhibited until it resolves, even
after its inhibitor resolved: it is the tail of the incident that was paged (a latency SLO still
burns for its windows' length after a provider's errors stop), and paging it the moment that
incident ends is the noise inhibition exists to prevent. A target whose provider-region alert
resolved is different: it pages on its own after a hold if it still fires (holding.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from monitor.alerts.records import FIRING, UNSTORED, AlertRecord
from monitor.alerts.scope import AGENT, PROVIDER_REGION, TARGET, VANTAGE

AlertKey = tuple[str, str]  # (rule, scope key)
Labels = Callable[[AlertRecord], Mapping[str, Any]]


def inhibit(
    live: Mapping[AlertKey, AlertRecord],
    rules: Sequence[Any],
    labels: Labels,
    rule_of_id: Mapping[int, str] | None = None,
) -> dict[AlertKey, AlertRecord]:
    """Every live alert with `inhibited_by` (and `inhibitor`) set or cleared for this round.
    `rule_of_id`: alert id -> its rule, for the alerts live or closed this round."""
    rule_of_id = rule_of_id or {}
    by: dict[AlertKey, AlertKey] = {}
    for key, record in live.items():
        source = _structural(key, record, live)
        if source is not None:
            by[key] = source
    # Sources that are not inhibited themselves first (a provider-region alert before its targets).
    firing = sorted(((k, r) for k, r in live.items() if r.state == FIRING), key=lambda kr: (kr[0] in by, kr[0]))
    for rule in rules:
        sources: dict[tuple, AlertKey] = {}
        # Alerts only on the source side first: one on both sides (a latency page under `source:
        # {severity: page}`) is the source only where no other is, else it would be nobody's target.
        for key, record in sorted(firing, key=lambda kr: rule.target.matches(labels(kr[1]))):
            if rule.source.matches(labels(record)):
                sources.setdefault(_equal(record, rule.equal), key)
        if not sources:
            continue
        for key, record in live.items():
            if key in by or not rule.target.matches(labels(record)):
                continue
            source = sources.get(_equal(record, rule.equal))
            if source is not None and source != key:
                by[key] = source
    out: dict[AlertKey, AlertRecord] = {}
    for key, record in live.items():
        source = by.get(key)
        if source is None:
            if record.inhibited_by is not None and _sticky(record, rule_of_id):
                out[key] = record
            else:
                out[key] = (
                    replace(record, inhibited_by=None, inhibitor=None) if record.inhibited_by is not None else record
                )
            continue
        source_id = live[source].id
        out[key] = replace(record, inhibited_by=UNSTORED if source_id is None else source_id, inhibitor=source)
    return out


def _sticky(record: AlertRecord, rule_of_id: Mapping[int, str]) -> bool:
    """Still firing, and inhibited by another rule's alert (one gone from the round is another rule's:
    a structural inhibitor, of its own rule, releases its alerts the round it resolves)."""
    return record.state == FIRING and rule_of_id.get(record.inhibited_by or 0) != record.rule


def _structural(key: AlertKey, record: AlertRecord, live: Mapping[AlertKey, AlertRecord]) -> AlertKey | None:
    rule, scope = key[0], record.scope
    if scope.kind in (TARGET, VANTAGE):
        group = (rule, scope.group_key)
        if group in live and live[group].scope.kind == PROVIDER_REGION:
            return group
    if scope.kind == VANTAGE:
        agent = (rule, f"agent:{scope.agent}")
        if agent in live and live[agent].scope.kind == AGENT:
            return agent
    return None


def _equal(record: AlertRecord, names: Sequence[str]) -> tuple:
    labels = record.scope.labels()
    return tuple(labels.get(name) for name in names)
