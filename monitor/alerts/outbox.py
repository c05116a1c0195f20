"""Delivering the notification outbox: claim due rows, send, record, back off.

Rows are enqueued by the engine in the transaction that changed the alert
(monitor/alerts/store.py). Delivery here is at-least-once with an
idempotency key, the most any sender can promise:

1. Claim: in one short transaction, due `pending` rows get `attempts + 1`
   and `next_attempt_at = now + lease`, each guarded by its old `attempts`
   (compare-and-set), so two deliverers can never hold one row; PostgreSQL
   also skips rows another transaction is claiming (FOR UPDATE SKIP LOCKED).
2. Send, outside any transaction, with `X-Firsttoken-Delivery: <row id>`.
3. Record: `sent`, or the error with the next try at now + exponential
   backoff with jitter, or `failed` once the row is older than `max_age_s`
   or the receiver refused it for good (a 400). Guarded by the claim.

A process that dies between 2 and 3 leaves the row claimed; its lease
(renewed while it sends, monitor/alerts/claims.py) runs out within
`lease_s` and the row is sent again with the same delivery id (receivers deduplicate
on it; PagerDuty on its dedup_key). A row is only due once every earlier
row of the same alert and notifier is settled, so a `resolved` never
overtakes its `firing`.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from monitor.alerts.charts import AlertCharts
from monitor.alerts.claims import ClaimKeeper, claim_due, settle
from monitor.alerts.notifiers import Context, DeliveryError, build_notifier
from monitor.alerts.records import FIRING_EVENT, REPEAT_EVENT
from monitor.alerts.store import queue_resend
from monitor.redact import redact
from monitor.storage.models import NotificationOutbox

log = logging.getLogger(__name__)

OUTBOX = NotificationOutbox.__table__
PENDING, SENT, FAILED = "pending", "sent", "failed"
MAX_ERROR_CHARS = 500


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    base_s: float = 10.0  # first retry after about this long
    cap_s: float = 30 * 60.0  # never wait longer than this between tries
    max_age_s: float = 24 * 3600.0  # give up (status failed) on a notification this old
    # A claimed row is sent again this long after its sender vanished (renewed while it sends:
    # monitor/alerts/claims.py), so a page in flight survives its leader within a minute.
    lease_s: float = 20.0
    jitter: float = 0.5  # each wait is drawn from [1 - jitter, 1] x the exponential step

    def delay_s(self, attempts: int, rng: random.Random) -> float:
        step = min(self.cap_s, self.base_s * 2 ** max(0, attempts - 1))
        return step * (1 - self.jitter * rng.random())


@dataclass(frozen=True, slots=True)
class DeliveryStats:
    sent: int = 0
    retried: int = 0
    failed: int = 0


@dataclass(frozen=True, slots=True)
class _Claimed:
    id: int
    alert_id: int
    event: str
    notifier: str
    payload: dict[str, Any]
    attempts: int  # after the claim
    created_at: datetime
    due_at: datetime  # next_attempt_at before the claim, to hand the row back untouched


class OutboxDelivery:
    def __init__(
        self,
        *,
        policy: RetryPolicy | None = None,
        budget_s: float = 20.0,
        batch: int = 20,
        factory: Callable[..., Any] = build_notifier,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        rng: random.Random | None = None,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self.budget_s = budget_s  # one run stops claiming after this, so the leader's other jobs get their turn
        self.batch = batch
        self.factory = factory
        self.clock = clock
        self.rng = rng or random.Random()

    def run(self, engine: Engine, config) -> DeliveryStats:
        """Deliver what is due now; the leader calls this every few seconds."""
        deadline = time.monotonic() + self.budget_s
        notifiers: dict[str, Any] = {}
        configs = {n.name: n for n in config.notifiers}
        secrets = tuple(config.secrets)
        # What some notifiers need beyond their entry (DESIGN §18): the mail server, the alert's chart.
        context = Context(smtp=getattr(config, "smtp", None), chart=AlertCharts(engine, lambda: config).png_or_none)
        broken: set[str] = set()  # failed once this run: the rest of their rows wait for the next
        sent = retried = failed = 0
        claims = ClaimKeeper(engine, self.policy.lease_s, self.clock)
        try:
            while time.monotonic() < deadline:
                claimed = self._claim(engine, self.clock(), exclude=broken)
                if not claimed:
                    break
                for row in claimed:
                    claims.hold(row.id, row.attempts)
                for row in claimed:
                    if row.notifier in broken:
                        claims.drop(row.id)
                        self._release(engine, row)
                        continue
                    outcome = self._send(row, configs, notifiers, secrets, context)
                    claims.drop(row.id)
                    now = self.clock()
                    if outcome is None:
                        self._finish(engine, row, status=SENT, sent_at=now, last_error=None)
                        self._chain_resend(engine, row, configs.get(row.notifier), now)
                        sent += 1
                        continue
                    if outcome.retryable:  # the receiver is down: its other rows wait for the next run
                        broken.add(row.notifier)
                    message = redact(str(outcome), secrets)[:MAX_ERROR_CHARS]
                    too_old = now - row.created_at >= timedelta(seconds=self.policy.max_age_s)
                    if not outcome.retryable or too_old:
                        self._finish(engine, row, status=FAILED, last_error=message)
                        log.error("notification %d to %s failed for good: %s", row.id, row.notifier, message)
                        failed += 1
                    else:
                        delay = self.policy.delay_s(row.attempts, self.rng)
                        self._finish(engine, row, next_attempt_at=now + timedelta(seconds=delay), last_error=message)
                        log.warning(
                            "notification %d to %s failed, retry in %.0fs: %s", row.id, row.notifier, delay, message
                        )
                        retried += 1
        finally:
            claims.close()
            for notifier in notifiers.values():
                notifier.close()
        return DeliveryStats(sent, retried, failed)

    # ------------------------------------------------------------- database
    def _claim(self, engine: Engine, now: datetime, exclude: Iterable[str]) -> list[_Claimed]:
        exclude = sorted(exclude)
        rows = claim_due(
            engine, OUTBOX, now=now, lease_s=self.policy.lease_s, batch=self.batch, same=("alert_id", "notifier"),
            where=(OUTBOX.c.notifier.not_in(exclude),) if exclude else (),
        )  # fmt: skip
        return [
            _Claimed(r.id, r.alert_id, r.event, r.notifier, r.payload, r.attempts + 1, r.created_at, r.next_attempt_at)
            for r in rows
        ]

    def _finish(self, engine: Engine, row: _Claimed, **values: Any) -> None:
        settle(engine, OUTBOX, row.id, row.attempts, **values)

    def _chain_resend(self, engine: Engine, row: _Claimed, config: Any, now: datetime) -> None:
        """A notifier whose config sets `resend_every_s` (Alertmanager) hears about a firing alert
        again that long after each delivered firing or repeat, through the same outbox: the next
        `repeat` row is queued, due then, as long as the alert fires unsilenced."""
        every_s = getattr(config, "resend_every_s", None)
        if not every_s or row.event not in (FIRING_EVENT, REPEAT_EVENT):
            return
        with engine.begin() as conn:
            queue_resend(
                conn, row.alert_id, row.notifier, row.payload, now=now, due_at=now + timedelta(seconds=every_s)
            )

    def _release(self, engine: Engine, row: _Claimed) -> None:
        """Hand back a claimed row untried: as if this run had never claimed it."""
        self._finish(engine, row, attempts=row.attempts - 1, next_attempt_at=row.due_at)

    # ------------------------------------------------------------- sending
    def _send(
        self, row: _Claimed, configs: dict, notifiers: dict, secrets: tuple[str, ...], context: Context
    ) -> DeliveryError | None:
        config = configs.get(row.notifier)
        if config is None:
            return DeliveryError(f"notifier {row.notifier!r} is no longer configured", retryable=False)
        try:
            notifier = notifiers.get(row.notifier)
            if notifier is None:
                notifier = notifiers[row.notifier] = self.factory(config, secrets, context)
            notifier.send(row.payload, event=row.event, delivery_id=str(row.id))
        except DeliveryError as exc:
            return exc
        except Exception as exc:  # a notifier bug must not stop delivery of the others
            return DeliveryError(f"{type(exc).__name__}: {exc}")
        return None
