"""Several agents on one PostgreSQL: exactly one leader, and a new one when it dies."""

from __future__ import annotations

import time

import pytest

from monitor.agent.leader import LeaderElection
from monitor.storage.db import make_engine
from tests.pg import pg_url


@pytest.fixture
def pg_database(pg_server):
    return pg_url(pg_server.create_database())


def test_one_leader_among_agents_and_takeover_when_it_dies(pg_database):
    engines = [make_engine(pg_database) for _ in range(3)]
    elections = [LeaderElection(e) for e in engines]
    try:
        results = [e.poll() for e in elections]
        assert results.count(True) == 1
        leader = results.index(True)
        # Polling again keeps the same leader: no flapping.
        assert [e.poll() for e in elections] == results
        # The leader's process dies: its connection (and the lock) go away.
        elections[leader]._conn.invalidate()
        elections[leader]._conn = None
        engines[leader].dispose()
        survivors = [e for i, e in enumerate(elections) if i != leader]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(e.poll() for e in survivors):
            time.sleep(0.2)
        assert [e.is_leader for e in survivors].count(True) == 1
    finally:
        for e in elections:
            e.release()
        for engine in engines:
            engine.dispose()


def test_released_lock_is_taken_by_the_next_poll(pg_database):
    first, second = LeaderElection(make_engine(pg_database)), LeaderElection(make_engine(pg_database))
    try:
        assert first.poll() and not second.poll()
        first.release()
        assert second.poll()
    finally:
        first.release()
        second.release()


def test_sqlite_is_always_its_own_leader(tmp_path):
    election = LeaderElection(make_engine(f"sqlite:///{tmp_path / 'x.db'}"))
    assert election.is_leader and election.poll()


def test_the_leader_holds_no_open_transaction(pg_server):
    # Regression: the keep-alive `SELECT 1` was never committed, so the leader sat
    # "idle in transaction" for as long as it led; a server with
    # idle_in_transaction_session_timeout (common on managed Postgres) killed the
    # session, and leadership flapped with it.
    name = pg_server.create_database()
    with pg_server.admin() as conn:
        conn.execute(f"ALTER DATABASE \"{name}\" SET idle_in_transaction_session_timeout = '500ms'")
    election = LeaderElection(make_engine(pg_url(name)))
    try:
        assert election.poll()
        for _ in range(3):
            assert election.poll(), "lost leadership to the idle-in-transaction timeout"
            time.sleep(1)
        assert election.poll()
    finally:
        election.release()
