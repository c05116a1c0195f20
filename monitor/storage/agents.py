"""Agent heartbeats: which probe agents are alive and able to reach providers."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, select, update

from monitor.storage.models import Agent


def record_heartbeat(engine: Engine, agent: str, *, healthy: bool, version: str, now: datetime) -> None:
    table = Agent.__table__
    with engine.begin() as conn:
        updated = conn.execute(
            update(table).where(table.c.name == agent).values(last_seen=now, healthy=healthy, version=version)
        ).rowcount
        if not updated:
            conn.execute(table.insert().values(name=agent, last_seen=now, healthy=healthy, version=version))


def unhealthy_agents(engine: Engine) -> set[str]:
    """Agents that said they cannot reach any provider: their samples page nobody."""
    table = Agent.__table__
    with engine.connect() as conn:
        return {row.name for row in conn.execute(select(table.c.name).where(table.c.healthy.is_(False)))}
