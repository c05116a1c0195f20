"""The public status, built from values: a Statuspage v2 summary and a badge (the Atom feed of our
incidents is monitor.incidents.feed).

Pure: callers hand in per-target recent figures by the quorum of vantage points (minutes probed and
down, `monitor.availability`; the median TTFT the quorum saw), the alerts the quorum confirmed, and
what is under maintenance; these functions return a dict or text. What goes out is public by
design, so only what a status page would show: provider and model names, statuses, p50 TTFT,
incident titles and times, maintenance windows. Never a URL of ours besides the page's own public
one, a region's base URL, a prompt, a key, an agent's name, or the dashboard's address.

Component status, worst of:
- availability over the window (down minutes by the quorum over minutes probed): < 50 %
  major_outage, < 95 % partial_outage;
- a firing alert on it: error_rate -> partial_outage, anything else (latency, decode speed, a
  route change) -> degraded_performance. Only alerts the quorum confirmed reach here: a vantage or
  agent alert (DESIGN §11) is one agent's view, never public;
- under_maintenance while a maintenance window covers it, unless it is worse than that.
A provider is the worst of its models; a provider-wide alert counts for each.
The page indicator follows the worst component: none, minor, major, critical (maintenance when the
worst is a maintenance).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from xml.sax.saxutils import escape

OPERATIONAL, DEGRADED, PARTIAL, MAJOR = "operational", "degraded_performance", "partial_outage", "major_outage"
MAINTENANCE = "under_maintenance"
ORDER = (OPERATIONAL, MAINTENANCE, DEGRADED, PARTIAL, MAJOR)  # worst last: an outage shows through maintenance
INDICATOR = {OPERATIONAL: "none", MAINTENANCE: "maintenance", DEGRADED: "minor", PARTIAL: "major", MAJOR: "critical"}
DESCRIPTION = {
    "none": "All Systems Operational",
    "maintenance": "Service Under Maintenance",
    "minor": "Minor Service Outage",
    "major": "Partial System Outage",
    "critical": "Major Service Outage",
}
IMPACT = {DEGRADED: "minor", PARTIAL: "major", MAJOR: "critical"}
LABEL = {
    OPERATIONAL: "operational",
    MAINTENANCE: "under maintenance",
    DEGRADED: "degraded",
    PARTIAL: "partial outage",
    MAJOR: "major outage",
}
COLOR = {OPERATIONAL: "#2e9e44", MAINTENANCE: "#0969da", DEGRADED: "#d9a400", PARTIAL: "#e07000", MAJOR: "#d0312d"}
MAJOR_BELOW, PARTIAL_BELOW = 0.5, 0.95


@dataclass(frozen=True, slots=True)
class TargetStats:
    provider: str
    model: str
    probed: float  # minutes of the window some agent probed it in (cancelled probes left out)
    down: float  # of those, down by the quorum of vantage points (monitor.availability)
    ttft_p50_ms: float | None  # the median TTFT the quorum saw


@dataclass(frozen=True, slots=True)
class Incident:
    """One of our alerts, as much of it as may be public."""

    id: int
    rule: str
    metric: str
    provider: str | None
    model: str | None
    state: str  # firing | resolved
    title: str
    began_at: datetime
    resolved_at: datetime | None
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Maintenance:
    """Planned work as the public sees it: a window (now or ahead) and the components it covers."""

    key: str  # stable across renders: the window's name and start
    title: str  # the window's note, else its name
    starts_at: datetime
    ends_at: datetime
    components: tuple[tuple[str, str], ...]  # (provider, model), sorted

    def active(self, now: datetime) -> bool:
        return self.starts_at <= now < self.ends_at

    @property
    def providers(self) -> tuple[str, ...]:
        return tuple(sorted({p for p, _ in self.components}))


def worst(statuses: Iterable[str]) -> str:
    return max(statuses, key=ORDER.index, default=OPERATIONAL)


# What an incident is about, in a customer's words (an alert's own summary names rules, prompts,
# regions and vantage points: operators' words, kept off the public status).
_IMPACT_WORDS = {
    "error_rate": "Elevated error rate",
    "ttft_ms": "Slow first token",
    "ttft_answer_ms": "Slow first answer token",
    "total_ms": "Slow responses",
    "tps": "Slow token generation",
}


def public_title(metric: str, provider: str | None, model: str | None) -> str:
    """`Elevated error rate on openai/gpt-4o`: what a public incident is called, from values only."""
    words = _IMPACT_WORDS.get(metric, f"Degraded {metric.replace('_', ' ')}")
    if provider and model:
        where = f"{provider}/{model}"
    elif provider:
        where = provider
    else:
        where = f"{model} (every provider)" if model else "every provider"
    return f"{words} on {where}"


def alert_status(metric: str) -> str:
    return PARTIAL if metric == "error_rate" else DEGRADED


def availability_status(probed: float, down: float) -> str:
    if probed <= 0:
        return OPERATIONAL  # no probes yet: nothing known against it
    share = 1 - down / probed
    if share < MAJOR_BELOW:
        return MAJOR
    if share < PARTIAL_BELOW:
        return PARTIAL
    return OPERATIONAL


def _covers(incident: Incident, provider: str, model: str | None) -> bool:
    if incident.provider not in (None, provider):
        return False
    return model is None or incident.model in (None, model)


def _id(*parts: str) -> str:
    """A stable component id (Statuspage ids are opaque strings): no config detail shows through."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Status:
    """Each provider's and each provider/model's status, and its p50 TTFT over the window."""

    providers: dict[str, str]
    models: dict[tuple[str, str], str]
    provider_p50_ms: dict[str, float | None]
    model_p50_ms: dict[tuple[str, str], float | None] = field(default_factory=dict)

    @property
    def indicator(self) -> str:
        return INDICATOR[worst(self.providers.values())]


def compute(
    stats: Sequence[TargetStats], live: Sequence[Incident], maintenance: Collection[tuple[str, str]] = ()
) -> Status:
    """`live`: the quorum's alerts (only those: see the module docstring); `maintenance`: the
    (provider, model) components a maintenance window covers now."""
    firing = [i for i in live if i.state == "firing"]
    per_model: dict[tuple[str, str], list[TargetStats]] = {}
    for s in stats:
        per_model.setdefault((s.provider, s.model), []).append(s)
    models = {}
    for (provider, model), rows in per_model.items():
        from_probes = availability_status(sum(r.probed for r in rows), sum(r.down for r in rows))
        from_alerts = [alert_status(i.metric) for i in firing if _covers(i, provider, model)]
        planned = [MAINTENANCE] if (provider, model) in maintenance else []
        models[(provider, model)] = worst([from_probes, *from_alerts, *planned])
    providers = {}
    p50: dict[str, float | None] = {}
    for provider in sorted({p for p, _ in per_model}):
        mine = [status for (p, _), status in models.items() if p == provider]
        providers[provider] = worst(
            [*mine, *(alert_status(i.metric) for i in firing if i.provider == provider and i.model is None)]
        )
        p50[provider] = median_of(s.ttft_p50_ms for s in stats if s.provider == provider)
    model_p50 = {key: median_of(r.ttft_p50_ms for r in rows) for key, rows in per_model.items()}
    return Status(providers, models, p50, model_p50)


def median_of(values: Iterable[float | None]) -> float | None:
    """A group's TTFT: the median of its members' medians (the upper middle), None without any."""
    known = sorted(v for v in values if v is not None and not math.isnan(v))
    return known[len(known) // 2] if known else None


def summary(
    status: Status,
    *,
    now: datetime,
    page_name: str,
    page_url: str | None,
    maintenances: Sequence[Maintenance] = (),
    published: Sequence[Any] = (),
) -> dict[str, Any]:
    """The Statuspage v2 `summary.json` shape; `maintenances`: the windows now and ahead; `published`:
    our published incidents (monitor.incidents.views.IncidentView), whose unresolved ones are the
    summary's incidents (a firing alert is no incident until one is drafted from it and published)."""
    page_id = _id("page", page_name)
    updated = _iso(now)
    components: list[dict[str, Any]] = []
    position = 1
    for provider, provider_status in status.providers.items():
        children = sorted(m for p, m in status.models if p == provider)
        group_id = _id("provider", provider)
        child_ids = [_id("model", provider, m) for m in children]
        components.append(
            _component(group_id, provider, provider_status, page_id, updated, position, group=True, children=child_ids)
        )
        position += 1
        for model, cid in zip(children, child_ids, strict=True):
            components.append(
                _component(
                    cid,
                    f"{provider}/{model}",
                    status.models[(provider, model)],
                    page_id,
                    updated,
                    position,
                    group_id=group_id,
                )
            )
            position += 1
    incidents = [published_json(i, status, page_id, page_url) for i in published if i.state != "resolved"]
    indicator = status.indicator
    return {
        "page": {"id": page_id, "name": page_name, "url": page_url, "time_zone": "Etc/UTC", "updated_at": updated},
        "components": components,
        "incidents": incidents,
        "scheduled_maintenances": [maintenance_json(m, page_id, now) for m in maintenances if m.ends_at > now],
        "status": {"indicator": indicator, "description": DESCRIPTION[indicator]},
    }


def maintenance_json(m: Maintenance, page_id: str, now: datetime) -> dict[str, Any]:
    """A Statuspage v2 scheduled maintenance."""
    status = "in_progress" if m.active(now) else "scheduled"
    mid = "ftm" + _id("maintenance", m.key)
    affected = [{"code": _id("model", p, model), "name": f"{p}/{model}"} for p, model in m.components]
    return {
        "id": mid,
        "name": m.title,
        "status": status,
        "impact": "maintenance",
        "created_at": _iso(m.starts_at),
        "updated_at": _iso(min(now, m.starts_at) if status == "scheduled" else m.starts_at),
        "scheduled_for": _iso(m.starts_at),
        "scheduled_until": _iso(m.ends_at),
        "page_id": page_id,
        "incident_updates": [],
        "components": affected,
    }


def _component(cid, name, status, page_id, updated, position, *, group=False, group_id=None, children=None) -> dict:
    out = {
        "id": cid,
        "name": name,
        "status": status,
        "created_at": updated,
        "updated_at": updated,
        "position": position,
        "description": None,
        "showcase": False,
        "start_date": None,
        "group_id": group_id,
        "page_id": page_id,
        "group": group,
        "only_show_if_degraded": False,
    }
    if children is not None:
        out["components"] = children
    return out


def component_states(status: Status, components: Sequence[str]) -> list[str]:
    """The states now of an incident's components (`provider/model`, or `provider/*` for the provider)."""
    out = []
    for c in components:
        provider, _, model = c.partition("/")
        out.append(status.providers.get(provider) if model in ("*", "") else status.models.get((provider, model)))
    return [s for s in out if s is not None]


def published_impact(status: Status, components: Sequence[str]) -> str:
    """A published incident's impact: its components' worst state now (`minor` when they are fine)."""
    return IMPACT.get(worst(component_states(status, components)), "minor")


def published_json(incident: Any, status: Status, page_id: str, page_url: str | None) -> dict[str, Any]:
    """One of our published incidents (monitor.incidents.views.IncidentView) as a Statuspage v2 incident:
    its published updates, newest first (their states are Statuspage's: investigating, identified,
    monitoring, resolved)."""
    iid = f"fti{incident.id}"
    affected = []
    for c in incident.components:
        provider, _, model = c.partition("/")
        whole = model in ("*", "")
        code = _id("provider", provider) if whole else _id("model", provider, model)
        affected.append({"code": code, "name": provider if whole else c})
    updates = [
        {
            "id": f"{iid}-{u.id}",
            "status": u.state,
            "body": u.message,
            "incident_id": iid,
            "created_at": _iso(u.published_at or u.at),
            "updated_at": _iso(u.published_at or u.at),
            "display_at": _iso(u.at),
            "affected_components": affected,
        }
        for u in reversed(incident.updates)
    ]
    return {
        "id": iid,
        "name": incident.title,
        "status": incident.state,
        "impact": published_impact(status, incident.components),
        "created_at": _iso(incident.started_at),
        "updated_at": _iso(incident.updated_at),
        "monitoring_at": None,
        "resolved_at": _iso(incident.resolved_at),
        "started_at": _iso(incident.started_at),
        "shortlink": f"{page_url.rstrip('/')}/status/{incident.provider}" if page_url else None,
        "page_id": page_id,
        "incident_updates": updates,
        "components": affected,
    }


# ------------------------------------------------------------------- badge
def _text_width(text: str) -> int:
    return 7 * len(text) + 10  # Verdana 11px averages ~7 px a character: close enough for a badge


def badge_svg(provider: str, status: str | None, p50_ms: float | None) -> str:
    """A shields.io-style badge: `<provider> | <status> · p50 <ttft>`; grey when unknown."""
    if status is None:
        right, color = "unknown", "#9f9f9f"
    else:
        right, color = LABEL[status], COLOR[status]
        if p50_ms is not None:
            right += f" · p50 {p50_ms / 1000:.2f} s" if p50_ms >= 1000 else f" · p50 {p50_ms:.0f} ms"
    left = provider
    lw, rw = _text_width(left), _text_width(right)
    w = lw + rw
    label = escape(f"{left}: {right}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="20" role="img" aria-label="{label}">'
        f"<title>{label}</title>"
        f'<rect width="{lw}" height="20" fill="#555"/><rect x="{lw}" width="{rw}" height="20" fill="{color}"/>'
        f'<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{lw / 2:.0f}" y="14">{escape(left)}</text><text x="{lw + rw / 2:.0f}" y="14">{escape(right)}</text>'
        "</g></svg>"
    )
