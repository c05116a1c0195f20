"""DESIGN §16, issue 33's Must-show: a maintenance window added from the command line over provider y,
y broken for both agents, pages nobody (the alerts are recorded `muted: maintenance`, no outbox row)
while x, broken too, pages; the window is listed among the active ones (what the status site shows
as under maintenance). On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.alerts.grouping import GroupPolicy
from monitor.cli import main
from monitor.maintenance.store import active_windows
from monitor.storage.ingest import BatchInserter
from monitor.storage.models import Alert, NotificationOutbox
from tests.alerts.conftest import make_config
from tests.alerts.helpers import config_spec, sample

ERRORS = {
    "name": "errors",
    "metric": "error_rate",
    "kind": "threshold",
    "above": "20%",
    "window": "2m",
    "min_samples": 3,
    "for_evaluations": 1,
    "resolve_after": 2,
    "severity": "page",
}
TARGETS = ("x/m0@r1:short", "y/m0@r1:short")


def test_a_window_added_from_the_cli_mutes_y_and_lists_as_active(db, tmp_path, monkeypatch, capsys):
    spec = config_spec(providers=("x", "y"), models=("m0",), rules=[ERRORS], interval="10s")
    config = make_config(spec, tmp_path)
    (tmp_path / "firsttoken.yaml").write_text("{}")  # no config windows: only the one added below
    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", db.url.render_as_string(hide_password=False))
    argv = ["maintenance", "add", "--match", "provider=y", "--for", "2h", "--note", "y: database upgrade"]
    assert main([*argv, "--config", str(tmp_path / "firsttoken.yaml")]) == 0
    assert capsys.readouterr().out.startswith("maintenance 1 added: provider=y now until ")

    # Both providers break for both agents, from a minute on, inside the window (it began at the real now).
    base = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=1)
    samples = []
    for i in range(60):  # 10 minutes, every 10 s
        at = base + timedelta(seconds=10 * i)
        broken = 12 <= i < 48
        for n, target in enumerate(TARGETS):
            for agent in ("a1", "a2"):
                samples.append(sample(target, at + timedelta(seconds=n), 300.0, ok=not broken, agent=agent))
    inserter = BatchInserter(db)
    inserter.insert(samples, now=samples[-1].started_at)
    inserter.close()
    engine = AlertEngine(EngineOptions(settle_s=0.0, group=GroupPolicy(group_wait_s=0.0, group_wait_intervals=0.0)))
    now = base
    while now <= base + timedelta(minutes=12):
        engine.evaluate(db, config, now=now)
        now += timedelta(seconds=30)

    with db.connect() as conn:
        alerts = [r._mapping for r in conn.execute(select(Alert.__table__))]
        outbox = [r._mapping for r in conn.execute(select(NotificationOutbox.__table__))]
        windows = active_windows(conn, config.maintenance, base + timedelta(minutes=5))
    y_alerts = [a for a in alerts if a["provider"] == "y" and a["fired_at"] is not None]
    x_alerts = [a for a in alerts if a["provider"] == "x" and a["fired_at"] is not None]
    assert y_alerts and all(a["muted"] == "maintenance" and a["silenced"] for a in y_alerts), y_alerts
    assert x_alerts and all(a["muted"] is None for a in x_alerts)
    paged = {r["payload"]["scope"]["provider"] for r in outbox}
    assert paged == {"x"}  # y's outage pages nobody; x's does
    assert all(a["last_notified_at"] is None for a in y_alerts)
    (window,) = windows
    assert (window.source, window.id, dict(window.match), window.note) == (
        "database",
        1,
        {"provider": "y"},
        "y: database upgrade",
    )
    assert window.kind == "maintenance"
