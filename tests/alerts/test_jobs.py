"""`firsttoken run` registers the alert jobs the leader runs."""

from __future__ import annotations

from monitor.alerts.engine import AlertEngine, alert_jobs
from monitor.alerts.outbox import OutboxDelivery
from monitor.cli import build_parser
from monitor.commands import run as run_command
from monitor.storage import migrate
from monitor.storage.db import make_engine


def test_alert_jobs_evaluate_every_30s_and_deliver_every_5s():
    jobs = alert_jobs()
    assert list(jobs) == ["alerts.evaluate", "alerts.deliver"]  # evaluation first: new pages go out the same tick
    (eval_s, evaluate), (deliver_s, deliver) = jobs.values()
    assert (eval_s, deliver_s) == (30.0, 5.0)
    assert isinstance(evaluate.__self__, AlertEngine) and isinstance(deliver.__self__, OutboxDelivery)


def test_firsttoken_run_hands_the_alert_jobs_to_the_service(tmp_path, monkeypatch):
    db_path = tmp_path / "ft.db"
    engine = make_engine(f"sqlite:///{db_path}")
    migrate.upgrade(engine)
    engine.dispose()
    config = tmp_path / "firsttoken.yaml"
    config.write_text(f"database: sqlite:///{db_path}\n")
    seen = {}

    class FakeService:
        def __init__(self, options, config) -> None:
            seen["jobs"] = dict(options.leader_jobs)

        async def run(self) -> int:
            return 0

    monkeypatch.delenv("FIRSTTOKEN_DATABASE_URL", raising=False)
    monkeypatch.setattr(run_command, "Service", FakeService)
    # Through the real parser, so a new `run` option cannot leave this test behind.
    args = build_parser().parse_args(
        ["run", "--config", str(config), "--listen", "127.0.0.1:0", "--spool-dir", str(tmp_path / "spool")]
    )
    assert run_command.run(args) == 0
    assert {"alerts.evaluate", "alerts.deliver"} <= set(seen["jobs"])
