"""Once-only work across agents: a PostgreSQL advisory lock elects the leader.

Any number of `firsttoken run` processes share one database; rollups,
retention and alert evaluation must run once. The leader holds a session
advisory lock on a dedicated connection. If its process dies, PostgreSQL
drops the connection and the lock with it; the others try every
`LEADER_RETRY_S`, so one takes over within that time. TCP keepalives on the
connection bound how long a leader on a dead network keeps the lock.
On SQLite there is one process, and it is the leader.
"""

from __future__ import annotations

import logging

from sqlalchemy import Engine, text

log = logging.getLogger(__name__)

# 'firsttok' as a 64-bit key: stable, and unlikely to collide with an app's locks.
LOCK_KEY = int.from_bytes(b"firsttok", "big") & 0x7FFF_FFFF_FFFF_FFFF
LEADER_RETRY_S = 15.0


class LeaderElection:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._conn = None
        self.is_leader = engine.dialect.name != "postgresql"

    def poll(self) -> bool:
        """Keep or try to take the lock. Blocking: call from a worker thread."""
        if self._engine.dialect.name != "postgresql":
            return True
        try:
            if self._conn is None:
                self._conn = self._engine.connect()
            if self.is_leader:
                self._conn.execute(text("SELECT 1"))  # still connected: still holding the lock
                # Never left "idle in transaction": an idle_in_transaction_session_timeout
                # would end the session, and the lock (leadership) with it.
                self._conn.commit()
            else:
                got = self._conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": LOCK_KEY}).scalar()
                self._conn.commit()
                if got:
                    log.info("this agent is now the leader")
                self.is_leader = bool(got)
        except Exception as exc:  # database down: nobody here may act as leader
            if self.is_leader:
                log.warning("lost leadership: %s", type(exc).__name__)
            self.is_leader = False
            self._drop()
        return self.is_leader

    def release(self) -> None:
        if self._conn is not None and self.is_leader:
            try:
                self._conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": LOCK_KEY})
                self._conn.commit()
            except Exception:
                log.debug("unlock failed; closing the connection frees the lock anyway")
        self.is_leader = self._engine.dialect.name != "postgresql"
        self._drop()

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.invalidate()
                self._conn.close()
            except Exception:
                log.debug("closing a dead leader connection failed")
            self._conn = None
