"""Server secrets kept in the database (`status_secrets`, migration 0016): random, made on first use.

    key = stored_secret(engine, "alert-links")   # bytes; the same for every agent on this database

A signing key must be the same on every agent that serves links (any of them may answer one), so
when the environment does not give one, the first agent to need it makes it and every other reads
that one: the insert is ON CONFLICT DO NOTHING, then whatever row won is read back. A secret is
never logged, shown or put in an error; the caller keeps it in memory only.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from sqlalchemy import Engine, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.storage.models import StatusSecret

SECRETS = StatusSecret.__table__
SECRET_BYTES = 32


def stored_secret(engine: Engine, name: str) -> bytes:
    """The secret called `name`: the stored one, else a new random one stored (race-free across agents)."""
    query = select(SECRETS.c.value).where(SECRETS.c.name == name)
    with engine.begin() as conn:
        value = conn.execute(query).scalar()
        if value is None:
            dialect_insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            conn.execute(
                dialect_insert(SECRETS)
                .values(name=name, value=secrets.token_urlsafe(SECRET_BYTES), created_at=datetime.now(UTC))
                .on_conflict_do_nothing(index_elements=["name"])
            )
            value = conn.execute(query).scalar_one()  # ours, or the one another agent made first
    return value.encode()
