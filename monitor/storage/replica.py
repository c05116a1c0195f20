"""Reads on a streaming replica: `FIRSTTOKEN_READ_DATABASE_URL`.

The dashboard, `firsttoken routes` and `firsttoken samples`, the agent's `/routes`,
status JSON and badges only read: with the variable set they read there, and the
primary keeps its CPU for the writer and the leader. Everything that writes (the
writer, the spool replay, leader work, migrations, silences) uses the database
URL as before, never this one. How far behind the replica is shows on the
dashboard (`replica_lag_s`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from sqlalchemy import Engine, text

from monitor import envvars

ENV_READ_DATABASE_URL = envvars.READ_DATABASE_URL

# On a replica: 0 when it has replayed all it received (an idle primary sends nothing, and the age
# of the last replayed transaction would grow without any lag), else the age of what it last replayed.
_LAG = text(
    "SELECT CASE WHEN NOT pg_is_in_recovery() THEN NULL "
    "WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 "
    "ELSE greatest(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp())) END"
)


def read_database_url(write_url: str, environ: Mapping[str, str] | None = None) -> str:
    """Where reads go: the replica when `FIRSTTOKEN_READ_DATABASE_URL` names one, else `write_url`."""
    environ = os.environ if environ is None else environ
    return environ.get(ENV_READ_DATABASE_URL) or write_url


def make_read_engine(write_url: str, environ: Mapping[str, str] | None = None, **kwargs) -> Engine:
    from monitor.storage.db import make_engine

    return make_engine(read_database_url(write_url, environ), **kwargs)


def replica_lag_s(engine: Engine) -> float | None:
    """Seconds the replica is behind its primary; None when `engine` is not on a replica (or SQLite)."""
    if engine.dialect.name != "postgresql":
        return None
    with engine.connect() as conn:
        lag = conn.execute(_LAG).scalar()
    return None if lag is None else float(lag)
