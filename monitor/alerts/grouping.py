"""Grouping (DESIGN §5), pure: many targets of one provider-region firing together are one alert.

A provider-region alert opens when more than half of the rule's targets in
that provider and region fire at once, and at least `min_firing` of them
(one target of two is not "most"). It resolves when a majority has cleared
(fewer than half still fire): between the two it stays, so a group hovering
at half does not flap. While it is live, the per-target alerts of the group
are inhibited (the inhibit stage marks them): recorded, never notified.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from monitor.alerts.attribution import combine
from monitor.alerts.records import FIRING, RESOLVED, AlertRecord, Facts, RuleView, track_values
from monitor.alerts.render import render
from monitor.alerts.scope import PROVIDER_REGION, Scope


@dataclass(frozen=True, slots=True)
class GroupPolicy:
    min_firing: int = 2  # targets that must fire before a group alert can open
    # A target's first page waits this long after it fired, when its provider-region has
    # other targets, so targets whose shifts are detected a sample or two apart still group.
    group_wait_s: float = 60.0
    group_wait_intervals: float = 2.0  # ...and at least this many of the target's probe intervals


def step_groups(
    rule: RuleView,
    previous: Mapping[str, AlertRecord],
    targets_live: Mapping[str, AlertRecord],
    members: Mapping[str, Scope],
    now: datetime,
    policy: GroupPolicy,
) -> tuple[list[AlertRecord], dict[str, AlertRecord]]:
    """(group records that resolved, live group records by group key)."""
    by_group: dict[str, list[Scope]] = {}
    for scope in members.values():
        by_group.setdefault(scope.group_key, []).append(scope)
    keys = set(by_group) | {k for k, r in previous.items() if r.scope.kind == PROVIDER_REGION}
    closed: list[AlertRecord] = []
    live: dict[str, AlertRecord] = {}
    for key in sorted(keys):
        scopes = by_group.get(key, [])
        firing = [r for s in scopes if (r := targets_live.get(s.key)) is not None and r.state == FIRING]
        current = previous.get(key)
        if current is not None and current.scope.kind != PROVIDER_REGION:
            current = None
        if current is not None:
            if not firing or 2 * len(firing) < len(scopes):
                facts = Facts(reference=rule.reference, firing=len(firing), members=len(scopes))
                closed.append(replace(current, state=RESOLVED, resolved_at=now, last_evaluated_at=now, facts=facts))
            else:
                live[key] = _update(current, firing, len(scopes), now, rule)
        elif len(firing) >= policy.min_firing and 2 * len(firing) > len(scopes):
            scope = scopes[0].group()
            opened = AlertRecord(
                rule=rule.name,
                scope=scope,
                state=FIRING,
                severity=rule.severity,
                metric=rule.metric,
                started_at=min(r.started_at for r in firing),
                fired_at=now,
            )
            live[key] = _update(opened, firing, len(scopes), now, rule)
    return closed, live


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _mode(values: list[str | None]) -> str | None:
    present = [v for v in values if v is not None]
    return Counter(present).most_common(1)[0][0] if present else None


def _update(record: AlertRecord, firing: list[AlertRecord], members: int, now: datetime, rule: RuleView) -> AlertRecord:
    value = _median([r.value for r in firing])
    baseline = _median([r.baseline for r in firing])
    # A change rule's labels: the most common new and old label among the members.
    value_text = _mode([r.value_text for r in firing])
    baseline_text = _mode([r.baseline_text for r in firing])
    agents = tuple(sorted({a for r in firing for a in r.agents}))
    agents_clear = tuple(sorted({a for r in firing for a in r.agents_clear} - set(agents)))
    attribution = combine(r.attribution for r in firing) or record.attribution
    updated = replace(
        record,
        agents=agents,
        agents_clear=agents_clear,
        attribution=attribution,
        value=value,
        baseline=baseline,
        value_text=value_text,
        baseline_text=baseline_text,
        facts=Facts(reference=rule.reference, firing=len(firing), members=members),
    )
    # Only news moves `last_evaluated_at` (and so rewrites the row): what its summary would say changed.
    if render(updated) != record.summary or record.last_evaluated_at is None:
        updated = replace(updated, last_evaluated_at=now)
    return track_values(updated, rule.higher_is_worse)
