"""Read (and small write) queries, returning values, never ORM objects.

One module per consumer area: `samples` for alerting and the CLI; the
dashboard's queries join as their own module (e.g. `dashboard.py`, reading
`rollups_hourly`) and are re-exported here.
"""

from monitor.storage.queries.agents import AgentInfo, heartbeat_agent, list_agents, sync_targets
from monitor.storage.queries.samples import (
    SERIES_METRICS,
    Series,
    insert_samples,
    latest_sample_per_agent,
    recent_samples,
    series,
)

__all__ = [
    "SERIES_METRICS",
    "AgentInfo",
    "Series",
    "heartbeat_agent",
    "insert_samples",
    "latest_sample_per_agent",
    "list_agents",
    "recent_samples",
    "series",
    "sync_targets",
]
