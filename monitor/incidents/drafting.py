"""Drafting incidents from one alert round (DESIGN §16), pure: a consumer of the pipeline's verdicts.

The alert pipeline (monitor/alerts, DESIGN §15) has already decided what is confirmed, grouped,
inhibited, muted and held; this module only reads the round's changes and never judges a sample:

- opens: a firing `page` alert on a target, a provider-region or an SLO scope with a provider, that
  is neither inhibited nor muted and whose page went out (the hold stage stamped `last_notified_at`),
  opens the provider's incident, or joins it when one is open. Vantage and agent alerts (one vantage
  point's view, DESIGN §11) never do; an alert (rule, scope, firing) joins one incident only, ever;
- updates: `detected` (what, where, when, from how many vantage points), `confirmed` when more vantage
  points see it than any update said so far, `identified` when the provider's own incident (its
  status page, monitor.official) matches, `resolved` once every alert of the incident resolved.

`draft` returns what to write; monitor/incidents/store.py reads its inputs and writes it in the alert
engine's write transaction. Publishing (`status_site.publish`) is the store's business, not this one's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from monitor.official.match import matching_incident
from monitor.storage.queries.official import OfficialIncident

# The alert pipeline's values (monitor.alerts.records and .scope), spelled here: the alert engine
# imports this package, so this package imports nothing of it.
FIRING, RESOLVED, PAGE = "firing", "resolved", "page"
TARGET, PROVIDER_REGION = "target", "provider_region"
SLO_PREFIX = "slo_"
# Incident states (Statuspage's): identified once the provider's own incident is linked; monitoring by hand.
INVESTIGATING, IDENTIFIED, MONITORING = "investigating", "identified", "monitoring"
STATES = (INVESTIGATING, IDENTIFIED, MONITORING, RESOLVED)
DETECTED, CONFIRMED, LINKED, UPDATE = "detected", "confirmed", "identified", "update"

# What the metric of the first alert says in public, in words.
METRIC_WORDS = {
    "error_rate": "elevated error rates",
    "ttft_ms": "slow responses (time to first token)",
    "ttft_answer_ms": "slow responses (time to first answer token)",
    "total_ms": "slow responses",
    "tps": "slow generation",
    "burn_rate": "degraded service (more failed or slow requests than its objective allows)",  # an SLO's
}
DEFAULT_WORDS = "degraded performance"
MAX_NAMED = 3  # components named in a title before "and N more"


@dataclass(frozen=True, slots=True)
class AlertMark:
    """An alert as one incident knows it: (rule, scope_key, fired_at) is its identity."""

    rule: str
    scope_key: str
    fired_at: datetime
    state: str  # firing | resolved
    agents: int = 0

    @property
    def key(self) -> tuple[str, str, datetime]:
        return (self.rule, self.scope_key, self.fired_at)


@dataclass(frozen=True, slots=True)
class OpenIncident:
    """An incident not resolved yet (id None: opened by this round)."""

    provider: str
    title: str
    state: str
    started_at: datetime
    components: tuple[str, ...] = ()
    vantage_points: int = 0
    official_id: str | None = None
    alerts: tuple[AlertMark, ...] = ()
    id: int | None = None


@dataclass(frozen=True, slots=True)
class UpdateDraft:
    kind: str  # detected | confirmed | identified | resolved
    state: str  # the incident's state after it
    message: str
    at: datetime


@dataclass(frozen=True, slots=True)
class IncidentPlan:
    """One incident after this round: its new values, the alerts that joined or changed, its new updates."""

    incident: OpenIncident
    marks: tuple[AlertMark, ...] = ()
    updates: tuple[UpdateDraft, ...] = ()

    @property
    def resolved(self) -> bool:
        return self.incident.state == RESOLVED


@dataclass(slots=True)
class _Working:
    incident: OpenIncident
    marks: dict[tuple[str, str, datetime], AlertMark] = field(default_factory=dict)
    changed: set[tuple[str, str, datetime]] = field(default_factory=set)
    words: str = DEFAULT_WORDS
    new: bool = False


def component_of(scope: Any) -> str | None:
    """`provider/model` for a scope with a model, `provider/*` for a whole provider; None without one."""
    provider = getattr(scope, "provider", None)
    if provider is None:
        return None
    model = getattr(scope, "model", None)
    return f"{provider}/{model}" if model else f"{provider}/*"


def opens(record: Any, shown: Any = None) -> bool:
    """Whether a (changed) alert makes or joins an incident: a confirmed page that went out, about a
    target, a provider in a region or an SLO scope with a provider, shown on the status site."""
    kind = record.scope.kind
    if kind not in (TARGET, PROVIDER_REGION) and not kind.startswith(SLO_PREFIX):
        return False  # vantage and agent alerts: one vantage point's view is not the provider's incident
    return (
        record.state == FIRING
        and record.severity == PAGE
        and record.inhibited_by is None
        and record.muted is None
        and record.last_notified_at is not None
        and record.fired_at is not None
        and record.scope.provider is not None
        and (shown is None or shown(record.scope.provider, record.scope.model))
    )


def draft(
    changes: Iterable[Any],
    open_incidents: Sequence[OpenIncident],
    *,
    now: datetime,
    known: frozenset[tuple[str, str, datetime]] | set = frozenset(),
    official: Mapping[str, Sequence[OfficialIncident]] | None = None,
    shown: Any = None,
    gone: frozenset[tuple[str, str, datetime]] | set = frozenset(),
) -> list[IncidentPlan]:
    """The incidents this round opens, updates or resolves.

    `changes`: the round's alert changes (monitor.alerts.records.Change, as written); `open_incidents`:
    every incident not resolved, with its alerts; `known`: the identities among the changes' alerts that
    already belong to an incident (open or not: one resolved by hand keeps its alerts); `official`: per
    provider, its own incidents near ours; `shown(provider, model|None)`: whether the status site shows
    it (None: everything); `gone`: alerts of open incidents that no longer fire although no change said
    so (a round whose drafting failed), resolved here all the same."""
    working = {i.provider: _Working(i, {m.key: m for m in i.alerts}) for i in open_incidents}
    for w in working.values():
        for key, mark in list(w.marks.items()):
            if key in gone and mark.state == FIRING:
                w.marks[key] = replace(mark, state=RESOLVED)
                w.changed.add(key)
    for change in changes:
        if getattr(change, "delete", False):
            continue
        record = change.record
        if record.fired_at is None:
            continue  # never fired: no incident knows it
        key = (record.rule, record.scope.key, record.fired_at)
        mine = next((w for w in working.values() if key in w.marks), None)
        if mine is not None:
            _follow(mine, key, record)
        elif key not in known and opens(record, shown):
            _join(working, key, record)
    plans = []
    for w in working.values():
        plan = _plan(w, now, (official or {}).get(w.incident.provider, ()))
        if plan is not None:
            plans.append(plan)
    return plans


def _follow(w: _Working, key, record) -> None:
    """An alert of the incident changed: resolved, or seen from another number of vantage points."""
    mark = w.marks[key]
    state = RESOLVED if record.state == RESOLVED else FIRING
    agents = len(record.agents) if state == FIRING else mark.agents
    if (state, agents) != (mark.state, mark.agents):
        w.marks[key] = replace(mark, state=state, agents=agents)
        w.changed.add(key)


def _join(working: dict[str, _Working], key, record) -> None:
    provider = record.scope.provider
    w = working.get(provider)
    if w is None:
        incident = OpenIncident(provider, "", INVESTIGATING, record.fired_at)
        w = working[provider] = _Working(incident, new=True, words=_words(record))
    w.marks[key] = AlertMark(record.rule, record.scope.key, record.fired_at, FIRING, len(record.agents))
    w.changed.add(key)
    component = component_of(record.scope)
    if component and component not in w.incident.components:
        w.incident = replace(w.incident, components=tuple(sorted((*w.incident.components, component))))
    if record.fired_at < w.incident.started_at:
        w.incident = replace(w.incident, started_at=record.fired_at)


def _plan(w: _Working, now: datetime, official: Sequence[OfficialIncident]) -> IncidentPlan | None:
    incident, updates = w.incident, []
    seen_from = max((m.agents for m in w.marks.values() if m.state == FIRING), default=0)
    if w.new:
        incident = replace(incident, title=title(incident.provider, incident.components, w.words))
        incident = replace(incident, vantage_points=seen_from)
        updates.append(
            UpdateDraft(DETECTED, INVESTIGATING, detected_text(incident, w.words, seen_from), incident.started_at)
        )
    elif seen_from > incident.vantage_points and seen_from >= 2:
        incident = replace(incident, vantage_points=seen_from)
        updates.append(UpdateDraft(CONFIRMED, incident.state, confirmed_text(incident, seen_from), now))
    if incident.official_id is None:
        theirs = matching_incident(incident.provider, incident.started_at, official)
        if theirs is not None:
            state = IDENTIFIED if incident.state == INVESTIGATING else incident.state
            incident = replace(incident, official_id=theirs.source_id, state=state)
            updates.append(UpdateDraft(LINKED, state, identified_text(incident, theirs), now))
    # Resolved when this round resolved its last alert (an incident reopened by hand stays open).
    if w.changed and all(m.state == RESOLVED for m in w.marks.values()):
        incident = replace(incident, state=RESOLVED)
        updates.append(UpdateDraft(RESOLVED, RESOLVED, resolved_text(incident, now), now))
    marks = tuple(w.marks[k] for k in sorted(w.changed, key=lambda k: (k[2], k[0], k[1])))
    if not updates and not marks and incident == w.incident:
        return None
    return IncidentPlan(replace(incident, alerts=tuple(w.marks.values())), marks, tuple(updates))


# ---------------------------------------------------------------------- words (public: no agent names)
def _words(record: Any) -> str:
    """The first alert's metric in words (an SLO alert's is its SLO's metric)."""
    return METRIC_WORDS.get(record.metric, DEFAULT_WORDS)


def components_text(components: Sequence[str]) -> str:
    names = [c.removesuffix("/*") + (" (all models)" if c.endswith("/*") else "") for c in components]
    if len(names) > MAX_NAMED:
        return ", ".join(names[:MAX_NAMED]) + f" and {len(names) - MAX_NAMED} more"
    return ", ".join(names) or "?"


def title(provider: str, components: Sequence[str], words: str) -> str:
    models = [c.split("/", 1)[1] for c in components if not c.endswith("/*")]
    if not models or len(models) != len(components):
        where = provider
    elif len(models) <= 2:
        where = f"{provider} {' and '.join(models)}"
    else:
        where = f"{provider} ({len(models)} models)"
    return f"{where}: {words}"


def _hhmm(at: datetime) -> str:
    return at.strftime("%H:%M UTC")


def vantage_text(n: int) -> str:
    return f"{n} vantage point{'s' if n != 1 else ''}"


def detected_text(incident: OpenIncident, words: str, seen_from: int) -> str:
    seen = f", confirmed from {vantage_text(seen_from)}" if seen_from >= 2 else ""
    return (
        f"We are investigating {words} on {components_text(incident.components)}, "
        f"detected at {_hhmm(incident.started_at)}{seen}."
    )


def confirmed_text(incident: OpenIncident, seen_from: int) -> str:
    return f"Confirmed from {vantage_text(seen_from)}: {components_text(incident.components)}."


def identified_text(incident: OpenIncident, theirs: OfficialIncident) -> str:
    link = f" ({theirs.shortlink})" if theirs.shortlink else ""
    minutes = (theirs.started_at - incident.started_at).total_seconds() / 60
    when = (
        f"{abs(minutes):.0f} min after we detected it"
        if minutes >= 0
        else f"{abs(minutes):.0f} min before we detected it"
    )
    return f"{incident.provider} reports it on its own status page: “{theirs.name}”{link}, opened {when}."


def resolved_text(incident: OpenIncident, now: datetime) -> str:
    minutes = max(0.0, (now - incident.started_at).total_seconds() / 60)
    lasted = f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
    return f"Resolved: {components_text(incident.components)} back to normal (affected for {lasted})."
