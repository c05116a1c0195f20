"""Read (and small write) queries, returning values, never ORM objects.

One module per consumer area: `samples` for alerting and the CLI; the
dashboard's queries join as their own module (e.g. `dashboard.py`, reading
`rollups_hourly`) and are re-exported here.
"""

from monitor.storage.queries.agents import AgentInfo, heartbeat_agent, list_agents, sync_targets
from monitor.storage.queries.samples import insert_samples, recent_samples

__all__ = [
    "AgentInfo",
    "heartbeat_agent",
    "insert_samples",
    "list_agents",
    "recent_samples",
    "sync_targets",
]
