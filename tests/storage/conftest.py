"""Storage fixtures: the same tests run on a fresh SQLite file and on real PostgreSQL.

PostgreSQL is 127.0.0.1:5432, user postgres (trust auth). The tests create
`firsttoken_test_<random>` databases and drop them at the end of the session.
If the server is unreachable the PostgreSQL tests are skipped locally, but fail
when `CI` is set: CI must never silently lose the database half of the suite.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import Base
from monitor.storage.partitions import list_partitions
from tests.pg import PgServer, pg_url


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
