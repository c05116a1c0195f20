"""DESIGN §15: a provider outage with errors and slow answers pages once, for the errors; the latency
rule's alerts and the latency SLO's burn alerts are recorded as inhibited — live, on SQLite and
PostgreSQL, and in `firsttoken backtest --samples` over the same samples, which must agree."""

from __future__ import annotations

import csv
import io
import json
import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, options_for
from monitor.sample import write_csv
from monitor.storage.ingest import BatchInserter
from monitor.storage.models import Alert, NotificationOutbox

from .conftest import make_config
from .helpers import T0, config_spec, sample

TARGETS = ("p/m0@r1:short", "p/m1@r1:short")
STEP = timedelta(minutes=1)
HOURS_BEFORE, HOURS_OUT, HOURS_AFTER = 3, 3, 1


def outage_samples():
    """Each target probed every minute: 3 h normal (TTFT ~300 ms), 3 h with every other probe a
    server error and the rest 3x slower, 1 h normal again."""
    rng = random.Random(15)
    out = []
    minutes = 60 * (HOURS_BEFORE + HOURS_OUT + HOURS_AFTER)
    for i in range(minutes):
        in_outage = 60 * HOURS_BEFORE <= i < 60 * (HOURS_BEFORE + HOURS_OUT)
        for n, target in enumerate(TARGETS):
            at = T0 + i * STEP + timedelta(seconds=7 * n)
            ttft_ms = rng.gauss(300.0, 15.0) * (3.0 if in_outage else 1.0)
            failed = in_outage and (i + n) % 2 == 0
            out.append(sample(target, at, ttft_ms, ok=not failed, agent="a1"))
    return out


ERRORS_RULE = {
    "name": "errors",
    "metric": "error_rate",
    "kind": "threshold",
    "above": "20%",
    "window": "5m",
    "min_samples": 3,
    "severity": "page",
}
LATENCY_RULE = {"name": "ttft-regression", "metric": "ttft_ms", "kind": "regression", "min_change": "50%"}


def outage_spec() -> dict:
    spec = config_spec(
        models=("m0", "m1"),
        interval="1m",
        rules=[
            {
                "name": "errors",
                "metric": "error_rate",
                "kind": "threshold",
                "above": "20%",
                "window": "5m",
                "min_samples": 3,
                "severity": "page",
            },
            {
                "name": "ttft-regression",
                "metric": "ttft_ms",
                "kind": "regression",
                "min_change": "50%",
                "severity": "page",
            },
        ],
        notifiers=[{"name": "pager", "type": "log", "severities": ["page"]}],
    )
    spec["slos"] = [
        {"name": "latency", "objective": "99%", "period": "30d", "per": "target", "good": {"ttft_ms": {"below": 600}}}
    ]
    spec["alerting"] = {"evaluate_every": "1m"}
    return spec


def live_run(db, config, samples):
    inserter = BatchInserter(db)
    inserter.insert(samples, now=samples[-1].started_at)
    inserter.close()
    engine = AlertEngine(options_for(config.alerting))
    now = T0
    end = samples[-1].started_at + timedelta(minutes=3)
    while now <= end:
        engine.evaluate(db, config, now=now)
        now += STEP
    with db.connect() as conn:
        alerts = [r._mapping for r in conn.execute(select(Alert.__table__).order_by(Alert.__table__.c.id))]
        outbox = [r._mapping for r in conn.execute(select(NotificationOutbox.__table__))]
    return alerts, outbox


def test_an_outage_pages_once_for_errors_and_records_latency_alerts_as_inhibited(db, tmp_path):
    config = make_config(outage_spec(), tmp_path)
    alerts, outbox = live_run(db, config, outage_samples())
    pages = [(r["payload"]["rule"], r["payload"]["scope"]) for r in outbox if r["event"] == "firing"]
    assert pages == [("errors", {"provider": "p", "model": None, "region": "r1", "prompt": None, "agent": None})]
    by_id = {a["id"]: a for a in alerts}
    (source,) = [a for a in alerts if a["rule"] == "errors" and a["scope_kind"] == "provider_region"]
    inhibited = {(a["rule"], a["scope_key"]) for a in alerts if a["inhibited_by"] is not None}
    assert {("ttft-regression", t) for t in TARGETS} <= inhibited, inhibited
    assert {("slo:latency", t) for t in TARGETS} <= inhibited, inhibited
    for a in alerts:
        if a["rule"] in ("ttft-regression", "slo:latency") and a["scope_kind"] != "provider_region":
            assert by_id[a["inhibited_by"]]["rule"] in ("errors", "ttft-regression"), a
    for target in TARGETS:  # each latency SLO alert by the errors page itself
        (slo,) = [a for a in alerts if a["rule"] == "slo:latency" and a["scope_key"] == target]
        assert slo["inhibited_by"] == source["id"], slo
    assert source["resolved_at"] is not None
    # The latency regression resolved with the outage; the SLO still burns over its longer windows, and
    # stays inhibited: the incident's tail, not a second page the moment the errors stop.
    assert all(a["resolved_at"] is not None for a in alerts if a["rule"] == "ttft-regression")


def test_backtest_samples_replays_the_same_round(tmp_path):
    """The CLI on the exported CSV: the same page, the same inhibited alerts, as the live engine wrote."""
    samples = outage_samples()
    spec = outage_spec()
    spec["database"] = f"sqlite:///{tmp_path / 'live.db'}"
    config_path = tmp_path / "firsttoken.yaml"
    config_path.write_text(json.dumps(spec))
    out = io.StringIO()
    write_csv(samples, out)
    csv_path = tmp_path / "samples.csv"
    csv_path.write_text(out.getvalue())
    command = ["backtest", "--samples", str(csv_path), "--config", str(config_path), "--json"]
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-m", "monitor", *command], capture_output=True, text=True, timeout=300, cwd=root
    )
    assert result.returncode == 0, result.stderr
    changes = [json.loads(line) for line in result.stdout.splitlines()]
    pages = [(c["rule"], c["scope"]) for c in changes if c["change"] == "fired" and c["severity"] == "page"]
    assert pages == [("errors", "p@r1")]
    inhibited = {(c["rule"], c["scope"]) for c in changes if c["change"] == "inhibited"}
    assert {("ttft-regression", t) for t in TARGETS} <= inhibited
    assert {("slo:latency", t) for t in TARGETS} <= inhibited
    assert any(c["change"] == "resolved" and c["scope"] == "p@r1" for c in changes)

    from monitor.storage import migrate
    from monitor.storage.db import make_engine

    live_db = make_engine(spec["database"])
    migrate.upgrade(live_db)
    alerts, _ = live_run(live_db, make_config(spec, tmp_path), samples)
    live_db.dispose()
    severity = {}  # each announced alert's severity after its last change (an SLO escalates)
    for c in changes:
        if c["change"] != "resolved":
            severity[(c["rule"], c["scope"], c["agent"], c["fired_at"])] = c["severity"]
    announced = {(rule, scope, agent, severity[key], fired) for key in severity for rule, scope, agent, fired in [key]}
    table = {
        (a["rule"], a["scope_key"], a["agent"], a["severity"], a["fired_at"].isoformat().replace("+00:00", "Z"))
        for a in alerts
        if a["fired_at"] is not None
    }
    assert announced == {_utc(t) for t in table}


def _utc(row):
    rule, scope, agent, severity, fired = row
    return (rule, scope, agent, severity, fired if fired.endswith("Z") else fired + "Z")


def test_the_samples_csv_reads_back_as_written(tmp_path):
    from monitor.storage.samples_csv import SamplesCsvError, read_samples

    samples = outage_samples()[:50]
    out = io.StringIO()
    write_csv(samples, out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert read_samples(rows) == samples
    rows[5][rows[0].index("ttft_ms")] = "fast"
    try:
        read_samples(rows, "s.csv")
    except SamplesCsvError as exc:
        assert str(exc).startswith("s.csv:6: bad ttft_ms 'fast'")
    else:
        raise AssertionError("a bad cell must be refused")
