"""The demo's second vantage point (issue 21 item 8): demo-far's own congested hour raises one ticket
about its path, "seen from demo-far only", and pages nobody; its samples carry its agent name."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.config import load_config
from monitor.demo.backfill import Job, backfill
from monitor.demo.incidents import HOUR_S, schedule
from monitor.demo.vantage import CONGESTION_MS, FAR_AGENT, FAR_PATH_MS, far_vantage
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
