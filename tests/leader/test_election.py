"""Several agents on one database, PostgreSQL or SQLite: exactly one leader, a new one when it dies, and a
deposed one fenced off. (SQLite too: the demo runs two agents on one file.)"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import text

from monitor.leader.election import LeaderElection, NotLeader
from monitor.leader.identity import instance_name
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.pg import pg_url

POSTGRES = pytest.mark.postgres


@pytest.fixture(scope="module")
def migrated_name(pg_server):
    name = pg_server.create_database()
    engine = make_engine(pg_url(name))
    migrate.upgrade(engine)
    engine.dispose()
    return name


@pytest.fixture
def pg_database(migrated_name):
    """The module's migrated database with no lease in it."""
    url = pg_url(migrated_name)
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM leader_lease"))
    engine.dispose()
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=POSTGRES)])
def database(request, tmp_path):
    """A migrated database with no lease in it; each agent below gets an engine (a pool) of its own."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_database")
    url = f"sqlite:///{tmp_path / 'lease.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    return url


@pytest.fixture
def elections(database):
    made: list[LeaderElection] = []

    def make(holder: str, ttl_s: float = 20.0) -> LeaderElection:
        election = LeaderElection(make_engine(database), holder, ttl_s=ttl_s)
        made.append(election)
        return election

    yield make
    for election in made:
        election.release()
        election._engine.dispose()


def lease_row(url: str):
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT holder, token FROM leader_lease")).one()
    finally:
        engine.dispose()


def test_one_leader_among_agents_and_takeover_when_it_dies(elections, database):
    agents = [elections(f"agent-{i}", ttl_s=1.0) for i in range(3)]
    assert not any(a.is_leader for a in agents)  # nobody leads before a poll, SQLite included
    results = [a.poll() for a in agents]
    assert results.count(True) == 1
    leader = agents[results.index(True)]
    # Polling again keeps the same leader, under the same token: no flapping.
    for _ in range(3):
        assert [a.poll() for a in agents] == results
    assert lease_row(database) == (leader.holder, leader.token)
    # The leader's process dies: it stops renewing, and its lease runs out.
    survivors = [a for a in agents if a is not leader]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(a.poll() for a in survivors):
        time.sleep(0.2)
    assert [a.is_leader for a in survivors].count(True) == 1
    new = next(a for a in survivors if a.is_leader)
    assert new.token == leader.token + 1  # every change of holder bumps the fencing token
    # The old leader comes back (a long pause, not a death): it finds the lease taken.
    assert not leader.poll() and leader.token is None


def test_released_lease_is_taken_by_the_next_poll(elections):
    first, second = elections("first"), elections("second")
    assert first.poll() and not second.poll()
    first.release()
    assert second.poll()  # no waiting out the 20 s lease after a clean shutdown


def test_agents_racing_for_an_expired_lease_elect_exactly_one(elections):
    old = elections("old", ttl_s=0.3)
    assert old.poll()
    time.sleep(0.5)  # old died: its lease has run out
    racers = [elections(f"racer-{i}") for i in range(4)]
    start = threading.Barrier(len(racers))
    won: list[bool] = [False] * len(racers)

    def race(i: int) -> None:
        start.wait()
        won[i] = racers[i].poll()

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(racers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert won.count(True) == 1, won
    assert racers[won.index(True)].token == old.token + 1


def test_a_deposed_leader_cannot_write(elections):
    old = elections("old", ttl_s=0.5)
    assert old.poll()
    fenced = old.fenced_engine()
    with fenced.begin() as conn:
        conn.execute(text("CREATE TABLE IF NOT EXISTS fence_probe (n int)"))
    time.sleep(0.8)  # old stalls past its lease (a GC pause, a partition) ...
    new = elections("new")
    assert new.poll()  # ... and another agent takes over
    # old still believes it leads: it has not polled since. Its next write is refused all the same.
    assert old.is_leader
    with pytest.raises(NotLeader), fenced.begin() as conn:
        conn.execute(text("INSERT INTO fence_probe VALUES (1)"))
    assert not old.is_leader
    with new.fenced_engine().begin() as conn:
        conn.execute(text("INSERT INTO fence_probe VALUES (2)"))
        assert conn.execute(text("SELECT n FROM fence_probe")).scalars().all() == [2]
        conn.execute(text("DROP TABLE fence_probe"))


@POSTGRES
@pytest.mark.parametrize("database", ["postgres"], indirect=True)  # pg_sleep: a write held open
def test_a_takeover_waits_for_the_old_leaders_write_in_flight(elections):
    old = elections("old", ttl_s=0.5)
    assert old.poll()
    fenced = old.fenced_engine()
    new = elections("new")
    committed_at: list[float] = []
    taken_at: list[float] = []
    started = threading.Event()

    def slow_write() -> None:
        with fenced.begin() as conn:
            started.set()
            conn.execute(text("SELECT pg_sleep(1.2)"))
        committed_at.append(time.monotonic())

    writer = threading.Thread(target=slow_write)
    writer.start()
    started.wait(5)
    time.sleep(0.7)  # the old lease expires while its write is still open
    # The take-over blocks behind the fenced transaction (lock_timeout 2 s), so it never
    # overlaps a write checked under the old token.
    assert new.poll()
    taken_at.append(time.monotonic())
    writer.join()
    assert committed_at[0] <= taken_at[0]


@POSTGRES
def test_the_leader_holds_no_open_transaction(pg_server):
    # Regression: the keep-alive was never committed, so the leader sat "idle in
    # transaction" for as long as it led; a server with idle_in_transaction_session_timeout
    # (common on managed Postgres) killed the session, and leadership flapped with it.
    name = pg_server.create_database()
    engine = make_engine(pg_url(name))
    migrate.upgrade(engine)
    engine.dispose()
    with pg_server.admin() as conn:
        conn.execute(f"ALTER DATABASE \"{name}\" SET idle_in_transaction_session_timeout = '500ms'")
    election = LeaderElection(make_engine(pg_url(name)))
    try:
        assert election.poll()
        token = election.token
        for _ in range(3):
            assert election.poll(), "lost leadership to the idle-in-transaction timeout"
            time.sleep(1)
        assert election.poll() and election.token == token
    finally:
        election.release()


def _holder(pid: int, host: str | None = None) -> str:
    return f"gone/{host or socket.gethostname()}/{pid}/0badc0de"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: the pid is free
    return child.pid


def test_sqlite_a_lease_whose_holder_died_on_this_host_is_taken_at_once(tmp_path):
    """Every process of a SQLite file runs on its host: a demo killed outright and started again
    leads at its first poll instead of 20 s later. A holder alive, or on another host, keeps it."""
    url = f"sqlite:///{tmp_path / 'lease.db'}"
    migrate.upgrade(make_engine(url))
    made = []

    def election(holder):
        made.append(LeaderElection(make_engine(url), holder, ttl_s=60.0))
        return made[-1]

    try:
        assert election(_holder(_dead_pid(), host="another-host")).poll()
        assert not election(instance_name("demo")).poll()  # another host's pid says nothing here
        with make_engine(url).begin() as conn:
            conn.execute(text("DELETE FROM leader_lease"))
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            assert election(_holder(sleeper.pid)).poll()
            assert not election(instance_name("demo")).poll()  # alive: its lease runs out as usual
        finally:
            sleeper.kill()
            sleeper.wait()
        new = election(instance_name("demo"))
        assert new.poll() and new.token == 2  # its process is gone: taken at once, token bumped
        assert lease_row(url) == (new.holder, 2)
    finally:
        for e in made:
            e._engine.dispose()


@POSTGRES
def test_postgres_keeps_a_dead_holders_lease_until_it_runs_out(pg_database):
    """Agents of one PostgreSQL database run on many hosts (and containers share host names), so
    there a lease is only ever taken once it has run out."""
    first = LeaderElection(make_engine(pg_database), _holder(_dead_pid()), ttl_s=60.0)
    second = LeaderElection(make_engine(pg_database), "second", ttl_s=60.0)
    try:
        assert first.poll() and not second.poll()
    finally:
        first._engine.dispose()
        second._engine.dispose()
