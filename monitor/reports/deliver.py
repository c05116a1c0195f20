"""The leader's `reports` job (DESIGN §17): each `reports:` entry mailed once per period, on its schedule.

Every REPORTS_EVERY_S the leader looks at each entry: the week it owes (`schedule.owed_week`: the
newest whose `every` moment in the entry's time zone has passed), and whether `report_runs` already
says that week was sent. If not, it claims the (entry, week) row, builds the report, sends one mail
to the entry's recipients through `smtp:`, and marks it sent (monitor.reports.runs: the claim, the
lease, and which side of exactly-once a crash falls on: at-least-once, the copy with the same
Message-ID). A week missed while no leader ran is sent once by the next leader; older weeks than
the newest owed are not sent late.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine

from monitor.redact import redact
from monitor.reports import runs
from monitor.reports.schedule import owed_week

log = logging.getLogger(__name__)

REPORTS_EVERY_S = 60.0


@dataclass(frozen=True, slots=True)
class Outcome:
    report: str
    period: str
    status: str  # sent | pending (will retry) | failed


def message_id(report: str, period: str, sender: str) -> str:
    """The same for every attempt at one (report, period): a copy sent after a crash is recognisably it."""
    domain = sender.rpartition("@")[2] or "firsttoken.invalid"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in report)
    return f"<weekly-report.{safe}.{period}@{domain}>"


class ReportSender:
    """`job(engine, config)` for `leader_jobs`; `clock`, `send` and `holder` replaceable for tests."""

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        send: Callable[..., None] | None = None,
        holder: str | None = None,
    ) -> None:
        self.clock = clock
        self._send = send
        self.holder = holder or f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"

    def __call__(self, engine: Engine, config: Any) -> list[Outcome]:
        outcomes = []
        for entry in config.reports:
            now = self.clock()
            week = owed_week(now, entry.schedule, entry.zone)
            with engine.connect() as conn:
                if runs.settled(conn, entry.name, week.label):
                    continue
            claim = runs.claim(engine, entry.name, week.label, self.holder, now)
            if claim is None:  # another leader holds it, or its next try is not due yet
                continue
            outcomes.append(Outcome(entry.name, week.label, self._deliver(engine, config, entry, week, claim)))
        return outcomes

    def _deliver(self, engine: Engine, config: Any, entry: Any, week, claim: runs.Claim) -> str:
        from monitor.mail import MailError, send_mail
        from monitor.reports.weekly import build_weekly_report, mail_message
        from monitor.reports.weekly.report import title_for

        secrets = tuple(config.secrets)
        sender = str(config.smtp.sender)
        mid = message_id(entry.name, week.label, sender)
        try:
            report = build_weekly_report(
                engine, config.targets, week, providers=entry.providers, slos=config.slos,
                maintenance=config.maintenance, title=title_for(config),
            )  # fmt: skip
            message = mail_message(report, sender=sender, to=entry.to, message_id=mid, attach_pdf=entry.attach_pdf)
            (self._send or send_mail)(config.smtp, message, secrets)
        except MailError as exc:
            status = runs.mark_failed(engine, claim, self.clock(), str(exc), retryable=exc.retryable)
            log.warning("report %s %s not sent (%s): %s", entry.name, week.label, status, exc)
            return status
        except Exception as exc:  # the database, the PDF engine: try again later, like a mail server down
            error = redact(f"{type(exc).__name__}: {exc}".splitlines()[0], secrets)
            status = runs.mark_failed(engine, claim, self.clock(), error, retryable=True)
            log.warning("report %s %s not built (%s): %s", entry.name, week.label, status, error)
            return status
        if not runs.mark_sent(engine, claim, self.clock(), recipients=len(entry.to), message_id=mid):
            log.warning("report %s %s was sent, but its claim had passed to another leader", entry.name, week.label)
        log.info("report %s %s sent to %d recipient(s)", entry.name, week.label, len(entry.to))
        return runs.SENT


def send_due_reports(engine: Engine, config: Any) -> list[Outcome]:
    """The leader job: every entry's owed week, sent once."""
    return _SENDER(engine, config)


_SENDER = ReportSender()

__all__ = ["REPORTS_EVERY_S", "Outcome", "ReportSender", "message_id", "send_due_reports"]
