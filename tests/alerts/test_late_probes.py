"""A probe is written when it ends, up to its timeout after it started: a slow or timed-out probe lands
in the database after faster probes that started later. The engine reads back from its cursors by the
part of the timeout `settle` does not cover, so such a probe is judged, once (SQLite and PostgreSQL).

- a vantage point new to a target whose every probe times out (its path broke before its first probe
  was read) gets its ticket: without the read-back its probes were always older than the other
  agent's cursor and never reached a detector;
- an SLO over several targets counts a timeout written after the other targets' probes moved the
  scope's cursor on, and counts no probe twice.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.alerts.grouping import GroupPolicy
from monitor.storage.models import Alert
from monitor.storage.queries import insert_samples

from .conftest import make_config
from .helpers import T0, config_spec, sample

TARGET = "p/m0@r1:short"
OTHER = "p/m1@r1:short"
STEP_S = 10.0
TIMEOUT_S = 30.0  # each failing probe is written this long after it started
ERRORS = {"name": "errors", "metric": "error_rate", "kind": "threshold", "above": "30%", "window": "2m",
          "min_samples": 3, "for_evaluations": 2, "resolve_after": 2, "severity": "page"}  # fmt: skip


def engine(settle_s: float = 0.0) -> AlertEngine:
    return AlertEngine(EngineOptions(settle_s=settle_s, group=GroupPolicy(group_wait_s=0.0, group_wait_intervals=0.0)))


def alerts(db):
    with db.connect() as conn:
        return [r._mapping for r in conn.execute(select(Alert.__table__).order_by(Alert.__table__.c.id))]


def live_run(db, config, fast, slow, rounds_s, settle_s=0.0):
    """Rounds at `rounds_s` (seconds from T0); before each, what has ended by then is written: `fast`
    probes at once, `slow` ones TIMEOUT_S after they started."""
    evaluator, written = engine(settle_s), set()
    for t in rounds_s:
        now = T0 + timedelta(seconds=t)
        due = [
            s
            for s in (*fast, *slow)
            if id(s) not in written and s.started_at + timedelta(seconds=TIMEOUT_S if s in slow else 0) <= now
        ]
        insert_samples(db, due)
        written.update(id(s) for s in due)
        evaluator.evaluate(db, config, now=now)
    return evaluator


@pytest.mark.parametrize("settle_s", [0.0, 15.0])  # 15 s: only probes of 10 s or more (or failed) are read again
def test_a_new_vantage_points_timeouts_are_judged_and_ticket_it(db, tmp_path, settle_s):
    spec = config_spec(models=("m0",), rules=[ERRORS], interval="10s")
    spec["defaults"] = {"timeout": f"{TIMEOUT_S:.0f}s", "ttft_timeout": "20s"}
    config = make_config(spec, tmp_path)
    n = 60
    fast = [sample(TARGET, T0 + timedelta(seconds=i * STEP_S), 200.0, agent="a") for i in range(n)]
    # b's path broke before it ever probed: every probe is a timeout, written 30 s after it started.
    slow = [
        sample(TARGET, T0 + timedelta(seconds=300 + i * STEP_S + 3), None, ok=False, agent="b", error_kind="timeout")
        for i in range(n - 30)
    ]
    evaluator = live_run(db, config, fast, slow, [5.0 * k for k in range(1, 2 * n + 20)], settle_s)
    (ticket,) = [r for r in alerts(db) if r["fired_at"] is not None]
    assert ticket["scope_kind"] == "vantage" and ticket["agent"] == "b" and ticket["severity"] == "ticket"
    assert evaluator._read_to[(TARGET, "b")] == slow[-1].started_at  # every timeout of b's was read


def test_an_slo_counts_a_late_timeout_once(db, tmp_path):
    spec = config_spec(models=("m0", "m1"), rules=[], interval="10s")
    spec["defaults"] = {"timeout": f"{TIMEOUT_S:.0f}s", "ttft_timeout": "20s"}
    spec["slos"] = [{"name": "chat", "objective": "95%", "period": "12h", "per": "provider"}]
    config = make_config(spec, tmp_path)
    start = 20 * 60  # 20 minutes of good probes on both targets, then TARGET's probes all time out
    fast = [
        sample(t, T0 + timedelta(seconds=i * STEP_S + k), 200.0)
        for i in range(150)
        for k, t in enumerate((TARGET, OTHER))
    ]
    fast = [s for s in fast if s.target == OTHER or s.started_at < T0 + timedelta(seconds=start)]
    slow = [
        sample(TARGET, T0 + timedelta(seconds=start + i * STEP_S), None, ok=False, error_kind="timeout")
        for i in range(30)
    ]
    evaluator = live_run(db, config, fast, slow, [30.0 * k for k in range(1, 60)])
    (alert,) = alerts(db)
    assert alert["state"] == "firing" and alert["scope_kind"] == "slo_provider"
    # Every probe counted once, though each round read back over probes it had already counted.
    ((_key, series),) = evaluator._burns._series.items()  # the engine's SLO memory: one scope, both targets
    counts = series.burn.agents["a1"]
    bad, total = counts.counts(series.burn.lengths_s[-1])
    assert (bad, total) == (30, len(fast) + 30)
