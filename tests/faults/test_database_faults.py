"""The database goes away, fills the spool, or is migrated under running agents.

The ledger: the simulator logs every request it served (its truth log), and
each probe stores its sample with the request id it got back. So "zero lost,
zero duplicated" is checked exactly: the stored request ids are the served
ones, each once (less what the spool bound dropped, which is counted).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path

import pytest

from monitor.simulator.testing import SimulatorProcess
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.faults.harness import (
    ServiceProcess,
    cli,
    migrate_cli,
    sim_provider,
    stored_samples,
    wait_for,
    write_config,
)
from tests.pg import pg_url

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

OUTAGE_S = 30  # benchmarks/soak.py --db-outage does the full two minutes
INTERVAL_S = 1.0
HEALTHY = [f"sim:ttft=20:itl=2:tokens=6:jitter=0:output_tokens={6 + i}" for i in range(12)]
FAULTY = ["sim:fault=rate_limited", "sim:fault=server_error", "sim:ttft=10:tokens=6:fault=truncate"]


@pytest.fixture
def ledger_sim(tmp_path):
    """A simulator of this test's own, so its truth log holds this test's requests only."""
    log = tmp_path / "truth.jsonl"
    with SimulatorProcess(truth_log=log) as sim:
        yield sim, log


def served(log: Path) -> Counter:
    """Request ids the simulator finished, once the log has stopped growing."""

    def settled():
        first = log.read_text() if log.exists() else ""
        time.sleep(0.5)
        second = log.read_text() if log.exists() else ""
        return second if first == second else None

    text = wait_for(settled, 10, "the truth log to settle")
    return Counter(json.loads(line)["request_id"] for line in text.splitlines() if line)


def stored_ids(database: str) -> Counter:
    return Counter(s["request_id"] for s in stored_samples(database))


def setup_service(tmp_path, sim, pg_server, *, agent: str = "db-faults"):
    name = pg_server.create_database()
    database = pg_url(name)
    config = write_config(
        tmp_path / f"{agent}.yaml",
        database=database,
        agent=agent,
        providers={
            "healthy": sim_provider(sim, HEALTHY, region="calm", api_key="sk-db-faults-healthy"),
            "faulty": sim_provider(sim, FAULTY, region="storm", api_key="sk-db-faults-faulty"),
        },
        interval=f"{INTERVAL_S:g}s",
    )
    return name, database, config


def start(tmp_path, config, agent: str, args: tuple[str, ...] = ()) -> ServiceProcess:
    return ServiceProcess(config, tmp_path, args=("--spool-dir", str(tmp_path / f"spool-{agent}"), *args))


def test_a_database_outage_loses_nothing_and_duplicates_nothing(tmp_path, ledger_sim, pg_server):
    sim, log = ledger_sim
    name, database, config = setup_service(tmp_path, sim, pg_server)
    migrate_cli(config)
    svc = start(tmp_path, config, "db-faults")
    try:
        wait_for(lambda: (svc.health() or {}).get("last_write_at"), 30, "the first write")
        pg_server.set_allow_connections(name, False)
        outage_start = time.time()
        try:
            wait_for(lambda: (svc.health() or {}).get("database_up") is False, 30, "the writer to notice")
            while time.time() - outage_start < OUTAGE_S:  # it keeps answering and spooling
                health = svc.health()
                assert health is not None and svc.alive()
                assert "firsttoken_probes_total" in svc.metrics()
                time.sleep(1)
            spooled = svc.health()["spool_bytes"]
            assert spooled > 0
        finally:
            pg_server.set_allow_connections(name, True)
        outage_end = time.time()
        # Replayed within the writer's backoff (at most 30 s) plus the replay itself.
        wait_for(
            lambda: (h := svc.health()) and h["database_up"] and h["spool_bytes"] == 0 and h["queue_depth"] == 0,
            60,
            "the spool to drain",
        )
        wait_for(lambda: svc.health()["leader"], 30, "leadership to come back")
    finally:
        code = svc.stop()
    assert code == 0, svc.log()[-3000:]
    assert not svc.crash_lines(), "\n".join(svc.crash_lines()[:20])
    logged = svc.log()
    assert len(re.findall(r"database .* unavailable", logged)) == 1, logged[-3000:]
    assert "reachable again" in logged and "replayed" in logged

    ids = stored_ids(database)
    assert max(ids.values()) == 1, [i for i, n in ids.items() if n > 1][:5]  # no duplicates
    assert set(ids) == set(served(log))  # nothing lost, nothing invented
    # Probing went on through the outage, on schedule.
    samples = stored_samples(database)
    for model in HEALTHY:
        during = [
            s
            for s in samples
            if s["target"] == f"healthy/{model}@calm:short"
            and outage_start + 2 <= s["started_at"].timestamp() < outage_end - 1
        ]
        expected = (outage_end - outage_start - 3) / INTERVAL_S
        assert len(during) >= expected - 2 and all(s["ok"] for s in during), (model, len(during), expected)


def test_the_spool_bound_drops_the_oldest_counts_them_and_never_crashes(tmp_path, ledger_sim, pg_server):
    sim, log = ledger_sim
    name, database, config = setup_service(tmp_path, sim, pg_server)
    migrate_cli(config)
    # ~15 samples a second of ~1 KB each: 64 KiB fills within seconds.
    svc = start(tmp_path, config, "db-faults", ("--spool-max-bytes", "64K"))
    try:
        wait_for(lambda: (svc.health() or {}).get("last_write_at"), 30, "the first write")
        pg_server.set_allow_connections(name, False)
        try:
            wait_for(lambda: (svc.health() or {}).get("dropped_samples", 0) > 0, 60, "the spool bound to drop samples")
            time.sleep(5)  # keeps dropping, keeps running
            health = svc.health()
            assert svc.alive() and health["spool_bytes"] <= 64 * 1024
            dropped_metric = re.search(r"^firsttoken_samples_dropped (\S+)$", svc.metrics(), re.M)
            assert dropped_metric and float(dropped_metric.group(1)) > 0
        finally:
            pg_server.set_allow_connections(name, True)
        wait_for(
            lambda: (h := svc.health()) and h["database_up"] and h["spool_bytes"] == 0 and h["queue_depth"] == 0,
            60,
            "the spool to drain",
        )
        dropped = svc.health()["dropped_samples"]
    finally:
        code = svc.stop()
    assert code == 0, svc.log()[-3000:]
    assert not svc.crash_lines(), "\n".join(svc.crash_lines()[:20])
    assert "dropped the oldest segment" in svc.log()

    ids = stored_ids(database)
    truth = served(log)
    assert max(ids.values()) == 1
    assert set(ids) <= set(truth)
    assert len(truth) - len(ids) == dropped  # every loss is counted
    # The oldest went: the samples that survived the outage are its newest.
    arrival = {json.loads(line)["request_id"]: json.loads(line)["arrival_ns"] for line in log.read_text().splitlines()}
    lost = [arrival[i] for i in truth if i not in ids]
    kept_after = [arrival[i] for i in ids if arrival[i] > max(lost)]
    assert lost and len(kept_after) > 10


def test_a_migration_while_two_agents_run(tmp_path, ledger_sim, pg_server):
    sim, log = ledger_sim
    _, database, config_a = setup_service(tmp_path, sim, pg_server, agent="agent-a")
    config_b = tmp_path / "agent-b.yaml"
    config_b.write_text(config_a.read_text().replace('"agent-a"', '"agent-b"'))
    migrate_cli(config_a)
    agents = [start(tmp_path, config_a, "agent-a"), start(tmp_path, config_b, "agent-b")]
    try:
        for svc in agents:
            wait_for(lambda svc=svc: (svc.health() or {}).get("last_write_at"), 30, "the first write")
        wait_for(lambda: sum(bool((a.health() or {}).get("leader")) for a in agents) == 1, 30, "one leader")
        # The newest migration, undone and applied again under live writes: what a
        # rolling upgrade's one-shot `firsttoken db upgrade` does beside old agents.
        engine = make_engine(database)
        try:
            migrate.downgrade(engine, "-1")
        finally:
            engine.dispose()
        started = time.monotonic()
        result = cli("db", "upgrade", "--config", str(config_a), timeout_s=120)
        assert result.returncode == 0, result.stderr
        assert time.monotonic() - started < 60  # never stuck behind the agents' locks
        before = {a.port: a.health()["last_write_at"] for a in agents}
        wait_for(
            lambda: all((h := a.health()) and h["last_write_at"] != before[a.port] for a in agents),
            30,
            "both agents writing after the migration",
        )
        assert all(a.health()["ok"] for a in agents)
    finally:
        codes = [a.stop() for a in agents]
    for svc, code in zip(agents, codes, strict=True):
        assert code == 0, svc.log()[-3000:]
        assert not svc.crash_lines(), "\n".join(svc.crash_lines()[:20])
    ids = stored_ids(database)
    assert max(ids.values()) == 1
    assert set(ids) == set(served(log))


def test_stopped_during_an_outage_the_next_start_replays_the_spool(tmp_path, ledger_sim, pg_server):
    sim, log = ledger_sim
    name, database, config = setup_service(tmp_path, sim, pg_server)
    migrate_cli(config)
    svc = start(tmp_path, config, "db-faults")
    wait_for(lambda: (svc.health() or {}).get("last_write_at"), 30, "the first write")
    pg_server.set_allow_connections(name, False)
    try:
        wait_for(lambda: (svc.health() or {}).get("spool_bytes", 0) > 0, 30, "samples in the spool")
        stopping = time.monotonic()
        code = svc.stop()
        stop_s = time.monotonic() - stopping
    finally:
        pg_server.set_allow_connections(name, True)
    assert code == 0 and not svc.crash_lines(), svc.log()[-3000:]
    # Inside a container's stop timeout (Docker: 10 s), or what is queued in memory dies with a SIGKILL.
    assert stop_s < 10, stop_s
    assert any((tmp_path / "spool-db-faults").glob("*.jsonl"))
    again = start(tmp_path, config, "db-faults")
    try:
        wait_for(lambda: (h := again.health()) and h["spool_bytes"] == 0 and h["queue_depth"] == 0, 60, "replay")
    finally:
        assert again.stop() == 0
    assert not again.crash_lines(), again.log()[-3000:]
    ids = stored_ids(database)
    assert max(ids.values()) == 1
    assert set(ids) == set(served(log))
