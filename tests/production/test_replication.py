"""Two real PostgreSQL clusters in streaming replication (initdb, pg_basebackup -R, pg_ctl promote):
a multi-host URL survives the replica's promotion with nothing lost (issue 22, item 2), and
FIRSTTOKEN_READ_DATABASE_URL sends the read-only paths to the replica, never a write (item 3)."""

from __future__ import annotations

import json
import time
from collections import Counter

import httpx
import pytest

from monitor.simulator.testing import SimulatorProcess
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.replica import ENV_READ_DATABASE_URL, replica_lag_s
from tests.faults.harness import ServiceProcess, cli, sim_provider, stored_samples, wait_for, write_config
from tests.production.servers import PgCluster

# Two clusters made from scratch (initdb, pg_basebackup) per test: minutes on a loaded 2-core machine.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

DB = "firsttoken"
MODELS = [f"sim:ttft=20:itl=2:tokens=5:jitter=0:output_tokens={5 + i}" for i in range(5)]


@pytest.fixture
def replicated():
    """A primary with a database `firsttoken` (migrated) and a streaming replica of it."""
    primary, replica = PgCluster("primary"), PgCluster("replica")
    try:
        primary.init_primary().start()
        with primary.connect() as conn:
            conn.execute(f'CREATE DATABASE "{DB}"')
        engine = make_engine(primary.url(DB))
        migrate.upgrade(engine)
        engine.dispose()
        replica.init_replica_of(primary).start()
        yield primary, replica
    finally:
        replica.close()
        primary.close()


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


def test_a_multi_host_url_survives_the_replicas_promotion_with_nothing_lost(tmp_path, ledger_sim, replicated):
    sim, log = ledger_sim
    primary, replica = replicated
    failover_url = (
        f"postgresql+psycopg://postgres@/{DB}?host=127.0.0.1:{primary.port}&host=127.0.0.1:{replica.port}"
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
    ids = Counter(s["request_id"] for s in stored_samples(replica.url(DB)))
    truth = served(log)
    assert len(truth) > 20
    assert max(ids.values()) == 1 and set(ids) == set(truth)  # nothing lost, nothing twice


def test_read_only_paths_read_the_replica_and_its_lag_shows(tmp_path, simulator, replicated):
    primary, replica = replicated
    env = {ENV_READ_DATABASE_URL: replica.url(DB)}
    config = agent_config(tmp_path, simulator, primary.url(DB))
    agent = ServiceProcess(config, tmp_path, args=("--spool-dir", str(tmp_path / "spool")), env=env)
    replica_engine = make_engine(replica.url(DB))
    try:
        wait_for(lambda: (agent.health() or {}).get("last_write_at"), 30, "the first write")
        wait_for(lambda: stored_samples(replica.url(DB)), 30, "samples replicated")
        assert replica_lag_s(replica_engine) == 0  # caught up
        assert replica_lag_s(make_engine(primary.url(DB))) is None  # a primary has no lag to show
        # Replay paused: the replica falls behind while the agent keeps writing to the primary.
        with replica.connect(DB) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
        time.sleep(3)
        lag = replica_lag_s(replica_engine)
        assert lag is not None and lag >= 2
        on_primary, on_replica = len(stored_samples(primary.url(DB))), len(stored_samples(replica.url(DB)))
        assert on_primary > on_replica
        # The agent's read-only endpoints answer from the replica: its (frozen) count, not the primary's.
        assert httpx.get(agent.url("/routes"), timeout=10).status_code == 200
        assert httpx.get(agent.url("/status.json"), timeout=10).status_code == 200
        with replica.connect(DB) as conn:
            readers = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = 'firsttoken'", (DB,)
            ).fetchone()[0]
        assert readers >= 1
        shown = cli("samples", "--config", str(config), "--since", "1h", "--limit", "100000", "--json", env=env)
        assert shown.returncode == 0, shown.stderr
        assert len(shown.stdout.splitlines()) == on_replica  # the replica's frozen view, not the primary's
        routes = cli("routes", "--config", str(config), env=env)
        assert routes.returncode == 0, routes.stderr
        with replica.connect(DB) as conn:
            conn.execute("SELECT pg_wal_replay_resume()")
        wait_for(lambda: replica_lag_s(replica_engine) == 0, 30, "the replica to catch up")
    finally:
        code = agent.stop()
        replica_engine.dispose()
    assert code == 0 and not agent.crash_lines(), agent.log()[-3000:]
    assert "read-only" not in agent.log()  # no write ever went to the replica
