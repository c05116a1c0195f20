"""PostgreSQL behind a transaction pooler: no server-side prepared statements.

psycopg 3 prepares a statement on the server after it has run
`prepare_threshold` (5) times on a connection. Behind PgBouncer in
`pool_mode = transaction` (Supabase, Neon, RDS Proxy-style setups) the next
transaction may run on another server session, where `_pg3_N` does not exist,
and the batch fails. So prepared statements are off whenever a pooler sits
between us and PostgreSQL:

- `?prepare_threshold=none` in the database URL turns them off, `=N` sets psycopg's
  threshold, `=auto` (the default) detects: a new connection asks the server
  which port its backend listens on (`inet_server_port()`); a different port from
  the one we dialled, or a server reached over a Unix socket while we dialled TCP,
  means something relays the connection, and prepared statements stay off on it.
  A port-mapping proxy that is not a pooler is taken for one: that costs a little
  speed, never a sample.

The option is firsttoken's: it is taken out of the URL before libpq sees it.
"""

from __future__ import annotations

import logging

from sqlalchemy import Engine, event
from sqlalchemy.engine import URL

log = logging.getLogger(__name__)

URL_OPTION = "prepare_threshold"
AUTO = "auto"
_OFF = ("none", "off")


class PreparePolicyError(ValueError):
    """A `prepare_threshold` URL option firsttoken cannot read."""


def prepare_policy(url: URL) -> tuple[URL, str | int | None]:
    """(the URL without our option, the policy): AUTO, None (off) or psycopg's threshold."""
    raw = url.query.get(URL_OPTION)
    if raw is None:
        return url, AUTO
    url = url.difference_update_query([URL_OPTION])
    value = (raw[-1] if isinstance(raw, tuple) else raw).strip().lower()
    if value == AUTO:
        return url, AUTO
    if value in _OFF:
        return url, None
    if value.isdigit():
        return url, int(value)
    raise PreparePolicyError(f"database URL: {URL_OPTION} must be auto, none or a whole number, got {value!r}")


def relayed(server_port: int | None, dialled_host: str | None, dialled_port: int | None) -> bool:
    """Is the server's backend not the one we dialled? (Pure: the connect hook feeds it.)"""
    over_unix_socket = not dialled_host or dialled_host.startswith("/")
    if server_port is None:  # the backend was reached over a Unix socket
        return not over_unix_socket
    return dialled_port is not None and server_port != dialled_port


def watch_prepared_statements(engine: Engine, policy: str | int | None) -> None:
    """Set each new psycopg connection's `prepare_threshold` by the policy."""
    announced = []

    @event.listens_for(engine, "connect")
    def _set_threshold(dbapi_conn, _record) -> None:
        if policy != AUTO:
            dbapi_conn.prepare_threshold = policy
            return
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute("SELECT inet_server_port()")
            server_port = cursor.fetchone()[0]
        finally:
            cursor.close()
            dbapi_conn.rollback()  # leave no transaction open: a pooler would pin the session to us
        info = dbapi_conn.info
        if relayed(server_port, info.host, info.port):
            dbapi_conn.prepare_threshold = None
            if not announced:
                announced.append(True)
                log.info(
                    "PostgreSQL is relayed (a pooler?): dialled port %s, server port %s; "
                    "server-side prepared statements off (URL option %s=N to force them)",
                    info.port,
                    server_port,
                    URL_OPTION,
                )
