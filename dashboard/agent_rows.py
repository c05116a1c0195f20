"""The Overview's agents as table rows (pure): each vantage point's health (DESIGN §11).

An agent's row: its status, its last sample and heartbeat, its scheduling lag, and one column
per provider with the share of its recent probes of that provider that succeeded — an agent
that cannot reach one provider shows it here before any alert says so.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from dashboard import ui
from monitor import fmt

SILENT_AGENT = timedelta(minutes=10)


def agent_rows(od, now: datetime) -> list[dict[str, object]]:
    """`od`: data.OverviewData (its `agents` from heartbeats, its `reach` from the samples)."""
    reach = {r.agent: r for r in od.reach}
    providers = sorted({p for r in od.reach for p in r.reach})
    known = {a.name: a for a in od.agents}
    rows = []
    for name in sorted(set(known) | set(reach)):
        a, r = known.get(name), reach.get(name)
        last = max((x for x in (a and a.last_sample_at, r and r.last_sample_at) if x is not None), default=None)
        if last is None or now - last > SILENT_AGENT:
            status = "silent"
        elif a is not None and not a.healthy:
            status = "unhealthy: cannot reach providers"
        else:
            status = "probing"
        row: dict[str, object] = {
            "agent": name,
            "status": status,
            "last sample": ui.ago(last, now),
            "heartbeat": ui.ago(a.last_seen if a else None, now),
            "lag": fmt.ms(r.sched_lag_max_ms) if r and r.sched_lag_max_ms is not None else "—",
        }
        for provider in providers:
            share = r.reach.get(provider) if r else None
            row[provider] = fmt.pct(share) if share is not None else "—"
        rows.append(row)
    return rows
