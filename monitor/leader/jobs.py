"""The leader's jobs: every piece of once-only work, in one list.

`firsttoken run` and the demo both start a `monitor.agent.service.Service`, and the service
schedules exactly this list, leader-only, in this order (alert evaluation before delivery, so a
new page goes out on the same tick). Each job is `fn(engine, config)`: `engine` is the fenced
engine (monitor.leader.election: a deposed leader's transaction is refused), `config` the running
one, reloads included. The timings are read once, from the config handed in here (its `alerting:`
block), when the service starts: the demo's quicker rounds come from the config it writes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Engine

from monitor.config import Config

ROLLUP_EVERY_S = 60.0
RETENTION_EVERY_S = 3600.0

LeaderJob = Callable[[Engine, Config], object]


def leader_jobs(config: Config) -> dict[str, tuple[float, LeaderJob]]:
    """name -> (interval in seconds, job) for everything the leader runs."""
    # Imported here: `firsttoken --help` and every other command need none of the alert engine.
    from monitor.alerts.engine import alert_jobs_for
    from monitor.official.poll import POLL_EVERY_S, poll_status_pages
    from monitor.reports.deliver import REPORTS_EVERY_S, send_due_reports
    from monitor.subscriptions.outbox import subscription_jobs_for

    alerting = config.alerting
    return {
        "rollups": (ROLLUP_EVERY_S, roll_up),
        "retention": (RETENTION_EVERY_S, keep_house),
        **alert_jobs_for(alerting),  # rules and SLOs, one round (DESIGN §15)
        **subscription_jobs_for(alerting),  # incident updates to status subscribers (DESIGN §16)
        "status-pages": (POLL_EVERY_S, poll_status_pages),  # providers' official incidents (monitor.official)
        "reports": (REPORTS_EVERY_S, send_due_reports),  # `reports:` mailed once per period (DESIGN §17)
    }


def roll_up(engine: Engine, config: Config) -> None:
    """The recent hours' rollups, from the raw samples."""
    from monitor.storage import rollup_recent

    rollup_recent(engine)


def keep_house(engine: Engine, config: Config) -> None:
    """Partitions ahead (PostgreSQL), then what `retention:` no longer keeps deleted."""
    from monitor.storage import apply_retention, ensure_partitions_ahead

    if engine.dialect.name == "postgresql":
        ensure_partitions_ahead(engine, datetime.now(UTC))
    apply_retention(engine, raw_s=config.retention.raw_s, rollups_s=config.retention.rollups_s)
