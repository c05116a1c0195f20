"""Our alert against the provider's own incident: which one, and how many minutes apart. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from monitor.storage.queries.official import OfficialIncident

# An official incident counts for one of our alerts when it began within this much of it.
MATCH_WINDOW = timedelta(hours=3)


def matching_incident(
    provider: str | None, fired_at: datetime, incidents: Iterable[OfficialIncident]
) -> OfficialIncident | None:
    """The provider's own incident nearest our alert's firing, if one began within MATCH_WINDOW."""
    if provider is None:
        return None
    near = [i for i in incidents if i.provider == provider and abs(i.started_at - fired_at) <= MATCH_WINDOW]
    return min(near, key=lambda i: abs(i.started_at - fired_at), default=None)


def lead_minutes(fired_at: datetime, incident: OfficialIncident) -> float:
    """Minutes our alert fired before the provider's incident began (negative: after it)."""
    return (incident.started_at - fired_at).total_seconds() / 60


def lead_text(fired_at: datetime, incident: OfficialIncident | None) -> str:
    if incident is None:
        return ""
    minutes = lead_minutes(fired_at, incident)
    when = "before" if minutes >= 0 else "after"
    return f"{abs(minutes):.0f} min {when} {incident.provider}'s own incident ({incident.name})"
