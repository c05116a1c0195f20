"""The alert engine against a real database (SQLite and PostgreSQL), fed synthetic samples."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from monitor.alerts import checkpoints
from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.alerts.grouping import GroupPolicy
from monitor.alerts.silences import add_silence
from monitor.storage.models import Alert, DetectorState, NotificationOutbox
from monitor.storage.queries import insert_samples
from monitor.storage.queries.agents import heartbeat_agent

from .conftest import make_config
from .helpers import T0, config_spec, sample, series

M0, M1, M2 = "p/m0@r1:short", "p/m1@r1:short", "p/m2@r1:short"
NO_HOLD = GroupPolicy(group_wait_s=0.0, group_wait_intervals=0.0)


def engine_for(**kw) -> AlertEngine:
    return AlertEngine(EngineOptions(settle_s=0.0, group=kw.pop("group", NO_HOLD), **kw))


def rows(db, table):
    with db.connect() as conn:
        return [r._mapping for r in conn.execute(select(table.__table__).order_by(table.__table__.c.id))]


def outbox(db):
    return [(r["event"], r["payload"]["scope"]["model"], r["payload"]["status"]) for r in rows(db, NotificationOutbox)]


def run_until(alert_engine, db, config, start_s: float, end_s: float, step_s: float = 10.0):
    t = start_s
    while t <= end_s:
        alert_engine.evaluate(db, config, now=T0 + timedelta(seconds=t))
        t += step_s


def shifted(target, *, normal=100.0, high=500.0, before=6, during=8, after=8):
    return series(target, T0, [normal] * before + [high] * during + [normal] * after)


def test_fires_notifies_and_resolves_once_each(db, tmp_path):
    config = make_config(config_spec(models=("m0",)), tmp_path)
    insert_samples(db, shifted(M0))
    alert_engine = engine_for()
    run_until(alert_engine, db, config, 0, 300)
    assert outbox(db) == [("firing", "m0", "firing"), ("resolved", "m0", "resolved")]
    (alert,) = rows(db, Alert)
    assert alert["state"] == "resolved" and alert["scope_kind"] == "target" and alert["scope_key"] == M0
    firing_payload = rows(db, NotificationOutbox)[0]["payload"]
    assert firing_payload["value"] == 500.0 and firing_payload["baseline"] == 300.0  # threshold: the bound
    assert firing_payload["scope"] == {"provider": "p", "model": "m0", "region": "r1", "prompt": "short", "agent": None}
    assert alert["fired_at"] > alert["started_at"] and alert["resolved_at"] > alert["fired_at"]
    # Nothing new to read: a round changes nothing.
    stats = alert_engine.evaluate(db, config, now=T0 + timedelta(seconds=310))
    assert (stats.samples, stats.changes, stats.queued) == (0, 0, 0)


def test_a_restart_neither_loses_nor_repeats_a_page(db, tmp_path):
    config = make_config(config_spec(models=("m0",)), tmp_path)
    insert_samples(db, shifted(M0, during=12))
    first = engine_for()
    run_until(first, db, config, 0, 100)
    assert outbox(db) == [("firing", "m0", "firing")]
    assert {(r["rule"], r["series"]) for r in rows_of(db, DetectorState)} == {("slow", f"{M0}~a1")}
    # Fed more samples after its last checkpoint, then "crashes": its memory is lost.
    run_until(first, db, config, 110, 130)
    second = engine_for()  # a new process: checkpoints + replay
    run_until(second, db, config, 140, 160)
    assert outbox(db) == [("firing", "m0", "firing")]
    run_until(second, db, config, 170, 400)
    assert outbox(db) == [("firing", "m0", "firing"), ("resolved", "m0", "resolved")]
    # The first engine comes back (a former leader): its memory is stale, it reloads, repeats nothing.
    run_until(first, db, config, 410, 430)
    assert len(outbox(db)) == 2 and len(rows(db, Alert)) == 1


def rows_of(db, table):
    with db.connect() as conn:
        return [r._mapping for r in conn.execute(select(table.__table__))]


def test_most_targets_of_a_provider_region_page_once_as_a_group(db, tmp_path):
    config = make_config(config_spec(models=("m0", "m1", "m2")), tmp_path)
    insert_samples(db, shifted(M0) + shifted(M1) + series(M2, T0, [100.0] * 22))
    run_until(engine_for(), db, config, 0, 300)
    assert outbox(db) == [("firing", None, "firing"), ("resolved", None, "resolved")]
    alerts = rows(db, Alert)
    group = [a for a in alerts if a["scope_kind"] == "provider_region"]
    assert len(group) == 1 and group[0]["scope_key"] == "p@r1" and group[0]["model"] is None
    assert "2 of 3 targets" in rows(db, NotificationOutbox)[0]["payload"]["summary"]
    # The per-target alerts are recorded, inhibited: never notified.
    members = [a for a in alerts if a["scope_kind"] == "target"]
    assert {a["scope_key"] for a in members} == {M0, M1}
    assert all(a["last_notified_at"] is None and a["state"] == "resolved" for a in members)


def test_hold_groups_targets_that_fire_a_round_apart(db, tmp_path):
    config = make_config(config_spec(models=("m0", "m1", "m2")), tmp_path)
    late = series(M1, T0, [100.0] * 8 + [500.0] * 6 + [100.0] * 8)  # shifts two samples after m0
    insert_samples(db, shifted(M0) + late + series(M2, T0, [100.0] * 22))
    run_until(engine_for(group=GroupPolicy(group_wait_s=30.0, group_wait_intervals=0.0)), db, config, 0, 300)
    assert [e[:2] for e in outbox(db)] == [("firing", None), ("resolved", None)]


def test_samples_from_an_unhealthy_agent_raise_nothing(db, tmp_path):
    config = make_config(config_spec(models=("m0",)), tmp_path)
    heartbeat_agent(db, "cut-off", healthy=False, version="t", now=T0)
    heartbeat_agent(db, "a1", healthy=True, version="t", now=T0)
    insert_samples(db, shifted(M0, high=9000.0, during=12, after=0)[:6])
    bad = [sample(M0, T0 + timedelta(seconds=55 + 10 * i), 9000.0, agent="cut-off") for i in range(10)]
    good = [sample(M0, T0 + timedelta(seconds=60 + 10 * i), 100.0, agent="a1") for i in range(10)]
    insert_samples(db, bad + good)
    run_until(engine_for(), db, config, 0, 200)
    assert rows(db, Alert) == [] and outbox(db) == []


def test_cancelled_probes_are_not_failures(db, tmp_path):
    rule = {
        "name": "errors",
        "metric": "error_rate",
        "kind": "threshold",
        "above": "20%",
        "window": "60s",
        "min_samples": 3,
        "for_evaluations": 1,
        "resolve_after": 1,
    }
    config = make_config(config_spec(models=("m0", "m1"), rules=[rule]), tmp_path)
    cancelled = [sample(M0, T0 + timedelta(seconds=10 * i), None, ok=False, error_kind="cancelled") for i in range(10)]
    failing = [sample(M1, T0 + timedelta(seconds=10 * i), None, ok=False) for i in range(10)]
    insert_samples(db, cancelled + failing)
    run_until(engine_for(group=GroupPolicy()), db, config, 0, 100)
    assert {a["scope_key"] for a in rows(db, Alert)} == {M1}


def test_database_silence_mutes_notifications_not_state(db, tmp_path):
    config = make_config(config_spec(models=("m0",)), tmp_path)
    with db.begin() as conn:
        add_silence(conn, {"provider": "p", "region": "r1"}, starts_at=T0, ends_at=T0 + timedelta(hours=1), now=T0)
    insert_samples(db, shifted(M0))
    run_until(engine_for(), db, config, 0, 300)
    (alert,) = rows(db, Alert)
    assert alert["state"] == "resolved" and alert["fired_at"] is not None and alert["silenced"]
    assert outbox(db) == []


def test_config_silence_for_another_region_does_not_mute(db, tmp_path):
    silences = [{"match": {"provider": "p", "region": "r2"}, "until": "2030-01-01T00:00:00Z"}]
    config = make_config(config_spec(models=("m0",), regions=("r1", "r2"), silences=silences), tmp_path)
    insert_samples(db, shifted(M0))
    run_until(engine_for(), db, config, 0, 300)
    assert [e[0] for e in outbox(db)] == ["firing", "resolved"]


def test_each_notifier_gets_its_rows_filtered_by_severity(db, tmp_path):
    notifiers = [
        {"name": "everything", "type": "log"},
        {"name": "oncall", "type": "log", "severities": ["page"]},
        {"name": "tickets", "type": "log", "severities": ["ticket"]},
    ]
    rules = config_spec()["alerts"] + [
        {
            "name": "never",
            "metric": "ttft_ms",
            "kind": "threshold",
            "above": 99999,
            "percentile": 50,
            "severity": "ticket",
        }
    ]
    config = make_config(config_spec(models=("m0",), notifiers=notifiers, rules=rules), tmp_path)
    insert_samples(db, shifted(M0))
    run_until(engine_for(), db, config, 0, 300)
    got = sorted((r["notifier"], r["event"]) for r in rows(db, NotificationOutbox))
    assert got == [("everything", "firing"), ("everything", "resolved"), ("oncall", "firing"), ("oncall", "resolved")]


def test_a_rule_removed_from_the_config_resolves_its_alerts(db, tmp_path):
    config = make_config(config_spec(models=("m0",)), tmp_path)
    insert_samples(db, shifted(M0, during=14, after=0))
    alert_engine = engine_for()
    run_until(alert_engine, db, config, 0, 120)
    assert [e[0] for e in outbox(db)] == ["firing"]
    other_rule = {"name": "other", "metric": "ttft_ms", "kind": "threshold", "above": 99999, "percentile": 50}
    run_until(alert_engine, db, make_config(config_spec(models=("m0",), rules=[other_rule]), tmp_path), 130, 130)
    assert [e[0] for e in outbox(db)] == ["firing", "resolved"]
    assert "no longer evaluated" in rows(db, Alert)[0]["summary"]


def test_regression_rule_reports_value_against_the_series_baseline(db, tmp_path):
    rule = {
        "name": "ttft-regression",
        "metric": "ttft_ms",
        "kind": "regression",
        "min_change": "50%",
        "baseline_window": "1h",
    }
    config = make_config(config_spec(models=("m0",), rules=[rule]), tmp_path)
    import random

    rng = random.Random(7)
    values = [100.0 * rng.lognormvariate(0, 0.08) for _ in range(80)] + [
        200.0 * rng.lognormvariate(0, 0.08) for _ in range(10)
    ]
    insert_samples(db, series(M0, T0, values))
    run_until(engine_for(), db, config, 0, 900, step_s=30)
    (row,) = rows(db, NotificationOutbox)
    body = row["payload"]
    assert body["status"] == "firing" and body["metric"] == "ttft_ms"
    assert 90 <= body["baseline"] <= 110 and 170 <= body["value"] <= 230
    fired_at = rows(db, Alert)[0]["fired_at"]
    assert fired_at <= T0 + timedelta(seconds=10 * (80 + 3))  # within 3 samples of the shift (plus one to confirm)


def test_checkpoint_token_lets_a_second_engine_take_over(db, tmp_path):
    config = make_config(config_spec(models=("m0",)), tmp_path)
    insert_samples(db, shifted(M0))
    a, b = engine_for(), engine_for()
    for t in range(0, 310, 10):
        (a if (t // 30) % 2 == 0 else b).evaluate(db, config, now=T0 + timedelta(seconds=t))
    assert [e[0] for e in outbox(db)] == ["firing", "resolved"]
    with db.connect() as conn:
        assert checkpoints.read_token(conn) is not None


def test_repeats_are_numbered_and_stored_once_each(db, tmp_path):
    spec = config_spec(models=("m0",))
    spec["alerts"][0]["repeat_interval"] = "1m"
    config = make_config(spec, tmp_path)
    insert_samples(db, shifted(M0, during=30, after=0))
    alert_engine = engine_for()
    run_until(alert_engine, db, config, 0, 100)
    (firing,) = rows(db, NotificationOutbox)
    for t in (130, 150, 165, 170, 200, 230):  # at most one repeat per minute, whatever the round rate
        alert_engine.evaluate(db, config, now=T0 + timedelta(seconds=t))
    got = [(r["event"], r["event_seq"]) for r in rows(db, NotificationOutbox)]
    assert got == [("firing", 0), ("repeat", 1), ("repeat", 2)]
    assert all(r["payload"]["status"] == "firing" for r in rows(db, NotificationOutbox))
    assert firing["created_at"] < rows(db, NotificationOutbox)[1]["created_at"]
