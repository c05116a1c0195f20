"""Vantage points through the real alert engine, on SQLite and PostgreSQL (DESIGN §11, issue 21 "Must show").

Two or three agents probe the same targets; samples are stored, the engine
evaluates them round by round as the leader would. A path fault on one agent
must page nothing and raise one vantage ticket naming it; a provider fault
seen from both pages once with both agents and `dominant: provider`.
"""

from __future__ import annotations

import itertools
from datetime import timedelta

from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.alerts.grouping import GroupPolicy
from monitor.storage.models import Alert, DetectorState, NotificationOutbox
from monitor.storage.queries import insert_samples

from .conftest import make_config
from .helpers import T0, config_spec
from .vantage_scenarios import REGRESSION_RULE, between, probes

M0, M1 = "p/m0@r1:short", "p/m1@r1:short"
Q0 = "q/m0@r1:short"
HOURS = 8.0


def config(tmp_path, *, providers=("p",), models=("m0",), rule=None):
    rule = {**REGRESSION_RULE, **(rule or {})}
    return make_config(config_spec(providers=providers, models=models, rules=[rule], interval="1m"), tmp_path)


def run(db, cfg, *, hours: float = HOURS, step_s: float = 300.0, engine: AlertEngine | None = None):
    engine = engine or AlertEngine(EngineOptions(settle_s=0.0, group=GroupPolicy(group_wait_s=0.0)))
    t = step_s
    while t <= hours * 3600 + step_s:
        engine.evaluate(db, cfg, now=T0 + timedelta(seconds=t))
        t += step_s
    return engine


def alerts(db):
    with db.connect() as conn:
        return [r._mapping for r in conn.execute(select(Alert.__table__).order_by(Alert.__table__.c.id))]


def sent(db):
    with db.connect() as conn:
        rows = conn.execute(select(NotificationOutbox.__table__).order_by(NotificationOutbox.__table__.c.id))
        return [(r.event, r.payload) for r in rows]


def test_one_agents_slow_path_pages_nothing_and_tickets_that_agent(db, tmp_path):
    cfg = config(tmp_path)
    slow_b = between(3.0, 5.0, 1.5 * 620.0, 0.0)  # b's path adds 1.5x its usual TTFT: 2.5x for two hours
    insert_samples(db, probes(M0, "a", HOURS) + probes(M0, "b", HOURS, path_extra=slow_b))
    run(db, cfg)
    rows = alerts(db)
    assert [r for r in rows if r["severity"] == "page"] == []
    (ticket,) = [r for r in rows if r["fired_at"] is not None]
    assert ticket["scope_kind"] == "vantage" and ticket["agent"] == "b" and ticket["severity"] == "ticket"
    assert ticket["scope_key"] == f"{M0}~b" and ticket["agents"] == ["b"] and ticket["agents_clear"] == ["a"]
    assert ticket["attribution"]["dominant"] == "network"
    assert ticket["attribution"]["network_ms"] > 500 and abs(ticket["attribution"]["provider_ms"]) < 150
    events = sent(db)
    assert {body["severity"] for _, body in events} == {"ticket"}
    firing = next(body for event, body in events if event == "firing")
    assert firing["scope"]["agent"] == "b" and firing["agents"] == ["b"] and firing["agents_clear"] == ["a"]
    assert "seen from b only; a normal" in firing["summary"] and "mostly the network path" in firing["summary"]
    # One detector per vantage point, checkpointed under target~agent.
    with db.connect() as conn:
        series = {r.series for r in conn.execute(select(DetectorState.__table__.c.series))}
    assert series == {f"{M0}~a", f"{M0}~b"}


def test_a_provider_shift_seen_from_both_pages_once_with_both_agents(db, tmp_path):
    cfg = config(tmp_path)
    twice = between(4.0, 6.0, 2.0, 1.0)
    insert_samples(db, probes(M0, "a", HOURS, provider_factor=twice) + probes(M0, "b", HOURS, provider_factor=twice))
    run(db, cfg)
    pages = [r for r in alerts(db) if r["severity"] == "page"]
    assert len(pages) == 1 and [r for r in alerts(db) if r["severity"] == "ticket"] == []
    (page,) = pages
    assert page["scope_kind"] == "target" and page["agent"] is None and sorted(page["agents"]) == ["a", "b"]
    assert page["attribution"]["dominant"] == "provider" and page["attribution"]["provider_ms"] > 300
    # Within the detector's usual delay: a 2x shift at 1-minute sampling fires within a few samples.
    assert page["fired_at"] - (T0 + timedelta(hours=4)) <= timedelta(minutes=10)
    firing = [body for event, body in sent(db) if event == "firing"]
    assert len(firing) == 1 and firing[0]["scope"]["agent"] is None and "mostly the provider" in firing[0]["summary"]


def test_a_far_away_agent_joining_pages_nothing(db, tmp_path):
    cfg = config(tmp_path)
    far = [s for s in probes(M0, "far", HOURS) if s.started_at >= T0 + timedelta(hours=4)]  # 5x the path, joins
    insert_samples(db, probes(M0, "a", HOURS) + probes(M0, "b", HOURS) + far)
    run(db, cfg)
    assert [r for r in alerts(db) if r["fired_at"] is not None] == []
    assert sent(db) == []


def test_an_agents_path_to_two_providers_is_one_alert_about_the_agent(db, tmp_path):
    cfg = config(tmp_path, providers=("p", "q"))
    slow_b = between(3.0, 5.0, 1.5 * 620.0, 0.0)
    samples = []
    for target in (M0, Q0):
        samples += probes(target, "a", 6.0) + probes(target, "b", 6.0, path_extra=slow_b)
    insert_samples(db, samples)
    run(db, cfg, hours=6.0)
    rows = alerts(db)
    assert [r for r in rows if r["severity"] == "page"] == []
    agent_wide = [r for r in rows if r["scope_kind"] == "agent"]
    assert len(agent_wide) == 1 and agent_wide[0]["agent"] == "b" and agent_wide[0]["provider"] is None
    events = sent(db)
    # The per-target vantage alerts are inhibited by the agent's: one ticket opened, and its resolution.
    assert [(e, b["scope"]["agent"], b["scope"]["model"]) for e, b in events] == [
        ("firing", "b", None),
        ("resolved", "b", None),
    ]
    assert "the path from b degraded towards 2 providers at once (p, q" in events[0][1]["summary"]


def test_confirm_one_agent_pages_on_a_single_vantage_point(db, tmp_path):
    cfg = config(tmp_path, rule={"confirm": {"agents": 1}})
    slow_b = between(3.0, 5.0, 1.5 * 620.0, 0.0)
    insert_samples(db, probes(M0, "a", HOURS) + probes(M0, "b", HOURS, path_extra=slow_b))
    run(db, cfg)
    pages = [r for r in alerts(db) if r["severity"] == "page"]
    assert len(pages) == 1 and pages[0]["agents"] == ["b"] and pages[0]["agents_clear"] == ["a"]


def test_one_agent_behaves_as_before(db, tmp_path):
    """A single vantage point is its own quorum: its shift pages, with no "seen from" to say."""
    cfg = config(tmp_path)
    twice = between(4.0, 6.0, 2.0, 1.0)
    insert_samples(db, probes(M0, "a", HOURS, provider_factor=twice))
    run(db, cfg)
    (page,) = [r for r in alerts(db) if r["fired_at"] is not None]
    assert page["severity"] == "page" and page["scope_kind"] == "target" and page["agents"] == ["a"]
    assert "seen from" not in page["summary"]


def test_one_agent_starting_to_see_a_shift_asks_the_others_to_confirm_once_per_interval(db, tmp_path):
    """Confirmation probes (DESIGN §11): when b's detector leaves ok while a's does not, the leader writes
    one ask for the target, seen from b; not again within the target's interval."""
    from monitor.storage.models import ConfirmationRequest
    from monitor.storage.queries import confirmations

    cfg = config(tmp_path)
    slow_b = between(3.0, 5.0, 1.5 * 620.0, 0.0)
    insert_samples(db, probes(M0, "a", HOURS) + probes(M0, "b", HOURS, path_extra=slow_b))
    run(db, cfg, step_s=60.0, hours=4.0)
    with db.connect() as conn:
        asks = conn.execute(select(ConfirmationRequest.__table__)).all()
    assert asks and all(a.target == M0 and a.seen_from == "b" for a in asks)
    first = min(a.requested_at for a in asks)
    assert T0 + timedelta(hours=3) <= first <= T0 + timedelta(hours=3, minutes=10)
    times = sorted(a.requested_at for a in asks)
    assert all(
        later - earlier >= timedelta(seconds=60) for earlier, later in itertools.pairwise(times)
    )  # 1-minute target
    assert [a.target for a in confirmations.after(db, 0, first)] == [M0] * len(asks)
    # A target probed from one agent only has nobody to ask.
    with db.begin() as conn:
        conn.execute(ConfirmationRequest.__table__.delete())
    single = tmp_path / "single"
    single.mkdir()
    from monitor.storage.models import SampleRow

    with db.begin() as conn:
        conn.execute(SampleRow.__table__.delete().where(SampleRow.__table__.c.agent == "a"))
    run(db, config(single), step_s=300.0, hours=4.0)
    with db.connect() as conn:
        assert conn.execute(select(ConfirmationRequest.__table__)).all() == []


def moved(at_h: float, extra_ms: float):
    """The agent's path from `at_h` on: a move to a farther region (or a new egress) that stays."""
    return lambda t_s: extra_ms if t_s >= at_h * 3600 else 0.0


def test_a_lone_agent_that_moves_pages_nothing_and_tickets_its_own_path(db, tmp_path):
    """One agent, two providers: its path to both gets 500 ms longer for good at 3 h. No provider is at
    fault, and nobody else probes to say so, but both providers' network parts rose at once: one ticket
    about the agent, which resolves when the new level becomes the baseline (issue 21 item 1)."""
    cfg = config(tmp_path, providers=("p", "q"))
    farther = moved(3.0, 500.0)
    insert_samples(db, probes(M0, "a", HOURS, path_extra=farther) + probes(Q0, "a", HOURS, path_extra=farther))
    run(db, cfg)
    rows = alerts(db)
    assert [r for r in rows if r["severity"] == "page"] == []
    (about_agent,) = [r for r in rows if r["scope_kind"] == "agent"]
    assert about_agent["agent"] == "a" and about_agent["severity"] == "ticket"
    assert about_agent["attribution"]["dominant"] == "network" and about_agent["attribution"]["network_ms"] > 300
    events = sent(db)
    assert [(e, b["scope"]["agent"], b["severity"]) for e, b in events] == [
        ("firing", "a", "ticket"),
        ("resolved", "a", "ticket"),
    ]
    assert "no other vantage point probes them: a's own path moved" in events[0][1]["summary"]


def test_a_lone_agents_slower_path_to_one_provider_still_pages(db, tmp_path):
    """Towards one provider only, one agent cannot tell that provider's edge from its route to it: it
    pages as a single agent always did, saying the network part moved."""
    cfg = config(tmp_path, providers=("p", "q"))
    insert_samples(db, probes(M0, "a", HOURS, path_extra=moved(3.0, 500.0)) + probes(Q0, "a", HOURS))
    run(db, cfg)
    (page,) = [r for r in alerts(db) if r["fired_at"] is not None]
    assert page["severity"] == "page" and page["scope_key"] == M0
    assert page["attribution"]["dominant"] == "network"


def test_a_lone_agent_seeing_two_providers_slow_down_pages(db, tmp_path):
    """Both providers' own parts (after the headers) doubling is not a path: the lone agent pages."""
    cfg = config(tmp_path, providers=("p", "q"))
    twice = between(4.0, 6.0, 2.0, 1.0)
    insert_samples(db, probes(M0, "a", HOURS, provider_factor=twice) + probes(Q0, "a", HOURS, provider_factor=twice))
    run(db, cfg)
    pages = [r for r in alerts(db) if r["fired_at"] is not None and r["severity"] == "page"]
    assert {r["scope_key"] for r in pages} == {M0, Q0}
    assert all(r["attribution"]["dominant"] == "provider" for r in pages)
    assert [r for r in alerts(db) if r["scope_kind"] in ("vantage", "agent")] == []
