"""Once-only work across agents: a lease row with a fencing token elects the leader.

Any number of `firsttoken run` processes share one database; rollups,
retention, alert evaluation and delivery must run once. The leader holds the
row `leader_lease('leader')` until `expires_at` (the database's clock, never
an agent's) and renews it every `LEADER_RETRY_S`; the others read it as
often and take it over once it has expired, which bumps its `token`. A dead
leader is replaced within `LEASE_TTL_S + LEADER_RETRY_S`.

Nothing here is session state, so it works through a transaction pooler
(PgBouncer `pool_mode = transaction`), where an advisory lock is held by
whichever server session the pooler picked and a re-entrant lock lets two
agents both lead.

SQLite gets the same row and token with the host's clock (monitor/agent/lease_sqlite.py):
several processes may share one file (the demo's two vantage points do), and
the once-only work must run once there too.

Fencing: a leader that stalls (a long GC pause, a partition) may still
believe it leads after its lease went to another agent. Every leader-only
transaction therefore begins by reading the lease row `FOR KEY SHARE` with the
token it was elected under (`fenced_engine`): a stale token aborts the
transaction, and a take-over, which locks the row `FOR UPDATE`, waits for the
fenced transactions in flight, so none of them commits after it. On SQLite the
token is checked as the transaction begins, not under a lock: a leader would
have to stall past its whole lease between that check and its commit.
"""

from __future__ import annotations

import logging
import os
import uuid

from sqlalchemy import Engine, event, text

from monitor.agent import lease_sqlite

log = logging.getLogger(__name__)

LEASE_NAME = "leader"
LEASE_TTL_S = 20.0  # a dead leader's lease runs out this long after its last renewal
LEADER_RETRY_S = 5.0  # renew (leader) or look for an expired lease (the others) this often
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


class NotLeader(RuntimeError):
    """A leader-only transaction was refused: this agent's fencing token is no longer current."""


def instance_name(agent: str) -> str:
    """Who holds the lease, for /healthz and the logs: unique per process, even for one agent name."""
    return f"{agent}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


class LeaderElection:
    def __init__(self, engine: Engine, holder: str | None = None, *, ttl_s: float = LEASE_TTL_S) -> None:
        self._engine = engine
        self.holder = holder or instance_name("firsttoken")
        self.ttl_s = ttl_s
        self._postgres = engine.dialect.name == "postgresql"
        self.token: int | None = None  # the fencing token this agent leads under, None when it does not
        self.is_leader = False  # until the first poll takes the lease

    def poll(self) -> bool:
        """Renew the lease, or take it over once expired. Blocking: call from a worker thread."""
        try:
            with self._engine.begin() as conn:
                token = self._renew(conn) if self.token is not None else None
                if token is None:
                    token = self._take(conn)
        except Exception as exc:  # database down: nobody here may act as leader
            if self.is_leader:
                log.warning("lost leadership: %s", type(exc).__name__)
            self.is_leader = False  # the token is kept: the next poll renews it if nobody took over
            return False
        if token is not None and not self.is_leader:
            log.info("this agent is now the leader (fencing token %d)", token)
        elif token is None and self.is_leader:
            log.warning("lost leadership: another agent holds the lease")
        self.token = token
        self.is_leader = token is not None
        return self.is_leader

    def _renew(self, conn) -> int | None:
        if not self._postgres:
            return lease_sqlite.renew(conn, LEASE_NAME, self.holder, self.token, self.ttl_s)
        params = {"name": LEASE_NAME, "holder": self.holder, "token": self.token, "ttl_s": self.ttl_s}
        return conn.execute(_RENEW, params).scalar()

    def _take(self, conn) -> int | None:
        if not self._postgres:
            return lease_sqlite.take(conn, LEASE_NAME, self.holder, self.ttl_s)
        params = {"name": LEASE_NAME, "holder": self.holder, "ttl_s": self.ttl_s}
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

    def release(self) -> None:
        """Give the lease up (a clean shutdown): the next agent's poll takes it without waiting it out."""
        if self.token is not None:
            try:
                with self._engine.begin() as conn:
                    if self._postgres:
                        conn.execute(_GIVE_UP, {"name": LEASE_NAME, "holder": self.holder, "token": self.token})
                    else:
                        lease_sqlite.give_up(conn, LEASE_NAME, self.holder, self.token)
            except Exception:
                log.debug("giving up the lease failed; it runs out by itself")
        self.token = None
        self.is_leader = False

    def fenced_engine(self) -> Engine:
        """The engine for leader-only work: every transaction on it checks the fencing token first.

        It shares the engine's pool."""
        fenced = self._engine.execution_options()

        @event.listens_for(fenced, "begin")
        def _check_token(conn) -> None:
            token = self.token
            if token is None or not self.is_leader:
                raise NotLeader("not the leader: leader-only work refused")
            # Through the DBAPI cursor: psycopg opens the transaction with this statement, and
            # SQLAlchemy's own execute would begin (and fire this event) again.
            cursor = conn.connection.dbapi_connection.cursor()
            try:
                if self._postgres:
                    cursor.execute(_FENCE, (LEASE_NAME, token))
                else:
                    cursor.execute(lease_sqlite.FENCE, lease_sqlite.fence_params(LEASE_NAME, token))
                current = cursor.fetchone() is not None
            finally:
                cursor.close()
            if not current:
                self.is_leader = False
                raise NotLeader(f"not the leader any more: fencing token {token} is stale or expired")

        return fenced
