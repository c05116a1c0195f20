"""The public status, built from values: a Statuspage v2 summary, a badge, an Atom feed of incidents.

Pure: callers hand in per-target recent counts and medians, and alerts; these
functions return a dict or text. What goes out is public by design, so only
what a status page would show: provider and model names, statuses, p50 TTFT,
incident titles and times. Never a URL of ours besides the page's own public
one, a region's base URL, a prompt, a key, or the dashboard's address.

Component status, worst of:
- availability over the window: < 50 % major_outage, < 95 % partial_outage;
- a firing alert on it: error_rate -> partial_outage, anything else (latency,
  decode speed, a route change) -> degraded_performance.
A provider is the worst of its models; a provider-wide alert counts for each.
The page indicator follows the worst component: none, minor, major, critical.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from xml.sax.saxutils import escape

OPERATIONAL, DEGRADED, PARTIAL, MAJOR = "operational", "degraded_performance", "partial_outage", "major_outage"
ORDER = (OPERATIONAL, DEGRADED, PARTIAL, MAJOR)
INDICATOR = {OPERATIONAL: "none", DEGRADED: "minor", PARTIAL: "major", MAJOR: "critical"}
DESCRIPTION = {
    "none": "All Systems Operational",
    "minor": "Minor Service Outage",
    "major": "Partial System Outage",
    "critical": "Major Service Outage",
}
IMPACT = {DEGRADED: "minor", PARTIAL: "major", MAJOR: "critical"}
LABEL = {OPERATIONAL: "operational", DEGRADED: "degraded", PARTIAL: "partial outage", MAJOR: "major outage"}
COLOR = {OPERATIONAL: "#2e9e44", DEGRADED: "#d9a400", PARTIAL: "#e07000", MAJOR: "#d0312d"}
MAJOR_BELOW, PARTIAL_BELOW = 0.5, 0.95


@dataclass(frozen=True, slots=True)
class TargetStats:
    provider: str
    model: str
    measured: int  # probes in the window, cancelled ones left out
    failed: int
    ttft_p50_ms: float | None


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


def worst(statuses: Iterable[str]) -> str:
    return max(statuses, key=ORDER.index, default=OPERATIONAL)


def alert_status(metric: str) -> str:
    return PARTIAL if metric == "error_rate" else DEGRADED


def availability_status(measured: int, failed: int) -> str:
    if measured <= 0:
        return OPERATIONAL  # no probes yet: nothing known against it
    share = 1 - failed / measured
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

    @property
    def indicator(self) -> str:
        return INDICATOR[worst(self.providers.values())]


def compute(stats: Sequence[TargetStats], live: Sequence[Incident]) -> Status:
    firing = [i for i in live if i.state == "firing"]
    per_model: dict[tuple[str, str], list[TargetStats]] = {}
    for s in stats:
        per_model.setdefault((s.provider, s.model), []).append(s)
    models = {}
    for (provider, model), rows in per_model.items():
        from_probes = availability_status(sum(r.measured for r in rows), sum(r.failed for r in rows))
        from_alerts = [alert_status(i.metric) for i in firing if _covers(i, provider, model)]
        models[(provider, model)] = worst([from_probes, *from_alerts])
    providers = {}
    p50: dict[str, float | None] = {}
    for provider in sorted({p for p, _ in per_model}):
        mine = [status for (p, _), status in models.items() if p == provider]
        providers[provider] = worst(
            [*mine, *(alert_status(i.metric) for i in firing if i.provider == provider and i.model is None)]
        )
        medians = [
            s.ttft_p50_ms
            for s in stats
            if s.provider == provider and s.ttft_p50_ms is not None and not math.isnan(s.ttft_p50_ms)
        ]
        p50[provider] = sorted(medians)[len(medians) // 2] if medians else None
    return Status(providers, models, p50)


def summary(
    status: Status, live: Sequence[Incident], *, now: datetime, page_name: str, page_url: str | None
) -> dict[str, Any]:
    """The Statuspage v2 `summary.json` shape."""
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
    incidents = [incident_json(i, page_id, page_url) for i in live if i.state == "firing"]
    indicator = status.indicator
    return {
        "page": {"id": page_id, "name": page_name, "url": page_url, "time_zone": "Etc/UTC", "updated_at": updated},
        "components": components,
        "incidents": incidents,
        "scheduled_maintenances": [],
        "status": {"indicator": indicator, "description": DESCRIPTION[indicator]},
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


def incident_json(incident: Incident, page_id: str, page_url: str | None) -> dict[str, Any]:
    resolved = incident.state == "resolved"
    impact = IMPACT[alert_status(incident.metric)]
    status = "resolved" if resolved else "investigating"
    iid = f"ft{incident.id}"
    affected = [{"code": _id("model", incident.provider or "", incident.model or ""), "name": _scope_name(incident)}]
    return {
        "id": iid,
        "name": incident.title,
        "status": status,
        "impact": impact,
        "created_at": _iso(incident.began_at),
        "updated_at": _iso(incident.updated_at),
        "monitoring_at": None,
        "resolved_at": _iso(incident.resolved_at),
        "started_at": _iso(incident.began_at),
        "shortlink": f"{page_url.rstrip('/')}/incidents.atom" if page_url else None,
        "page_id": page_id,
        "incident_updates": [
            {
                "id": f"{iid}-{status}",
                "status": status,
                "body": incident.title,
                "incident_id": iid,
                "created_at": _iso(incident.updated_at),
                "updated_at": _iso(incident.updated_at),
                "display_at": _iso(incident.updated_at),
                "affected_components": affected,
            }
        ],
        "components": affected,
    }


def _scope_name(incident: Incident) -> str:
    if incident.provider and incident.model:
        return f"{incident.provider}/{incident.model}"
    return incident.provider or "all providers"


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


# -------------------------------------------------------------------- atom
def incidents_atom(incidents: Sequence[Incident], *, now: datetime, page_name: str, page_url: str | None) -> str:
    """Our incidents, newest first, as an Atom 1.0 feed (RFC 4287)."""
    feed_id = f"urn:firsttoken:{_id('page', page_name)}"
    base = page_url.rstrip("/") if page_url else None
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        f"<title>{escape(page_name)} incidents</title>",
        f"<id>{feed_id}</id>",
        f"<updated>{_iso(now)}</updated>",
        "<author><name>firsttoken</name></author>",
    ]
    if base:
        lines.append(f'<link rel="self" href="{escape(base)}/incidents.atom"/>')
        lines.append(f'<link rel="alternate" href="{escape(base)}/status.json"/>')
    for i in sorted(incidents, key=lambda x: x.began_at, reverse=True):
        state = "resolved" if i.state == "resolved" else "ongoing"
        when = f"began {_iso(i.began_at)}" + (f", resolved {_iso(i.resolved_at)}" if i.resolved_at else "")
        lines += [
            "<entry>",
            f"<title>[{state}] {escape(i.title)}</title>",
            f"<id>{feed_id}:incident:{i.id}</id>",
            f"<updated>{_iso(i.updated_at)}</updated>",
            f"<published>{_iso(i.began_at)}</published>",
            f"<summary>{escape(_scope_name(i))}: {escape(i.title)} ({when})</summary>",
            "</entry>",
        ]
    lines.append("</feed>")
    return "\n".join(lines) + "\n"
