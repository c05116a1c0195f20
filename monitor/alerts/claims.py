"""Claiming outbox rows, and keeping them claimed while they are sent (the alert outbox and the status
subscribers' share it: any table with id, status, attempts and next_attempt_at).

`claim_due` takes due `pending` rows in one short transaction: each gets `attempts + 1` and a lease,
compare-and-set on its old `attempts`, so two deliverers never hold one row (PostgreSQL also skips
rows another transaction is claiming); a row waits while an earlier row of its group (`same`) is
pending, so they go out in order. `settle` writes to a claimed row, guarded by the claim.

A claim is a lease: `next_attempt_at` moved `lease_s` ahead. A deliverer that
dies stops renewing, so the next leader sends the row again (same delivery id)
once the lease runs out: within a minute of the death, not after the longest
send timeout. One that lives renews every `lease_s / 4` while a slow receiver
holds a request open, so a live send is never doubled. Each renewal is guarded
by the claim (`attempts`), like every write to a claimed row.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Engine, Row, Table, and_, exists, select, update
from sqlalchemy.orm import aliased

from monitor.storage.models import NotificationOutbox

log = logging.getLogger(__name__)

OUTBOX = NotificationOutbox.__table__
PENDING = "pending"


def claim_due(
    engine: Engine,
    table: Table,
    *,
    now: datetime,
    lease_s: float,
    batch: int,
    same: Sequence[str],
    where: Sequence[ColumnElement[bool]] = (),
) -> list[Row[Any]]:
    """Claim up to `batch` due rows, oldest due first; each as it was before the claim (its `attempts`
    one less than it holds now). A row is due once no earlier row with the same `same` columns is pending."""
    earlier = aliased(table)
    blocked = exists().where(
        and_(*(earlier.c[c] == table.c[c] for c in same), earlier.c.status == PENDING, earlier.c.id < table.c.id)
    )
    query = (
        select(table)
        .where(table.c.status == PENDING, table.c.next_attempt_at <= now, ~blocked, *where)
        .order_by(table.c.next_attempt_at, table.c.id)
        .limit(batch)
    )
    if engine.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True, of=table)
    lease_until = now + timedelta(seconds=lease_s)
    claimed = []
    with engine.begin() as conn:
        for row in conn.execute(query).all():
            got = conn.execute(
                update(table)
                .where(table.c.id == row.id, table.c.status == PENDING, table.c.attempts == row.attempts)
                .values(attempts=row.attempts + 1, next_attempt_at=lease_until)
            ).rowcount
            if got == 1:
                claimed.append(row)
    return claimed


def settle(engine: Engine, table: Table, row_id: int, attempts: int, /, **values: Any) -> None:
    """Write `values` to a row this deliverer claimed (`attempts`: as the claim left it); nothing when the
    claim is no longer ours. `attempts` is positional: handing a row back writes an `attempts` value too."""
    with engine.begin() as conn:
        conn.execute(
            update(table)
            .where(table.c.id == row_id, table.c.status == PENDING, table.c.attempts == attempts)
            .values(**values)
        )


class ClaimKeeper:
    """Renews the leases of the rows held, from a thread of its own, until closed."""

    def __init__(self, engine: Engine, lease_s: float, clock: Callable[[], datetime], table: Table = OUTBOX) -> None:
        self._engine = engine
        self._table = table  # any outbox with id, status, attempts, next_attempt_at (subscribers' too)
        self._lease = timedelta(seconds=lease_s)
        self._every_s = lease_s / 4
        self._clock = clock
        self._held: dict[int, int] = {}  # row id -> attempts after the claim
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="outbox-claims", daemon=True)  # started by `hold`

    def hold(self, row_id: int, attempts: int) -> None:
        with self._lock:
            self._held[row_id] = attempts
            if not self._thread.is_alive() and not self._stop.is_set():
                self._thread.start()

    def drop(self, row_id: int) -> None:
        """Before the row is settled: waits for a renewal in progress, so none lands after the settling."""
        with self._lock:
            self._held.pop(row_id, None)

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def renew(self) -> int:
        """Push the held rows' leases out again; how many were still ours."""
        with self._lock:  # held through the write: `drop` then settle never races a renewal
            if not self._held:
                return 0
            lease_until = self._clock() + self._lease
            renewed = 0
            table = self._table
            with self._engine.begin() as conn:
                for row_id, attempts in self._held.items():
                    renewed += conn.execute(
                        update(table)
                        .where(table.c.id == row_id, table.c.status == PENDING, table.c.attempts == attempts)
                        .values(next_attempt_at=lease_until)
                    ).rowcount
            return renewed

    def _loop(self) -> None:
        while not self._stop.wait(self._every_s):
            try:
                self.renew()
            except Exception as exc:  # the lease runs out by itself; the send goes on
                log.warning("could not renew the outbox claims: %s", type(exc).__name__)
