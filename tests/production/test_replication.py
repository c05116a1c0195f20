"""Two real PostgreSQL clusters in streaming replication (initdb, pg_basebackup -R, pg_ctl promote):
a multi-host URL survives the replica's promotion with nothing lost (issue 22, item 2), and
FIRSTTOKEN_READ_DATABASE_URL sends the read-only paths to the replica, never a write (item 3)."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter

import httpx
import psycopg
import pytest

from monitor.simulator.testing import SimulatorProcess
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.replica import ENV_READ_DATABASE_URL, replica_lag_s
from tests.faults.harness import ServiceProcess, cli, sim_provider, stored_samples, wait_for, write_config
from tests.production.servers import PgCluster

# Two clusters made from scratch (initdb, pg_basebackup): shared by the module's tests, each on a
# database of its own; the failover test, which promotes the replica, runs last and spends them.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

MODELS = [f"sim:ttft=20:itl=2:tokens=5:jitter=0:output_tokens={5 + i}" for i in range(5)]


class Clusters:
    """A primary and its streaming replica, made on first use and again after a promotion."""

    def __init__(self) -> None:
        self.pair: tuple[PgCluster, PgCluster] | None = None
        self.spent = False

    def get(self) -> tuple[PgCluster, PgCluster]:
        if self.pair is None or self.spent:
            self.close()
            primary, replica = PgCluster("primary"), PgCluster("replica")
            self.pair = (primary, replica)  # closed by close() even if a start below fails
            primary.init_primary().start()
            replica.init_replica_of(primary).start()
            self.spent = False
        return self.pair

    def close(self) -> None:
        if self.pair is not None:
            for cluster in reversed(self.pair):
                cluster.close()
            self.pair = None


@pytest.fixture(scope="module")
def clusters():
    holder = Clusters()
    try:
        yield holder
    finally:
        holder.close()


@pytest.fixture
def replicated(clusters):
    """(primary, replica, database): a migrated database of this test's own on the primary, on the replica too."""
    primary, replica = clusters.get()
    database = f"firsttoken_{uuid.uuid4().hex[:8]}"
    with primary.connect() as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    engine = make_engine(primary.url(database))
    migrate.upgrade(engine)
    engine.dispose()

    def replayed() -> bool:
        try:
            with replica.connect(database) as conn:
                return conn.execute("SELECT to_regclass('samples') IS NOT NULL").fetchone()[0]
        except psycopg.OperationalError:  # the database itself not replayed yet
            return False

    wait_for(replayed, 30, "the migrated database on the replica")
    yield primary, replica, database


@pytest.fixture
def ledger_sim(tmp_path):
    log = tmp_path / "truth.jsonl"
    with SimulatorProcess(truth_log=log) as sim:
        yield sim, log


def served(log) -> Counter:
    def settled():
        first = log.read_text() if log.exists() else ""
        time.sleep(0.5)
        return first if first == (log.read_text() if log.exists() else "") else None

    text = wait_for(settled, 10, "the truth log to settle")
    return Counter(json.loads(line)["request_id"] for line in text.splitlines() if line)


def agent_config(tmp_path, sim, database: str):
    return write_config(
        tmp_path / "agent.yaml",
        database=database,
        agent="replicated",
        providers={"sim": sim_provider(sim, MODELS, api_key="sk-replicated")},
        interval="1s",
    )


def test_read_only_paths_read_the_replica_and_its_lag_shows(tmp_path, simulator, replicated):
    primary, replica, database = replicated
    env = {ENV_READ_DATABASE_URL: replica.url(database)}
    config = agent_config(tmp_path, simulator, primary.url(database))
    agent = ServiceProcess(config, tmp_path, args=("--spool-dir", str(tmp_path / "spool")), env=env)
    replica_engine = make_engine(replica.url(database))
    try:
        wait_for(lambda: (agent.health() or {}).get("last_write_at"), 30, "the first write")
        wait_for(lambda: stored_samples(replica.url(database)), 30, "samples replicated")
        assert replica_lag_s(replica_engine) == 0  # caught up
        assert replica_lag_s(make_engine(primary.url(database))) is None  # a primary has no lag to show
        # Replay paused: the replica falls behind while the agent keeps writing to the primary.
        with replica.connect(database) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
        time.sleep(3)
        lag = replica_lag_s(replica_engine)
        assert lag is not None and lag >= 2
        on_primary, on_replica = len(stored_samples(primary.url(database))), len(stored_samples(replica.url(database)))
        assert on_primary > on_replica
        # The agent's read-only endpoints answer from the replica: its (frozen) count, not the primary's.
        assert httpx.get(agent.url("/routes"), timeout=10).status_code == 200
        assert httpx.get(agent.url("/status.json"), timeout=10).status_code == 200
        with replica.connect(database) as conn:
            readers = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = 'firsttoken'",
                (database,),
            ).fetchone()[0]
        assert readers >= 1
        shown = cli("samples", "--config", str(config), "--since", "1h", "--limit", "100000", "--json", env=env)
        assert shown.returncode == 0, shown.stderr
        assert len(shown.stdout.splitlines()) == on_replica  # the replica's frozen view, not the primary's
        routes = cli("routes", "--config", str(config), env=env)
        assert routes.returncode == 0, routes.stderr
    finally:
        code = agent.stop()
        with replica.connect(database) as conn:  # the clusters serve the next test too
            conn.execute("SELECT pg_wal_replay_resume()")
    wait_for(lambda: replica_lag_s(replica_engine) == 0, 30, "the replica to catch up")
    replica_engine.dispose()
    assert code == 0 and not agent.crash_lines(), agent.log()[-3000:]
    assert "read-only" not in agent.log()  # no write ever went to the replica


def test_a_multi_host_url_survives_the_replicas_promotion_with_nothing_lost(tmp_path, ledger_sim, clusters, replicated):
    sim, log = ledger_sim
    primary, replica, database = replicated
    clusters.spent = True  # promoted below: a later test gets new clusters
    failover_url = (
        f"postgresql+psycopg://postgres@/{database}?host=127.0.0.1:{primary.port}&host=127.0.0.1:{replica.port}"
        "&target_session_attrs=read-write"
    )
    agent = ServiceProcess(
        agent_config(tmp_path, sim, failover_url), tmp_path, args=("--spool-dir", str(tmp_path / "spool"))
    )
    try:
        wait_for(lambda: (h := agent.health()) and h["last_write_at"] and h["leader"], 30, "writes and leadership")
        time.sleep(3)
        primary.stop("fast")  # the primary goes (a planned switchover: its WAL reaches the replica first)
        wait_for(lambda: (agent.health() or {}).get("spool_bytes", 0) > 0, 30, "samples spooled while no primary")
        replica.promote()
        promoted_at = agent.health()["last_write_at"]
        wait_for(
            lambda: (h := agent.health()) and h["database_up"] and h["spool_bytes"] == 0 and h["queue_depth"] == 0
            and h["last_write_at"] != promoted_at,
            60,
            "writes on the promoted replica and the spool replayed",
        )  # fmt: skip
        wait_for(lambda: (agent.health() or {}).get("leader"), 40, "leadership on the new primary")
        time.sleep(2)
    finally:
        code = agent.stop()
    assert code == 0 and not agent.crash_lines(), agent.log()[-3000:]
    ids = Counter(s["request_id"] for s in stored_samples(replica.url(database)))
    truth = served(log)
    assert len(truth) > 20
    assert max(ids.values()) == 1 and set(ids) == set(truth)  # nothing lost, nothing twice
