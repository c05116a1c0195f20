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

SQLite gets the same row and token with the host's clock (lease_sqlite.py):
several processes may share one file (the demo's two vantage points do), and
the once-only work must run once there too. As they all run on the file's
host, a lease whose holder's process is gone from that host is taken at once
rather than after it runs out (`died_on_this_host`): a demo killed outright
and started again leads within a poll, not 20 s later.

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

from sqlalchemy import Engine, event

from monitor.leader import lease_postgres, lease_sqlite
from monitor.leader.identity import instance_name
from monitor.storage.db import is_postgres

log = logging.getLogger(__name__)

LEASE_NAME = "leader"
LEASE_TTL_S = 20.0  # a dead leader's lease runs out this long after its last renewal
LEADER_RETRY_S = 5.0  # renew (leader) or look for an expired lease (the others) this often


class NotLeader(RuntimeError):
    """A leader-only transaction was refused: this agent's fencing token is no longer current."""


class LeaderElection:
    def __init__(self, engine: Engine, holder: str | None = None, *, ttl_s: float = LEASE_TTL_S) -> None:
        self._engine = engine
        self.holder = holder or instance_name("firsttoken")
        self.ttl_s = ttl_s
        # The dialect's statements: renew, take, give_up, fence (lease_postgres.py, lease_sqlite.py).
        self._lease = lease_postgres if is_postgres(engine) else lease_sqlite
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
        return self._lease.renew(conn, LEASE_NAME, self.holder, self.token, self.ttl_s)

    def _take(self, conn) -> int | None:
        return self._lease.take(conn, LEASE_NAME, self.holder, self.ttl_s)

    def release(self) -> None:
        """Give the lease up (a clean shutdown): the next agent's poll takes it without waiting it out."""
        if self.token is not None:
            try:
                with self._engine.begin() as conn:
                    self._lease.give_up(conn, LEASE_NAME, self.holder, self.token)
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
                cursor.execute(*self._lease.fence(LEASE_NAME, token))
                current = cursor.fetchone() is not None
            finally:
                cursor.close()
            if not current:
                self.is_leader = False
                raise NotLeader(f"not the leader any more: fencing token {token} is stale or expired")

        return fenced
