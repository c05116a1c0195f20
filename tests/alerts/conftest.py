"""Alert-test fixtures: a fresh migrated database of each kind, and config building.

Same pattern as tests/storage: SQLite in a temp file, and PostgreSQL through
the session's `pg_server` (tests/pg.py: a throwaway database, skipped when the
server is unreachable unless `CI` is set).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from monitor.config import load_config_text
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import Base
from monitor.storage.partitions import list_partitions
from tests.pg import PgServer, pg_url


@pytest.fixture(scope="session")
def pg_alerts_engine(pg_server: PgServer) -> Iterator[Engine]:
    """One migrated PostgreSQL database for the alert tests; `db` empties it per test."""
    engine = make_engine(pg_url(pg_server.create_database()))
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


def reset(engine: Engine) -> None:
    with engine.begin() as conn:
        for name in list_partitions(conn).values():
            conn.execute(text(f"DROP TABLE {name}"))
        tables = ", ".join(t.name for t in Base.metadata.sorted_tables)
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def db(request, tmp_path) -> Iterator[Engine]:
    """A migrated, empty database: SQLite, then PostgreSQL."""
    if request.param == "sqlite":
        engine = make_engine(f"sqlite:///{tmp_path / 'alerts.db'}")
        migrate.upgrade(engine)
        yield engine
        engine.dispose()
        return
    engine = request.getfixturevalue("pg_alerts_engine")
    reset(engine)
    yield engine


def make_config(spec: dict, tmp_path, env: dict | None = None):
    """A real Config from a dict (JSON is YAML: the loader sees what a user's file would hold)."""
    return load_config_text(json.dumps(spec), base_dir=tmp_path, env=env or {})
