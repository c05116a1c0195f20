"""The MCP tools' database connection: read-only twice over.

The URL is FIRSTTOKEN_MCP_DATABASE_URL, else FIRSTTOKEN_READ_DATABASE_URL (a streaming replica),
else FIRSTTOKEN_DASHBOARD_DATABASE_URL (the read-only role docker compose creates for the
dashboard), else the service's own; and whichever role it
is, every session is opened read-only (PostgreSQL `default_transaction_read_only`, SQLite
`query_only`), so no tool, bug or injected argument can write.
"""

from __future__ import annotations

import os

from sqlalchemy import Engine, event

from monitor import envvars
from monitor.storage.db import make_engine
from monitor.storage.replica import ENV_READ_DATABASE_URL

ENV_MCP_DATABASE_URL = envvars.MCP_DATABASE_URL
ENV_READ_ONLY_DATABASE_URL = envvars.DASHBOARD_DATABASE_URL


def read_only_url(service_url: str, environ=os.environ) -> str:
    # A streaming replica (FIRSTTOKEN_READ_DATABASE_URL) before the primary's read-only role.
    for name in (ENV_MCP_DATABASE_URL, ENV_READ_DATABASE_URL, ENV_READ_ONLY_DATABASE_URL):
        value = (environ.get(name) or "").strip()
        if value:
            return value
    return service_url


def read_only_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = make_engine(url)

        @event.listens_for(engine, "connect")
        def _query_only(dbapi_conn, _record) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA query_only = ON")
            cur.close()

        return engine
    return make_engine(
        url,
        pool_size=2,
        connect_args={"options": "-c default_transaction_read_only=on", "application_name": "firsttoken-mcp"},
    )
