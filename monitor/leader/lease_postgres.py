"""The leader lease on PostgreSQL (election.py): the database's clock, a take-over under a row lock.

The same four calls as `lease_sqlite`, so the election picks a module once by dialect. A
take-over locks the row `FOR UPDATE` (waiting at most TAKEOVER_LOCK_TIMEOUT), so it waits for the
old leader's fenced transactions in flight, which read the row `FOR KEY SHARE`.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

# A take-over waits at most this long for the old leader's fenced transactions in flight.
TAKEOVER_LOCK_TIMEOUT = "2s"

_RENEW = text(
    "UPDATE leader_lease SET expires_at = now() + make_interval(secs => :ttl_s) "
    "WHERE name = :name AND holder = :holder AND token = :token RETURNING token"
)
_READ = text("SELECT expires_at <= now() AS expired FROM leader_lease WHERE name = :name")
_LOCK = text("SELECT token, expires_at <= now() AS expired FROM leader_lease WHERE name = :name FOR UPDATE")
_TAKE = text(
    "UPDATE leader_lease SET holder = :holder, token = token + 1, acquired_at = now(), "
    "expires_at = now() + make_interval(secs => :ttl_s) WHERE name = :name RETURNING token"
)
_CREATE = text(
    "INSERT INTO leader_lease (name, holder, token, acquired_at, expires_at) "
    "VALUES (:name, :holder, 1, now(), now() + make_interval(secs => :ttl_s)) "
    "ON CONFLICT (name) DO NOTHING RETURNING token"
)
_GIVE_UP = text("UPDATE leader_lease SET expires_at = now() WHERE name = :name AND holder = :holder AND token = :token")
_FENCE = "SELECT 1 FROM leader_lease WHERE name = %s AND token = %s AND expires_at > now() FOR KEY SHARE"


def renew(conn: Connection, name: str, holder: str, token: int, ttl_s: float) -> int | None:
    return conn.execute(_RENEW, {"name": name, "holder": holder, "token": token, "ttl_s": ttl_s}).scalar()


def take(conn: Connection, name: str, holder: str, ttl_s: float) -> int | None:
    """The lease if nobody holds it or its holder's ran out; None while another agent holds it."""
    params = {"name": name, "holder": holder, "ttl_s": ttl_s}
    expired = conn.execute(_READ, params).scalar()
    if expired is None:  # no leader yet: the first insert wins
        return conn.execute(_CREATE, params).scalar()
    if not expired:
        return None
    # SET LOCAL lasts for this transaction only: nothing left behind on a pooled session.
    conn.execute(text(f"SET LOCAL lock_timeout = '{TAKEOVER_LOCK_TIMEOUT}'"))
    row = conn.execute(_LOCK, params).one_or_none()
    if row is None or not row.expired:  # renewed meanwhile
        return None
    return conn.execute(_TAKE, params).scalar()


def give_up(conn: Connection, name: str, holder: str, token: int) -> None:
    conn.execute(_GIVE_UP, {"name": name, "holder": holder, "token": token})


def fence(name: str, token: int) -> tuple[str, tuple]:
    """The DBAPI statement (format parameters) a fenced transaction begins with: a row while `token` leads."""
    return _FENCE, (name, token)
