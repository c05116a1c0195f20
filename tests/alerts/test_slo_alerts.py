"""SLO burn-rate alerts through the leader's round (DESIGN §12) on SQLite and PostgreSQL: they fire at
the probe the replay (monitor.slo, checked against the workbook's formulas in tests/slo) says,
escalate from ticket to page, resolve, carry `slo`, `burn_rate`, `window` and `budget_remaining`,
go through the outbox, silences and severities, and survive a leader restart without a second page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.alerts.grouping import GroupPolicy
from monitor.alerts.slo_backtest import Probe, replay
from monitor.storage.models import Alert, NotificationOutbox
from monitor.storage.queries import insert_samples
from monitor.storage.rollups import hour_floor, rollup_hours

from .conftest import make_config
from .helpers import T0, config_spec, sample

TARGET = "p/m0@r1:short"
STEP_S = 10.0


def slo_config(tmp_path, *, silences=None, per="target"):
    spec = config_spec(
        models=("m0",),
        rules=[],
        notifiers=[{"name": "all", "type": "log"}, {"name": "pager", "type": "log", "severities": ["page"]}],
        silences=silences,
    )
    spec["slos"] = [
        {"name": "chat", "objective": "95%", "period": "12h", "per": per, "good": {"ttft_ms": {"below": 1000}}}
    ]
    return make_config(spec, tmp_path)


def slo_engine() -> AlertEngine:
    """The alert engine, SLO burns in its round (DESIGN §15), with no hold: these tests time the burn."""
    return AlertEngine(EngineOptions(settle_s=0.0, group=GroupPolicy(group_wait_s=0.0, group_wait_intervals=0.0)))


def burn_series(pattern):
    """`pattern`: (minutes, failing every n-th probe (0 none, 1 all)); 10-second probes from T0."""
    out, i = [], 0
    for minutes, every in pattern:
        for _ in range(int(minutes * 60 / STEP_S)):
            bad = every and i % every == 0
            out.append(sample(TARGET, T0 + timedelta(seconds=i * STEP_S), 300.0, ok=not bad))
            i += 1
    return out


def run(evaluator, db, config, start_s, end_s, step_s=30.0):
    t = start_s
    while t <= end_s:
        evaluator.evaluate(db, config, now=T0 + timedelta(seconds=t))
        t += step_s


def alerts(db):
    with db.connect() as conn:
        return [r._mapping for r in conn.execute(select(Alert.__table__).order_by(Alert.__table__.c.id))]


def outbox(db):
    with db.connect() as conn:
        rows = conn.execute(select(NotificationOutbox.__table__).order_by(NotificationOutbox.__table__.c.id))
        return [(r.notifier, r.event, r.payload["severity"], r.payload["status"]) for r in rows]


def expected(samples, config):
    probes = [
        Probe(i, s.started_at.timestamp(), s.ok, s.agent, {"ttft_ms": s.ttft_ms}, s.error_kind)
        for i, s in enumerate(samples)
    ]
    return replay(config.slos[0], probes).events


def test_fires_escalates_and_resolves_with_the_replay_and_notifies_by_severity(db, tmp_path):
    config = slo_config(tmp_path)
    samples = burn_series([(20, 0), (20, 5), (2, 1), (10, 0)])
    insert_samples(db, samples)
    evaluator = slo_engine()
    run(evaluator, db, config, 0, 41 * 60)
    events = expected(samples, config)
    assert [e.event for e in events] == ["firing", "escalated", "resolved"]
    assert outbox(db) == [
        ("all", "firing", "ticket", "firing"),
        ("all", "repeat", "page", "firing"),  # the escalation: a firing body with the new severity
        ("pager", "repeat", "page", "firing"),
    ]
    with db.connect() as conn:
        body = conn.execute(select(NotificationOutbox.__table__.c.payload)).first()[0]
    run(evaluator, db, config, 41 * 60 + 30, 52 * 60)
    (alert,) = alerts(db)
    assert alert["rule"] == "slo:chat" and alert["slo"] == "chat" and alert["scope_key"] == TARGET
    assert alert["state"] == "resolved" and alert["severity"] == "page"
    assert alert["fired_at"] == datetime.fromisoformat(events[0].timestamp.replace("Z", "+00:00"))
    assert alert["resolved_at"] == datetime.fromisoformat(events[2].timestamp.replace("Z", "+00:00"))
    # Resolved: both notifiers told; repeats never delivered are dropped (store.apply_changes).
    assert outbox(db)[-2:] == [("all", "resolved", "page", "resolved"), ("pager", "resolved", "page", "resolved")]
    assert body["slo"] == "chat" and body["window"] == events[0].window
    # The burn rate at the round that sent it (a probe or two after the firing one): still over the factor.
    assert body["burn_rate"] >= body["baseline"] == 1.0
    assert "budget_remaining" in body


def test_budget_remaining_is_the_periods_from_the_rollups(db, tmp_path):
    config = slo_config(tmp_path)
    samples = burn_series([(30, 0), (3, 1)])
    insert_samples(db, samples)
    end = T0 + timedelta(minutes=33)
    rollup_hours(db, T0, end + timedelta(hours=1), now=end)
    slo_engine().evaluate(db, config, now=end)
    (alert,) = alerts(db)
    bad = sum(not s.ok for s in samples)
    # 33 minutes of a 12-hour period: the period's budget, at the pace the probes were seen.
    observed_s = (end - hour_floor(T0)).total_seconds()
    assert alert["budget_remaining"] == pytest.approx(1 - bad / (0.05 * len(samples) * 12 * 3600 / observed_s))


def test_a_restarted_leader_neither_repeats_nor_loses_the_page(db, tmp_path):
    config = slo_config(tmp_path)
    samples = burn_series([(20, 0), (5, 1), (10, 0)])
    insert_samples(db, samples)
    run(slo_engine(), db, config, 0, 23 * 60)
    assert [e[1] for e in outbox(db)] == ["firing", "firing"]
    run(slo_engine(), db, config, 23 * 60 + 30, 35 * 60)  # a new leader, nothing in memory
    assert [e[1] for e in outbox(db)] == ["firing", "firing", "resolved", "resolved"]
    assert len(alerts(db)) == 1


def test_a_silence_mutes_the_page_not_the_alert(db, tmp_path):
    until = (T0 + timedelta(days=1)).astimezone(UTC).isoformat()
    config = slo_config(tmp_path, silences=[{"match": {"provider": "p"}, "until": until}])
    insert_samples(db, burn_series([(20, 0), (5, 1)]))
    run(slo_engine(), db, config, 0, 25 * 60)
    (alert,) = alerts(db)
    assert alert["state"] == "firing" and alert["silenced"]
    assert outbox(db) == []


def test_quorum_of_vantage_points(db, tmp_path):
    """Three agents probe the provider; one alone failing raises nothing, two of three page."""
    config = slo_config(tmp_path, per="provider")
    rows = []
    for i in range(int(25 * 60 / STEP_S)):
        at = T0 + timedelta(seconds=i * STEP_S)
        burning = i * STEP_S >= 20 * 60
        for agent in ("a1", "a2", "a3"):
            rows.append(
                sample(
                    TARGET,
                    at + timedelta(seconds=0.1 * int(agent[1])),
                    300.0,
                    ok=not (burning and agent == "a1"),
                    agent=agent,
                )
            )
    insert_samples(db, rows)
    run(slo_engine(), db, config, 0, 25 * 60)
    assert alerts(db) == []
    more = [
        sample(TARGET, T0 + timedelta(seconds=25 * 60 + i * STEP_S + 0.2), 300.0, ok=False, agent=a)
        for i in range(30)
        for a in ("a1", "a2")
    ]
    insert_samples(db, more)
    run(slo_engine(), db, config, 25 * 60 + 30, 30 * 60)
    (alert,) = alerts(db)
    assert alert["state"] == "firing" and alert["scope_key"] == "p/*" and alert["scope_kind"] == "slo_provider"


def test_cancelled_probes_and_unhealthy_agents_burn_nothing(db, tmp_path):
    """Each stretch alone would page (a single vantage point decides alone): cancelled probes are no
    measurement, and an agent that reaches no provider speaks for nobody."""
    from monitor.storage.queries.agents import heartbeat_agent

    config = slo_config(tmp_path)
    heartbeat_agent(db, "cut-off", healthy=False, version="t", now=T0)
    good = burn_series([(20, 0)])
    late = T0 + timedelta(minutes=20)
    cancelled = [
        sample(TARGET, late + timedelta(seconds=10 * i), None, ok=False, error_kind="cancelled") for i in range(30)
    ]
    cut_off = [sample(TARGET, late + timedelta(seconds=10 * i + 1), None, ok=False, agent="cut-off") for i in range(30)]
    insert_samples(db, good + cancelled + cut_off)
    run(slo_engine(), db, config, 0, 26 * 60)
    assert alerts(db) == [] and outbox(db) == []
    heartbeat_agent(db, "cut-off", healthy=True, version="t", now=T0)  # the same probes, counted, do page
    run(slo_engine(), db, config, 26 * 60 + 30, 27 * 60)
    (alert,) = alerts(db)
    assert alert["state"] == "firing" and alert["severity"] == "page"
