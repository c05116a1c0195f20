"""SLO budgets leave maintenance minutes out (DESIGN §12, §16), on SQLite and PostgreSQL: the report
read from the rollups (whole days from the daily tier, the rest by the hour) equals direct counts over
the raw samples outside the windows; a window over an outage leaves the budget untouched, in the
report and in the live burn-rate alerts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.alerts.grouping import GroupPolicy
from monitor.config import load_config_text
from monitor.maintenance.store import add_window, slo_coverage
from monitor.storage.ingest import BatchInserter
from monitor.storage.models import Alert
from monitor.storage.queries import insert_samples
from monitor.storage.queries.slo_report import monthly_attainment, slo_report
from monitor.storage.rollups import rollup_hours
from tests.alerts.conftest import make_config
from tests.alerts.helpers import config_spec, sample
from tests.storage.test_slo_query import CONFIG, DAY0, NOW, direct, samples

# Not on the hour, one across midnight (a day of the daily tier and a day read by the hour).
WINDOWS = [
    (DAY0 + timedelta(hours=10, minutes=17), DAY0 + timedelta(hours=11, minutes=43), {"provider": "p1"}),
    (DAY0 + timedelta(days=1, hours=22, minutes=5), DAY0 + timedelta(days=2, hours=1, minutes=30), {"model": "m1"}),
]


def inside(s) -> bool:
    labels = {"provider": s.provider, "model": s.model}
    return any(a <= s.started_at < b and all(labels[k] == v for k, v in m.items()) for a, b, m in WINDOWS)


def test_report_equals_direct_counts_outside_the_windows(db):
    data = samples()
    insert_samples(db, data)
    rollup_hours(db, DAY0, NOW, now=NOW + timedelta(hours=1))
    config = load_config_text(CONFIG)
    with db.begin() as conn:  # one stored window, one from the config: both count
        add_window(conn, WINDOWS[0][2], starts_at=WINDOWS[0][0], ends_at=WINDOWS[0][1], note="drill", now=DAY0)
    one_off = {
        "name": "m1-night",
        "match": WINDOWS[1][2],
        "start": WINDOWS[1][0].isoformat(),
        "end": WINDOWS[1][1].isoformat(),
    }
    config = load_config_text(CONFIG + "maintenance:\n  - " + json.dumps(one_off) + "\n")
    coverage = slo_coverage(db, config.maintenance, config.targets, config.slos, NOW)
    report = slo_report(db, config.slos[0], config.targets, NOW, maintenance=coverage)
    expected = direct([s for s in data if not inside(s)], DAY0, 1536.0, key=lambda s: s.target)
    assert {s.scope_key: [s.budget.probes, s.budget.good] for s in report.scopes} == expected
    plain = slo_report(db, config.slos[0], config.targets, NOW)
    assert sum(s.budget.probes for s in plain.scopes) > sum(s.budget.probes for s in report.scopes)
    # The daily bars leave them out too.
    assert report.day_probes.sum() == sum(p for p, _ in expected.values())
    # SLA months (DESIGN §17) likewise.
    rows = monthly_attainment(db, config.slos[:1], config.targets, config.targets, NOW, 1, maintenance=coverage)
    assert {r.scope: [r.probes, r.good] for r in rows} == expected


def outage(target: str, start: datetime, minutes: int, broken: range, agents=("a1", "a2")):
    out = []
    for i in range(minutes):
        for agent in agents:
            out.append(
                sample(
                    target,
                    start + timedelta(minutes=i, seconds=agents.index(agent)),
                    300.0,
                    ok=i not in broken,
                    agent=agent,
                )
            )
    return out


SLO_SPEC = {"name": "avail", "objective": "99%", "period": "1d", "per": "target", "good": {"ttft_ms": {"below": 600}}}


def test_a_window_over_an_outage_leaves_the_budget_untouched(db, tmp_path):
    """y breaks for an hour inside its window, x the same hour outside any: x's budget is spent and
    its burn pages; y's budget is whole and no burn-rate alert is even recorded."""
    start = datetime(2026, 5, 4, tzinfo=UTC)
    broken = range(120, 180)
    spec = config_spec(providers=("x", "y"), models=("m0",), rules=[], interval="1m")
    spec["slos"] = [SLO_SPEC]
    spec["maintenance"] = [
        {
            "name": "y-upgrade",
            "match": {"provider": "y"},
            "start": (start + timedelta(minutes=115)).isoformat(),
            "end": (start + timedelta(minutes=185)).isoformat(),
            "note": "y: database upgrade",
        }
    ]
    config = make_config(spec, tmp_path)
    data = outage("x/m0@r1:short", start, 240, broken) + outage("y/m0@r1:short", start, 240, broken)
    inserter = BatchInserter(db)
    inserter.insert(sorted(data, key=lambda s: s.started_at), now=start + timedelta(hours=4))
    inserter.close()
    engine = AlertEngine(EngineOptions(settle_s=0.0, group=GroupPolicy(group_wait_s=0.0, group_wait_intervals=0.0)))
    now = start
    while now <= start + timedelta(hours=4):
        engine.evaluate(db, config, now=now)
        now += timedelta(minutes=1)
    with db.connect() as conn:
        alerts = [r._mapping for r in conn.execute(select(Alert.__table__))]
    burns = {a["provider"] for a in alerts if a["rule"] == "slo:avail"}
    assert burns == {"x"}, alerts
    end = start + timedelta(hours=4)
    rollup_hours(db, start, end, now=end)
    coverage = slo_coverage(db, config.maintenance, config.targets, config.slos, end)
    report = {s.scope_key: s for s in slo_report(db, config.slos[0], config.targets, end, maintenance=coverage).scopes}
    y, x = report["y/m0@r1:short"].budget, report["x/m0@r1:short"].budget
    assert y.good == y.probes and y.remaining == 1.0
    assert x.probes - x.good == 2 * len(broken) and x.remaining < 0
