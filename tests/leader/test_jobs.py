"""The leader's one list of jobs (monitor.leader.jobs): what `firsttoken run`, the demo and tests all run."""

from __future__ import annotations

from monitor.alerts.engine import AlertEngine
from monitor.alerts.outbox import OutboxDelivery
from monitor.cli import build_parser
from monitor.commands import run as run_command
from monitor.config import load_config_text
from monitor.leader.jobs import RETENTION_EVERY_S, ROLLUP_EVERY_S, keep_house, leader_jobs, roll_up
from monitor.official.poll import POLL_EVERY_S, poll_status_pages
from monitor.reports.deliver import REPORTS_EVERY_S, send_due_reports
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.subscriptions.outbox import SubscriberDelivery


def test_the_list_runs_at_the_alerting_timings_of_the_config_it_is_given():
    config = load_config_text("database: sqlite:///x.db\nalerting: {evaluate_every: 7s, deliver_every: 3s}\n")
    jobs = leader_jobs(config)
    # Evaluation before delivery: a new page goes out on the same tick.
    assert list(jobs) == [
        "rollups", "retention", "alerts.evaluate", "alerts.deliver", "status.deliver", "status-pages", "reports",
    ]  # fmt: skip
    assert jobs["reports"] == (REPORTS_EVERY_S, send_due_reports)  # `reports:` mailed once per period (DESIGN §17)
    assert jobs["rollups"] == (ROLLUP_EVERY_S, roll_up) and jobs["retention"] == (RETENTION_EVERY_S, keep_house)
    assert jobs["status-pages"] == (POLL_EVERY_S, poll_status_pages)
    assert jobs["alerts.evaluate"][0] == 7.0 and isinstance(jobs["alerts.evaluate"][1].__self__, AlertEngine)
    assert jobs["alerts.deliver"][0] == 3.0 and isinstance(jobs["alerts.deliver"][1].__self__, OutboxDelivery)
    # Incident updates to status subscribers (DESIGN §16), at the same pace as the alert outbox.
    assert jobs["status.deliver"][0] == 3.0 and isinstance(jobs["status.deliver"][1].__self__, SubscriberDelivery)


def test_housekeeping_runs_on_sqlite(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'ft.db'}")
    migrate.upgrade(engine)
    config = load_config_text(f"database: sqlite:///{tmp_path / 'ft.db'}\n")
    try:
        roll_up(engine, config)
        keep_house(engine, config)
    finally:
        engine.dispose()


def test_firsttoken_run_hands_the_service_the_config_its_jobs_are_timed_by(tmp_path, monkeypatch):
    db_path = tmp_path / "ft.db"
    engine = make_engine(f"sqlite:///{db_path}")
    migrate.upgrade(engine)
    engine.dispose()
    config = tmp_path / "firsttoken.yaml"
    config.write_text(f"database: sqlite:///{db_path}\nalerting: {{evaluate_every: 7s}}\n")
    seen = {}

    class FakeService:
        def __init__(self, options, config) -> None:
            seen["config"] = config

        async def run(self) -> int:
            return 0

    monkeypatch.delenv("FIRSTTOKEN_DATABASE_URL", raising=False)
    monkeypatch.setattr("monitor.agent.service.Service", FakeService)  # `run` imports it when it runs
    # Through the real parser, so a new `run` option cannot leave this test behind.
    args = build_parser().parse_args(
        ["run", "--config", str(config), "--listen", "127.0.0.1:0", "--spool-dir", str(tmp_path / "spool")]
    )
    assert run_command.run(args) == 0
    assert leader_jobs(seen["config"])["alerts.evaluate"][0] == 7.0
