"""Database URLs and engines.

PostgreSQL goes through psycopg 3 (`postgresql+psycopg://`), whatever spelling
the user wrote; SQLite (`sqlite:///path`) is the embedded default and gets WAL
mode so the dashboard can read while the writer writes.
"""

from __future__ import annotations

import json
import os

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from monitor import envvars
from monitor.errors import ConfigurationError
from monitor.storage.pooler import PreparePolicyError, prepare_policy, watch_prepared_statements

DEFAULT_DATABASE_URL = "sqlite:///firsttoken.db"
ENV_DATABASE_URL = envvars.DATABASE_URL
# Failing fast matters more than waiting: the writer spools and retries anyway.
PG_CONNECT_TIMEOUT_S = 5


class SchemaError(RuntimeError):
    """The database is not at the schema this code needs (one-line message)."""


class DatabaseURLError(ConfigurationError, ValueError):
    """A database URL firsttoken cannot use: bad configuration, exit 2, one line."""


def normalize_url(url: str | URL) -> URL:
    """`postgres://` and `postgresql://` (psycopg2 by default) become psycopg 3."""
    try:
        parsed = make_url(url) if isinstance(url, str) else url
    except (ValueError, ArgumentError):
        # Not SQLAlchemy's text ("invalid literal for int()"), and never the URL: it may hold a password.
        raise DatabaseURLError(["database URL: cannot be parsed (check the host, port and quoting)"]) from None
    if parsed.port is not None and not 0 < parsed.port <= 65535:
        raise DatabaseURLError(["database URL: the port must be a number up to 65535"])
    backend = parsed.get_backend_name()
    if backend in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    elif backend != "sqlite":
        raise DatabaseURLError(
            [f"database URL: unsupported database {backend!r}: use postgresql+psycopg://… or sqlite:///path"]
        )
    return parsed


def redact_url(url: str | URL) -> str:
    """For logs and messages: the password never leaves the process."""
    try:
        return normalize_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparseable database url>"


def _compact_json(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def make_engine(url: str | URL, **kwargs) -> Engine:
    parsed = normalize_url(url)
    # Rollup histograms are JSON text: no padding spaces (they add up over 400 days).
    kwargs.setdefault("json_serializer", _compact_json)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed, **kwargs)
    connect_args = {
        "connect_timeout": PG_CONNECT_TIMEOUT_S,
        "application_name": "firsttoken",
        # A half-open TCP connection (server gone without a FIN) must not hang the writer forever.
        "keepalives": 1,
        "keepalives_idle": 30,
        "keepalives_interval": 10,
        "keepalives_count": 3,
    }
    connect_args.update(kwargs.pop("connect_args", {}))
    kwargs.setdefault("pool_pre_ping", True)
    kwargs.setdefault("pool_size", 5)
    try:
        parsed, prepare = prepare_policy(parsed)
    except PreparePolicyError as exc:
        raise DatabaseURLError([str(exc)]) from None
    engine = create_engine(parsed, connect_args=connect_args, **kwargs)
    watch_prepared_statements(engine, prepare)
    return engine


def _sqlite_engine(url: URL, **kwargs) -> Engine:
    path = url.database
    if path and path != ":memory:" and not path.startswith("file:"):
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
    connect_args = {"timeout": 30, "check_same_thread": False}
    connect_args.update(kwargs.pop("connect_args", {}))
    engine = create_engine(url, connect_args=connect_args, **kwargs)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    return engine


def as_engine(engine_or_url: Engine | str | URL) -> tuple[Engine, bool]:
    """(engine, owned): `owned` engines were made here and must be disposed here."""
    if isinstance(engine_or_url, Engine):
        return engine_or_url, False
    return make_engine(engine_or_url), True


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def database_url_from(config_url: str | None = None) -> str:
    """DESIGN §4: the environment wins, then the config file, then the SQLite default."""
    return os.environ.get(ENV_DATABASE_URL) or config_url or DEFAULT_DATABASE_URL


def db_error_line(error: BaseException) -> str:
    """The first line of a database error, the driver's own words where there are any.

    SQLAlchemy's text wraps the driver's and adds a "(Background on this error …)" line;
    every place that reports a database problem in one line uses this.
    """
    lines = str(getattr(error, "orig", None) or error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
