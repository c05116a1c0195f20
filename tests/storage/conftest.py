"""Storage fixtures: the same tests run on a fresh SQLite file and on real PostgreSQL.

PostgreSQL is 127.0.0.1:5432, user postgres (trust auth). The tests create
`firsttoken_test_<random>` databases and drop them at the end of the session.
If the server is unreachable the PostgreSQL tests are skipped locally, but fail
when `CI` is set: CI must never silently lose the database half of the suite.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import Engine, text

from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import Base
from monitor.storage.partitions import list_partitions

PG_HOST = os.environ.get("FIRSTTOKEN_TEST_PGHOST", "127.0.0.1")
PG_PORT = int(os.environ.get("FIRSTTOKEN_TEST_PGPORT", "5432"))
PG_USER = os.environ.get("FIRSTTOKEN_TEST_PGUSER", "postgres")


def pg_url(dbname: str) -> str:
    return f"postgresql+psycopg://{PG_USER}@{PG_HOST}:{PG_PORT}/{dbname}"


class PgServer:
    """Creates throwaway databases and drops them all at the end of the session."""

    def __init__(self) -> None:
        self.created: list[str] = []

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres", autocommit=True)

    def create_database(self) -> str:
        name = f"firsttoken_test_{uuid.uuid4().hex[:12]}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.created.append(name)
        return name

    def set_allow_connections(self, name: str, allow: bool) -> None:
        """Take a database away (and give it back) without touching the server."""
        with self.admin() as conn:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"true" if allow else "false"}')
            if not allow:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )

    def drop_all(self) -> None:
        with self.admin() as conn:
            for name in self.created:
                conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _unreachable_reason() -> str | None:
    try:
        psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres", connect_timeout=3).close()
    except psycopg.Error as error:
        return f"PostgreSQL at {PG_HOST}:{PG_PORT} unreachable: {str(error).strip().splitlines()[0]}"
    return None


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    reason = _unreachable_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the PostgreSQL tests must run)", pytrace=False)
        pytest.skip(reason)
    server = PgServer()
    yield server
    server.drop_all()


@pytest.fixture(scope="session")
def pg_engine(pg_server: PgServer) -> Iterator[Engine]:
    """One migrated database for the session; `engine` resets it per test."""
    engine = make_engine(pg_url(pg_server.create_database()))
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


def reset(engine: Engine) -> None:
    """Empty every table the models know (other packages' tables included)."""
    tables = [t.name for t in Base.metadata.sorted_tables]
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            for name in list_partitions(conn).values():
                conn.execute(text(f"DROP TABLE {name}"))
            conn.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))
        else:
            for table in reversed(tables):
                conn.execute(text(f"DELETE FROM {table}"))


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def engine(backend: str, request, tmp_path) -> Iterator[Engine]:
    """A migrated, empty database of each kind."""
    if backend == "sqlite":
        eng = make_engine(f"sqlite:///{tmp_path / 'firsttoken.db'}")
        migrate.upgrade(eng)
        yield eng
        eng.dispose()
        return
    eng = request.getfixturevalue("pg_engine")
    reset(eng)
    yield eng


@pytest.fixture
def empty_engine(backend: str, request, tmp_path) -> Iterator[Engine]:
    """A brand-new database with no schema at all."""
    if backend == "sqlite":
        eng = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    else:
        server: PgServer = request.getfixturevalue("pg_server")
        eng = make_engine(pg_url(server.create_database()))
    yield eng
    eng.dispose()
