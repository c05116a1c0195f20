"""Agents and targets bookkeeping the service keeps (heartbeats, configured targets)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from sqlalchemy import Engine, and_, case, func, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.storage.models import Agent, SampleRow, Target


@dataclass(frozen=True, slots=True)
class AgentInfo:
    name: str
    last_seen: datetime | None  # last heartbeat of the running service
    last_sample_at: datetime | None  # newest stored sample
    healthy: bool
    version: str | None


class TargetLike(Protocol):
    id: str
    provider: str
    model: str
    region: str
    prompt: str
    protocol: str
    canonical_model: str


def _insert(engine: Engine):
    return pg_insert if engine.dialect.name == "postgresql" else sqlite_insert


def heartbeat_agent(
    engine: Engine, name: str, *, healthy: bool = True, version: str | None = None, now: datetime | None = None
) -> None:
    now = now or datetime.now(UTC)
    stmt = _insert(engine)(Agent.__table__).values(name=name, last_seen=now, healthy=healthy, version=version)
    stmt = stmt.on_conflict_do_update(
        index_elements=["name"],
        set_={"last_seen": stmt.excluded.last_seen, "healthy": stmt.excluded.healthy, "version": stmt.excluded.version},
    )
    with engine.begin() as conn:
        conn.execute(stmt)


def list_agents(engine: Engine) -> list[AgentInfo]:
    a = Agent.__table__.c
    with engine.connect() as conn:
        rows = conn.execute(select(a.name, a.last_seen, a.last_sample_at, a.healthy, a.version).order_by(a.name))
        return [AgentInfo(*row) for row in rows]


def unhealthy_agents(engine: Engine) -> set[str]:
    """Agents that said they cannot reach any provider: their samples page nobody."""
    a = Agent.__table__.c
    with engine.connect() as conn:
        return set(conn.execute(select(a.name).where(a.healthy.is_(False))).scalars())


def sync_targets(engine: Engine, targets: Iterable[TargetLike], now: datetime | None = None) -> None:
    """Record configured targets, their protocol and canonical model (samples carry neither).

    A target not probed yet gets first_seen = last_seen = now; an existing one
    keeps its times and only has its protocol and canonical model updated.
    """
    now = now or datetime.now(UTC)
    rows = [
        {
            "id": t.id,
            "provider": t.provider,
            "model": t.model,
            "region": t.region,
            "prompt": t.prompt,
            "protocol": t.protocol,
            "canonical_model": t.canonical_model or t.model,
            "first_seen": now,
            "last_seen": now,
        }
        for t in sorted(targets, key=lambda t: t.id)
    ]
    if not rows:
        return
    stmt = _insert(engine)(Target.__table__)
    stmt = stmt.on_conflict_do_update(
        index_elements=["id"],
        set_={"protocol": stmt.excluded.protocol, "canonical_model": stmt.excluded.canonical_model},
    )
    with engine.begin() as conn:
        conn.execute(stmt, rows)


@dataclass(frozen=True)
class AgentReach:
    """One vantage point over a recent window (DESIGN §11): what share of its probes of each provider
    succeeded, and how late its probes started (its scheduler's lag)."""

    agent: str
    last_sample_at: datetime | None
    sched_lag_max_ms: float | None
    reach: dict[str, float | None]  # provider -> successful share of its measured probes


def agent_reach(engine: Engine, since: datetime) -> list[AgentReach]:
    """Per agent and provider since `since`: one GROUP BY over the window's samples."""
    s = SampleRow.__table__.c
    measured = or_(s.error_kind.is_(None), s.error_kind != "cancelled")
    query = (
        select(
            s.agent,
            s.provider,
            func.max(s.started_at),
            func.max(s.sched_lag_ms),
            func.sum(case((measured, 1), else_=0)),
            func.sum(case((and_(measured, s.ok), 1), else_=0)),
        )
        .where(s.started_at >= since)
        .group_by(s.agent, s.provider)
    )
    out: dict[str, AgentReach] = {}
    with engine.connect() as conn:
        for agent, provider, last, lag, total, ok in conn.execute(query):
            seen = out.get(agent) or AgentReach(agent, None, None, {})
            share = (ok or 0) / total if total else None
            last = max(x for x in (seen.last_sample_at, last) if x is not None) if last or seen.last_sample_at else None
            lags = [x for x in (seen.sched_lag_max_ms, lag) if x is not None]
            out[agent] = AgentReach(agent, last, max(lags) if lags else None, {**seen.reach, provider: share})
    return [out[a] for a in sorted(out)]
