"""The once-per-period record of scheduled reports (DESIGN §17): `report_runs`, one row per (report, period).

A leader sends a due report in three steps, each its own short transaction:

1. claim: insert the (report, period) row if it is not there (ON CONFLICT DO NOTHING: the unique key
   makes a second leader's insert a no-op), then take it with a compare-and-set: `attempts + 1`, this
   agent as `holder` and a lease `lease_until = now + LEASE_S`, only where it is `pending`, its lease
   has ended and `attempts` is still what was read. Two leaders racing (or one that was deposed and
   one elected) never both hold it: on PostgreSQL the second UPDATE waits on the row lock and then
   finds the lease taken; SQLite runs one writer at a time.
2. send, outside any transaction (SMTP), with a Message-ID made of (report, period) only.
3. mark, guarded by the claim (`attempts`): `sent` once the server accepted the message; after a
   failure the row goes back to `pending` with the next try's time in `lease_until` (exponential
   backoff), or `failed` after MAX_ATTEMPTS or when the server refused it for good (5xx).

Which side of exactly-once: at-least-once. A leader that dies after the SMTP server accepted the
mail and before step 3 committed (or stalls until deposed: the fenced engine then refuses its mark) leaves a claim that ends after LEASE_S; the next leader sends the
report again, with the same Message-ID (mail clients that thread or de-duplicate by it show one).
The other choice, marking before sending, would lose the week's report to the same crash, and a
missing report goes unnoticed where a second copy does not. No crash-free run ever sends twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.storage.models import ReportRun

RUNS = ReportRun.__table__
PENDING, SENT, FAILED = "pending", "sent", "failed"
LEASE_S = 600.0  # building a week's report and one SMTP session take seconds; a dead leader's claim ends after this
MAX_ATTEMPTS = 8
RETRY_BASE_S, RETRY_MAX_S = 60.0, 3600.0
MAX_ERROR_CHARS = 500


@dataclass(frozen=True, slots=True)
class Claim:
    id: int
    report: str
    period: str
    attempts: int  # after the claim: the guard of every later write
    holder: str


@dataclass(frozen=True, slots=True)
class RunView:
    report: str
    period: str
    status: str
    attempts: int
    holder: str | None
    lease_until: datetime
    sent_at: datetime | None
    recipients: int
    message_id: str | None
    last_error: str | None


def _insert(conn: Connection):
    return pg_insert(RUNS) if conn.dialect.name == "postgresql" else sqlite_insert(RUNS)


def settled(conn: Connection, report: str, period: str) -> bool:
    """Whether (report, period) was sent or given up on: nothing more to do for it."""
    status = conn.execute(
        select(RUNS.c.status).where(RUNS.c.report == report, RUNS.c.period == period)
    ).scalar_one_or_none()
    return status in (SENT, FAILED)


def claim(
    engine: Engine, report: str, period: str, holder: str, now: datetime, lease_s: float = LEASE_S
) -> Claim | None:
    """The (report, period) row, claimed for `holder` until now + lease_s; None when it is sent, failed,
    held by a live claim, or waiting for its next try."""
    with engine.begin() as conn:
        conn.execute(
            _insert(conn)
            .values(report=report, period=period, status=PENDING, attempts=0, lease_until=now, created_at=now)
            .on_conflict_do_nothing(index_elements=["report", "period"])
        )
        row = conn.execute(select(RUNS).where(RUNS.c.report == report, RUNS.c.period == period)).one()
        if row.status != PENDING or row.lease_until > now:
            return None
        got = conn.execute(
            update(RUNS)
            .where(
                RUNS.c.id == row.id,
                RUNS.c.status == PENDING,
                RUNS.c.attempts == row.attempts,
                RUNS.c.lease_until <= now,
            )
            .values(attempts=row.attempts + 1, holder=holder, lease_until=now + timedelta(seconds=lease_s))
        ).rowcount
    return Claim(row.id, report, period, row.attempts + 1, holder) if got == 1 else None


def _settle(engine: Engine, claim_: Claim, **values) -> bool:
    with engine.begin() as conn:
        return (
            conn.execute(
                update(RUNS)
                .where(RUNS.c.id == claim_.id, RUNS.c.status == PENDING, RUNS.c.attempts == claim_.attempts)
                .values(**values)
            ).rowcount
            == 1
        )


def mark_sent(engine: Engine, claim_: Claim, now: datetime, *, recipients: int, message_id: str) -> bool:
    """Sent; False when the claim was no longer ours (its lease ended and another leader took it)."""
    return _settle(
        engine, claim_, status=SENT, sent_at=now, recipients=recipients, message_id=message_id, last_error=None
    )


def retry_delay_s(attempts: int) -> float:
    return min(RETRY_MAX_S, RETRY_BASE_S * 2 ** max(0, attempts - 1))


def mark_failed(engine: Engine, claim_: Claim, now: datetime, error: str, *, retryable: bool) -> str:
    """After a failed send: `pending` again with the next try's time, or `failed` for good. The status set."""
    error = error[:MAX_ERROR_CHARS]
    if retryable and claim_.attempts < MAX_ATTEMPTS:
        retry_at = now + timedelta(seconds=retry_delay_s(claim_.attempts))
        _settle(engine, claim_, lease_until=retry_at, last_error=error)
        return PENDING
    _settle(engine, claim_, status=FAILED, last_error=error)
    return FAILED


def runs(conn: Connection, report: str | None = None) -> list[RunView]:
    """Every recorded run (of one report), newest period first."""
    query = select(RUNS).order_by(RUNS.c.period.desc(), RUNS.c.report)
    if report is not None:
        query = query.where(RUNS.c.report == report)
    return [
        RunView(
            r.report,
            r.period,
            r.status,
            r.attempts,
            r.holder,
            r.lease_until,
            r.sent_at,
            r.recipients,
            r.message_id,
            r.last_error,
        )
        for r in conn.execute(query)
    ]


__all__ = ["FAILED", "LEASE_S", "PENDING", "SENT", "Claim", "RunView", "claim", "mark_failed", "mark_sent", "runs"]
