"""The leader lease on SQLite (election.py): the same row, token and calls as
`lease_postgres`, on the host's clock.

Several `firsttoken run` processes may share one SQLite file — the demo runs two vantage points
on one — and the once-only work must still run once. Every process using a SQLite file runs on
that file's host, so the host's clock is the database's clock here. Each statement below is
atomic under SQLite's single writer, and a take-over is an UPDATE that holds only while the lease
has expired, so of two agents racing for an expired lease exactly one gets it.

Times are stored in SQLAlchemy's SQLite format for `DateTime` (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC),
so the row reads back as datetimes elsewhere and compares correctly as text here.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, text

from monitor.leader.identity import died_on_this_host

log = logging.getLogger(__name__)

TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"

_RENEW = text("UPDATE leader_lease SET expires_at = :until WHERE name = :name AND holder = :holder AND token = :token")
_CREATE = text(
    "INSERT INTO leader_lease (name, holder, token, acquired_at, expires_at) "
    "VALUES (:name, :holder, 1, :now, :until) ON CONFLICT (name) DO NOTHING"
)
_TAKE = text(
    "UPDATE leader_lease SET holder = :holder, token = token + 1, acquired_at = :now, expires_at = :until "
    "WHERE name = :name AND expires_at <= :now"
)
_MINE = text("SELECT token FROM leader_lease WHERE name = :name AND holder = :holder")
_CURRENT = text("SELECT holder, token FROM leader_lease WHERE name = :name")
_TAKE_FROM_DEAD = text(
    "UPDATE leader_lease SET holder = :holder, token = token + 1, acquired_at = :now, expires_at = :until "
    "WHERE name = :name AND holder = :dead AND token = :token"
)
_GIVE_UP = text("UPDATE leader_lease SET expires_at = :now WHERE name = :name AND holder = :holder AND token = :token")
_FENCE = "SELECT 1 FROM leader_lease WHERE name = ? AND token = ? AND expires_at > ?"


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def _times(ttl_s: float) -> dict[str, str]:
    now = datetime.now(UTC)
    return {"now": stamp(now), "until": stamp(now + timedelta(seconds=ttl_s))}


def renew(conn: Connection, name: str, holder: str, token: int, ttl_s: float) -> int | None:
    params = {"name": name, "holder": holder, "token": token, **_times(ttl_s)}
    return token if conn.execute(_RENEW, params).rowcount == 1 else None


def take(conn: Connection, name: str, holder: str, ttl_s: float) -> int | None:
    """The lease if nobody holds it, its holder's ran out, or its holder's process is gone from this
    host (every process of a SQLite file runs on its host); None while another agent holds it."""
    params = {"name": name, "holder": holder, **_times(ttl_s)}
    if conn.execute(_CREATE, params).rowcount == 1:
        return 1
    if conn.execute(_TAKE, params).rowcount != 1:
        current = conn.execute(_CURRENT, params).first()
        if current is None or current.holder == holder or not died_on_this_host(current.holder):
            return None
        # Compare-and-set on the dead holder's token: of two agents noticing at once, one takes it.
        taken = {**params, "dead": current.holder, "token": current.token}
        if conn.execute(_TAKE_FROM_DEAD, taken).rowcount != 1:
            return None
        log.info("leader lease taken from %s, whose process is gone", current.holder)
    return conn.execute(_MINE, params).scalar()


def give_up(conn: Connection, name: str, holder: str, token: int) -> None:
    conn.execute(_GIVE_UP, {"name": name, "holder": holder, "token": token, "now": stamp(datetime.now(UTC))})


def fence(name: str, token: int) -> tuple[str, tuple]:
    """The DBAPI statement (qmark parameters) a fenced transaction begins with: a row while `token` leads."""
    return _FENCE, (name, token, stamp(datetime.now(UTC)))
