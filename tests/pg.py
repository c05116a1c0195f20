"""Throwaway PostgreSQL databases for the tests (127.0.0.1:5432, user postgres, trust auth).

Tests create `firsttoken_test_<random>` databases and drop them at the end of
the session. An unreachable server skips the PostgreSQL tests locally but
fails them when `CI` is set: CI must never silently lose the database half
of the suite.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

PG_HOST = os.environ.get("FIRSTTOKEN_TEST_PGHOST", "127.0.0.1")
PG_PORT = int(os.environ.get("FIRSTTOKEN_TEST_PGPORT", "5432"))
PG_USER = os.environ.get("FIRSTTOKEN_TEST_PGUSER", "postgres")


def pg_url(dbname: str) -> str:
    return f"postgresql+psycopg://{PG_USER}@{PG_HOST}:{PG_PORT}/{dbname}"


class PgServer:
    """Creates throwaway databases and drops them all at the end of the session."""

    def migrated_url(self) -> str:
        """A new throwaway database at the newest migration, by URL (for agents started as processes)."""
        from monitor.storage import migrate
        from monitor.storage.db import make_engine

        url = pg_url(self.create_database())
        engine = make_engine(url)
        try:
            migrate.upgrade(engine)
        finally:
            engine.dispose()
        return url

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
        """Each drop waits on its own files and checkpoint: a session's hundred-odd, a few at a time."""
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(self.drop, self.created))

    def drop(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _unreachable_reason() -> str | None:
    try:
        psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres", connect_timeout=3).close()
    except psycopg.Error as error:
        return f"PostgreSQL at {PG_HOST}:{PG_PORT} unreachable: {str(error).strip().splitlines()[0]}"
    return None


def pg_server_fixture() -> Iterator[PgServer]:
    reason = _unreachable_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the PostgreSQL tests must run)", pytrace=False)
        pytest.skip(reason)
    server = PgServer()
    yield server
    server.drop_all()
