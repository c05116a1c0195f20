"""Detector checkpoints in `detector_state`, and the engine's ownership token in `job_state`.

The engine keeps detectors in memory and checkpoints them: always in the
transaction that records an alert transition (so a replay after a restart
starts after the last recorded transition and cannot page twice), and
otherwise every few minutes. Replaying samples since a checkpoint gives the
same detector again: detectors are deterministic.

The token is how an engine notices that another leader evaluated while it
was not leader: each round it writes a fresh token; if the token it finds is
not the one it wrote last, its memory is stale and it reloads from here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select, tuple_
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.storage.models import DetectorState, JobState

STATES = DetectorState.__table__
JOBS = JobState.__table__
JOB_NAME = "alerts.evaluate"
CHUNK = 500


@dataclass(frozen=True, slots=True)
class Checkpoint:
    rule: str
    series: str
    state: dict[str, Any]
    last_ts: datetime | None


def _insert(conn: Connection):
    return pg_insert if conn.dialect.name == "postgresql" else sqlite_insert


SERIES_SEP = "~"  # series = target id ~ agent: one detector per vantage point (DESIGN §11)


def series_name(target: str, agent: str) -> str:
    return f"{target}{SERIES_SEP}{agent}"


def load_pairs(conn: Connection, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str, str], Checkpoint]:
    """The stored checkpoints of every agent of the (rule, target) `pairs`, keyed (rule, target, agent).

    Agents are not configured, so this reads the rules' rows and keeps the pairs' ones. A series
    without an agent is a pooled one from before vantage points (0008): left unread, its agents'
    detectors warm up from history instead."""
    wanted = set(pairs)
    rules = sorted({rule for rule, _ in wanted})
    out: dict[tuple[str, str, str], Checkpoint] = {}
    for i in range(0, len(rules), CHUNK):
        query = select(STATES.c.rule, STATES.c.series, STATES.c.state, STATES.c.last_ts).where(
            STATES.c.rule.in_(rules[i : i + CHUNK]), STATES.c.series.contains(SERIES_SEP, autoescape=True)
        )
        for rule, series, state, last_ts in conn.execute(query):
            target, _, agent = series.rpartition(SERIES_SEP)
            if (rule, target) in wanted:
                out[(rule, target, agent)] = Checkpoint(rule, series, state, last_ts)
    return out


def load(conn: Connection, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Checkpoint]:
    """The stored checkpoints among (rule, series) `keys`."""
    keys = sorted(set(keys))
    out: dict[tuple[str, str], Checkpoint] = {}
    for i in range(0, len(keys), CHUNK):
        chunk = keys[i : i + CHUNK]
        query = select(STATES.c.rule, STATES.c.series, STATES.c.state, STATES.c.last_ts).where(
            tuple_(STATES.c.rule, STATES.c.series).in_(chunk)
        )
        for rule, series, state, last_ts in conn.execute(query):
            out[(rule, series)] = Checkpoint(rule, series, state, last_ts)
    return out


def save(conn: Connection, checkpoints: Iterable[Checkpoint], now: datetime) -> int:
    rows = [
        {"rule": c.rule, "series": c.series, "state": c.state, "last_ts": c.last_ts, "updated_at": now}
        for c in checkpoints
    ]
    for i in range(0, len(rows), CHUNK):
        stmt = _insert(conn)(STATES)
        stmt = stmt.on_conflict_do_update(
            index_elements=["rule", "series"],
            set_={
                "state": stmt.excluded.state,
                "last_ts": stmt.excluded.last_ts,
                "updated_at": stmt.excluded.updated_at,
            },
        )
        conn.execute(stmt, rows[i : i + CHUNK])
    return len(rows)


def read_token(conn: Connection, *, lock: bool = False) -> str | None:
    """The token of the engine that evaluated last (FOR UPDATE on PostgreSQL with `lock`)."""
    query = select(JOBS.c.done_until, JOBS.c.updated_at).where(JOBS.c.name == JOB_NAME)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).first()
    return None if row is None else _token(row.updated_at)


def write_token(conn: Connection, now: datetime) -> str:
    """Claim the last evaluation: the token is the row's updated_at, unique to the microsecond plus a random tail."""
    stamp = now.replace(microsecond=(now.microsecond // 1000) * 1000 + uuid.uuid4().int % 1000)
    stmt = _insert(conn)(JOBS).values(name=JOB_NAME, done_until=now, updated_at=stamp)
    stmt = stmt.on_conflict_do_update(index_elements=["name"], set_={"done_until": now, "updated_at": stamp})
    conn.execute(stmt)
    return _token(stamp)


def _token(stamp: datetime | None) -> str | None:
    return None if stamp is None else stamp.isoformat()
