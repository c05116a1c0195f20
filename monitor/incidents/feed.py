"""The public incident feed (`/incidents.atom`, DESIGN §16): published incidents, newest first, as Atom
1.0 (RFC 4287). One entry per incident, updated whenever an update is published; its content is the
timeline of published updates, newest first, as Statuspage's feeds have it; its title says `[ongoing]` or
`[resolved]`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from html import escape

from monitor.incidents.views import IncidentView

FEED_ID = "urn:firsttoken:incidents"  # ids that outlive a change of the site's URL
STATE_WORDS = {
    "investigating": "Investigating",
    "identified": "Identified",
    "monitoring": "Monitoring",
    "resolved": "Resolved",
}


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def incidents_atom(incidents: Sequence[IncidentView], *, now: datetime, title: str, site_url: str | None) -> str:
    base = site_url.rstrip("/") if site_url else None
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom">',
        f"<title>{escape(title)} incidents</title>",
        f"<id>{FEED_ID}</id>",
        f"<updated>{_iso(max((i.updated_at for i in incidents), default=now))}</updated>",
        "<author><name>firsttoken</name></author>",
    ]
    if base:
        lines.append(f'<link rel="self" type="application/atom+xml" href="{escape(base)}/incidents.atom"/>')
        lines.append(f'<link rel="alternate" type="text/html" href="{escape(base)}/status"/>')
    for incident in incidents:
        state = STATE_WORDS.get(incident.state, incident.state)
        ongoing = "resolved" if incident.state == "resolved" else "ongoing"
        timeline = "".join(
            f"<p><strong>{escape(STATE_WORDS.get(u.state, u.state))}</strong> "
            f"<small>{escape(u.at.strftime('%Y-%m-%d %H:%M UTC'))}</small><br/>{escape(u.message)}</p>"
            for u in reversed(incident.updates)
        )
        components = ", ".join(incident.components)
        lines += [
            "<entry>",
            f"<title>[{ongoing}] {escape(incident.title)}</title>",
            f"<id>{FEED_ID}:incident:{incident.id}</id>",
            f"<published>{_iso(incident.started_at)}</published>",
            f"<updated>{_iso(incident.updated_at)}</updated>",
            *([f'<link rel="alternate" type="text/html" href="{escape(base)}/status/{escape(incident.provider)}"/>']
              if base else []),
            f"<summary>{escape(incident.provider)} ({escape(components)}): {escape(state)}</summary>",
            f'<content type="html">{escape(timeline)}</content>',
            "</entry>",
        ]  # fmt: skip
    lines.append("</feed>")
    return "\n".join(lines) + "\n"
