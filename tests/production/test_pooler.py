"""Through PgBouncer in `pool_mode = transaction`: no session state the pooler can lose (issue 22, item 1)."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import text

from monitor.leader.election import LeaderElection
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.pg import pg_url

pytestmark = [pytest.mark.postgres, pytest.mark.integration]

QUERY = text("SELECT count(*) FROM pg_class WHERE relname = :name")


@pytest.fixture(scope="module")
def database(pg_server) -> str:
    name = pg_server.create_database()
    engine = make_engine(pg_url(name))
    migrate.upgrade(engine)
    engine.dispose()
    return name


def run_across_sessions(engine, rounds: int = 12) -> None:
    """The same statement on one client connection while another client holds the server session it
    last used, so the pooler hands it another one: what a busy pooler does all day."""
    with engine.connect() as mine, engine.connect() as other:
        for _ in range(rounds):
            mine.execute(QUERY, {"name": "samples"}).scalar()
            mine.commit()
            # PgBouncer reuses the most recently freed server session (LIFO): `other` takes it now.
            other.execute(text("SELECT 1"))
            mine.execute(QUERY, {"name": "samples"}).scalar()
            mine.commit()
            other.commit()


def test_psycopg_prepared_statements_break_through_the_pooler_when_forced(pgbouncer, database):
    # The failure the issue reports, reproduced: psycopg prepares (here at once), the next
    # transaction runs on another server session, where the statement is missing, or another
    # client's `_pg3_0` already sits.
    engine = make_engine(pgbouncer.url(database, prepare_threshold="0"), pool_pre_ping=False)
    try:
        with pytest.raises(Exception, match=r"prepared statement .* (does not exist|already exists)") as raised:
            run_across_sessions(engine)
        lost = (psycopg.errors.InvalidSqlStatementName, psycopg.errors.DuplicatePreparedStatement)
        assert isinstance(raised.value.orig, lost)
    finally:
        engine.dispose()


@pytest.mark.parametrize("option", [{}, {"prepare_threshold": "none"}], ids=["detected", "url-option"])
def test_prepared_statements_are_off_through_the_pooler(pgbouncer, database, option):
    engine = make_engine(pgbouncer.url(database, **option))
    try:
        run_across_sessions(engine)
        with engine.connect() as conn:
            assert conn.connection.dbapi_connection.prepare_threshold is None
    finally:
        engine.dispose()


def test_prepared_statements_stay_on_when_direct(database):
    engine = make_engine(pg_url(database))
    try:
        with engine.connect() as conn:
            assert conn.connection.dbapi_connection.prepare_threshold == 5  # psycopg's default
    finally:
        engine.dispose()


def test_one_leader_through_the_pooler_and_fenced_writes(pgbouncer, database):
    # On landed main both agents reported themselves leader in 21 of 27 polls: the advisory
    # lock was held by a pooled server session, and it is re-entrant.
    agents = [LeaderElection(make_engine(pgbouncer.url(database)), f"pooled-{i}") for i in range(2)]
    try:
        for _ in range(15):
            assert sum(a.poll() for a in agents) == 1
        leader = next(a for a in agents if a.is_leader)
        for _ in range(5):  # leader-only transactions check the token through the pooler too
            with leader.fenced_engine().begin() as conn:
                assert conn.execute(text("SELECT token FROM leader_lease")).scalar() == leader.token
        leader.release()
        follower = next(a for a in agents if a is not leader)
        assert follower.poll()
    finally:
        for a in agents:
            a.release()
            a._engine.dispose()
