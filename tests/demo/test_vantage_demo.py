"""The demo's second vantage point (issue 21 item 8): demo-far's own congested hour raises one ticket
about its path, "seen from demo-far only", and pages nobody; its samples carry its agent name; live,
its path is on the wire (a relay in front of the simulator), steady and congested alike."""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.config import load_config, load_config_text
from monitor.demo.backfill import Job, backfill
from monitor.demo.cast import MODELS
from monitor.demo.demo_config import FAR_PATH_ENV, config_text
from monitor.demo.far_agent import FarAgent
from monitor.demo.incidents import HOUR_S, DemoSource, schedule
from monitor.demo.vantage import (
    CONGESTION_MS,
    FAR_AGENT,
    FAR_PATH_MS,
    LIVE_CONGESTION_AFTER_S,
    LIVE_CONGESTION_S,
    PathSpell,
    Vantage,
    far_vantage,
)
from monitor.eventloop import run_async
from monitor.probe.cache_pair import probe_round
from monitor.probe.transport.lanes import ClientLanes, warm_up
from monitor.simulator import Simulator
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import Alert, NotificationOutbox
from monitor.storage.queries import insert_samples

from .test_backfill import EPOCH_S, demo_config  # noqa: F401  (the fixture)

HISTORY_S = 3 * HOUR_S


def test_demo_far_congestion_is_one_ticket_about_its_path_and_no_page(demo_config, tmp_path):  # noqa: F811
    config = load_config(demo_config)
    ids = tuple(t.id for t in config.targets)
    far = far_vantage(ids, EPOCH_S, HISTORY_S)
    assert len(far.target_ids) == 4 and far.spells[0].extra_ms == CONGESTION_MS
    job = Job(str(demo_config), ids, schedule(EPOCH_S, HISTORY_S), 60.0, "demo", 3, (far,))
    samples = []
    asyncio.run(backfill(job, start_s=EPOCH_S - HISTORY_S, end_s=EPOCH_S, submit=samples.append))
    mine = [s for s in samples if s.agent == FAR_AGENT]
    assert {s.target for s in mine} == set(far.target_ids)
    # Its path is in the headers' time: +120 ms always, +1.2 s more in its congested hour.
    spell = far.spells[0]
    near = {(s.target, s.started_at): s for s in samples if s.agent == "demo" and s.ok}
    quiet = [s.ttfb_ms - near[(s.target, s.started_at)].ttfb_ms for s in mine
             if s.ok and (s.target, s.started_at) in near and s.started_at.timestamp() < spell.start_s]  # fmt: skip
    assert quiet and min(quiet) > FAR_PATH_MS * 0.9

    db = make_engine(f"sqlite:///{tmp_path / 'demo.db'}")
    migrate.upgrade(db)
    insert_samples(db, samples)
    engine = AlertEngine(EngineOptions(settle_s=0.0))
    t = EPOCH_S - HISTORY_S + 300
    while t <= EPOCH_S + 300:
        engine.evaluate(db, config, now=datetime.fromtimestamp(t, UTC))
        t += 300
    with db.connect() as conn:
        alerts = [r._mapping for r in conn.execute(select(Alert.__table__))]
        sent = [r.payload for r in conn.execute(select(NotificationOutbox.__table__))]
    begin, end = (datetime.fromtimestamp(x, UTC) for x in (spell.start_s, spell.end_s + 900))
    (ticket,) = [a for a in alerts if a["scope_kind"] == "agent" and a["fired_at"] is not None]
    assert ticket["agent"] == FAR_AGENT and ticket["severity"] == "ticket"
    # Each of its targets as seen from demo-far had a vantage alert, recorded and folded into the agent's.
    vantage = [a for a in alerts if a["scope_kind"] == "vantage" and a["fired_at"] is not None]
    assert {a["scope_key"].split("~")[0] for a in vantage} <= set(far.target_ids)
    assert all(a["agent"] == FAR_AGENT and a["severity"] == "ticket" for a in vantage)
    assert begin <= ticket["started_at"] <= begin + timedelta(minutes=20)
    assert ticket["attribution"]["dominant"] == "network"
    far_targets = set(far.target_ids)
    paged = [a for a in alerts if a["severity"] == "page" and a["scope_key"] in far_targets
             and a["fired_at"] is not None and begin <= a["started_at"] < end]  # fmt: skip
    assert paged == []
    bodies = [b for b in sent if b.get("scope", {}).get("agent") == FAR_AGENT and b["status"] == "firing"]
    assert len(bodies) == 1 and "the path from demo-far degraded towards 2 providers" in bodies[0]["summary"]


def test_demo_fars_live_spell_comes_after_the_history_and_is_its_own():
    far = far_vantage(("sim-openai/gpt-4o@us-east:short",), EPOCH_S, HISTORY_S)
    history, live = far.spells
    assert history.end_s <= EPOCH_S < live.start_s == EPOCH_S + LIVE_CONGESTION_AFTER_S
    assert live.end_s - live.start_s == LIVE_CONGESTION_S and live.extra_ms == CONGESTION_MS
    assert far.path_at(EPOCH_S) == FAR_PATH_MS and far.path_at(live.start_s + 1) == FAR_PATH_MS + CONGESTION_MS


def test_live_demo_fars_path_is_on_the_wire_steady_and_congested(demo_config, tmp_path):  # noqa: F811
    """Real sockets: the demo's simulator, and FarAgent's relay in front of it playing the vantage's path
    half each way. demo-far's time to headers and TTFT carry +120 ms, and +1.32 s during a spell."""
    wanted = ("sim-openai/gpt-4o-mini@us-east:short", "sim-anthropic/claude-haiku-4-5@us-east:short")
    now_s = time.time()
    steady = Vantage(FAR_AGENT, wanted, FAR_PATH_MS)
    congested = Vantage(FAR_AGENT, wanted, FAR_PATH_MS, (PathSpell(now_s - 60, now_s + 600, CONGESTION_MS),))
    rounds = 4

    async def main() -> dict[str, list]:
        await warm_up()
        # Without jitter, spikes or the daily cycle: whatever differs between the paths is the path.
        steady_models = {m: dataclasses.replace(b, jitter=0.0, spike_probability=0.0) for m, b in MODELS.items()}
        simulator = Simulator(source=DemoSource((), steady_models, diurnal_amplitude=0.0), seed=5)
        port = await simulator.start()
        relays = {
            name: FarAgent(v, str(demo_config), port).relay for name, v in (("far", steady), ("spell", congested))
        }
        text = config_text(simulator_url=f"http://127.0.0.1:{port}", database_url="sqlite:///unused.db")
        try:
            targets = {}
            for name, relay in (("near", None), *relays.items()):
                env = {} if relay is None else {FAR_PATH_ENV: f"http://127.0.0.1:{await relay.start()}"}
                config = load_config_text(text, base_dir=demo_config.parent, env=env)
                targets[name] = [t for t in config.targets if t.id in wanted]
            out: dict[str, list] = {name: [] for name in targets}
            async with ClientLanes() as lanes:

                async def one(name, target):
                    async with lanes.lane(target.base_url) as client:
                        (sample,) = await probe_round(client, target, agent=name)
                        out[name].append(sample)

                for _ in range(rounds):
                    await asyncio.gather(*(one(name, t) for name, ts in targets.items() for t in ts))
            return out
        finally:
            for relay in relays.values():
                await relay.close()
            await simulator.stop()

    samples = run_async(main())
    assert all(s.ok for ss in samples.values() for s in ss), samples

    def median(name: str, target: str, metric: str) -> float:
        return statistics.median(getattr(s, metric) for s in samples[name] if s.target == target)

    for name, path_ms in (("far", FAR_PATH_MS), ("spell", FAR_PATH_MS + CONGESTION_MS)):
        assert {s.target for s in samples[name]} == set(wanted)
        for target in wanted:
            for metric in ("ttfb_ms", "ttft_ms"):  # the network part, and the first token behind it
                added = median(name, target, metric) - median("near", target, metric)
                assert path_ms * 0.95 <= added <= path_ms + 60, (name, target, metric, added)
        assert max(s.connect_ms or 0 for s in samples[name]) < 50  # loopback: the path is after the handshake
