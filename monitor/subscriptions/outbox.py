"""Delivering the subscriber outbox (DESIGN §16), a leader job beside the alert outbox's, built the same
way (monitor/alerts/outbox.py):

1. fan out: each newly published incident update becomes one row per confirmed subscriber (unique
   (subscriber, update): a second run, or a second leader, adds nothing); unconfirmed addresses whose
   link expired are forgotten;
2. claim: due `pending` rows get `attempts + 1` and a lease, compare-and-set on `attempts` (PostgreSQL
   also skips rows locked by another claimer); the lease is renewed while sending (ClaimKeeper);
3. send outside any transaction: a mail through the one mailer (monitor.mail), or a signed POST;
4. record, guarded by the claim: `sent`, or the error and the next try (exponential backoff with
   jitter), or `failed` once the row is older than the retry policy's max age or the receiver refused
   it for good; a row whose subscriber no longer wants it is `cancelled`.

A row is only due once every earlier row of the same subscriber is settled, so updates arrive in order.
What a sender can promise is at-least-once with a stable identity: a process that dies between 3 and 4
sends the row again after its lease with the same Message-ID / `X-Firsttoken-Delivery`.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy import Engine, select

from monitor.alerts.claims import ClaimKeeper, claim_due, settle
from monitor.alerts.notifiers.base import USER_AGENT, DeliveryError, post
from monitor.alerts.notifiers.webhook import DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, encode, signature
from monitor.alerts.outbox import MAX_ERROR_CHARS, DeliveryStats, RetryPolicy
from monitor.incidents.views import get_incident
from monitor.mail import Mailer, MailError
from monitor.redact import host_of, redact
from monitor.subscriptions import messages
from monitor.subscriptions.addresses import EMAIL, public_host
from monitor.subscriptions.store import (
    CANCELLED,
    CONFIRM_KIND,
    CONFIRMED,
    FAILED,
    OUTBOX,
    PENDING,
    SENT,
    SUBSCRIBERS,
    UPDATES,
    fan_out,
    forget,
)
from monitor.subscriptions.tokens import link_secret, webhook_key

log = logging.getLogger(__name__)

WEBHOOK_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class _Claimed:
    id: int
    subscriber_id: int
    update_id: int | None
    kind: str
    attempts: int  # after the claim
    created_at: datetime
    due_at: datetime  # next_attempt_at before the claim, to hand the row back untouched


class _Cancel(Exception):
    """The subscriber no longer wants this message (unsubscribed, confirmed meanwhile, gone)."""


class _Skip(Exception):
    """The message's receiver (the mail server, a webhook's host) failed earlier in this run."""


class SubscriberDelivery:
    def __init__(
        self,
        *,
        policy: RetryPolicy | None = None,
        budget_s: float = 20.0,
        batch: int = 20,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        rng: random.Random | None = None,
        mailer: Callable[[Any, tuple[str, ...]], Mailer] = Mailer,
        client: httpx.Client | None = None,
        allow_private_webhooks: bool = False,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self.budget_s = budget_s
        self.batch = batch
        self.clock = clock
        self.rng = rng or random.Random()
        self._mailer = mailer
        self._client = client
        self.allow_private_webhooks = allow_private_webhooks

    def run(self, engine: Engine, config: Any) -> DeliveryStats:
        """Fan out what was published, then deliver what is due; the leader calls this every few seconds."""
        now = self.clock()
        with engine.begin() as conn:
            fan_out(conn, now)
            forget(conn, now)
        deadline = time.monotonic() + self.budget_s
        secrets = tuple(config.secrets)
        sender = _Sender(self, engine, config, secrets)
        claims = ClaimKeeper(engine, self.policy.lease_s, self.clock, table=OUTBOX)
        broken: set[str] = set()  # a channel (mail, webhooks) that failed this run: its rows wait
        sent = retried = failed = 0
        try:
            while time.monotonic() < deadline:
                claimed = self._claim(engine, self.clock())
                if not claimed:
                    break
                for row in claimed:
                    claims.hold(row.id, row.attempts)
                for row in claimed:
                    try:
                        outcome = sender.send(row, skip=broken)
                    except _Cancel as why:
                        claims.drop(row.id)
                        self._finish(engine, row, status=CANCELLED, last_error=str(why))
                        continue
                    except _Skip:  # its receiver failed earlier in this run: untried, as if never claimed
                        claims.drop(row.id)
                        self._finish(engine, row, attempts=row.attempts - 1, next_attempt_at=row.due_at)
                        continue
                    claims.drop(row.id)
                    now = self.clock()
                    if outcome is None:
                        self._finish(engine, row, status=SENT, sent_at=now, last_error=None)
                        sent += 1
                        continue
                    channel, error = outcome
                    if error.retryable:  # the receiver is down: its other messages wait for the next run
                        broken.add(channel)
                    message = redact(str(error), secrets)[:MAX_ERROR_CHARS]
                    too_old = now - row.created_at >= timedelta(seconds=self.policy.max_age_s)
                    if not error.retryable or too_old:
                        self._finish(engine, row, status=FAILED, last_error=message)
                        log.error("subscriber message %d failed for good: %s", row.id, message)
                        failed += 1
                    else:
                        delay = self.policy.delay_s(row.attempts, self.rng)
                        self._finish(engine, row, next_attempt_at=now + timedelta(seconds=delay), last_error=message)
                        log.warning("subscriber message %d failed, retry in %.0fs: %s", row.id, delay, message)
                        retried += 1
        finally:
            claims.close()
            sender.close()
        return DeliveryStats(sent, retried, failed)

    # ------------------------------------------------------------- database
    def _claim(self, engine: Engine, now: datetime) -> list[_Claimed]:
        rows = claim_due(
            engine, OUTBOX, now=now, lease_s=self.policy.lease_s, batch=self.batch, same=("subscriber_id",)
        )
        return [
            _Claimed(r.id, r.subscriber_id, r.update_id, r.kind, r.attempts + 1, r.created_at, r.next_attempt_at)
            for r in rows
        ]

    def _finish(self, engine: Engine, row: _Claimed, **values: Any) -> None:
        settle(engine, OUTBOX, row.id, row.attempts, **values)


class _Sender:
    """One run's senders: one SMTP session, one HTTP client, the link secret read once."""

    def __init__(self, delivery: SubscriberDelivery, engine: Engine, config: Any, secrets: tuple[str, ...]) -> None:
        self._delivery = delivery
        self._engine = engine
        self._config = config
        self._secrets = secrets
        self._secret: bytes | None = None
        self._mailer: Mailer | None = None
        self._client = delivery._client
        self._own_client = False

    def send(self, row: _Claimed, *, skip: set[str]) -> tuple[str, DeliveryError | MailError] | None:
        """None when sent; (channel, error) when not. Raises _Cancel when it is no longer wanted."""
        with self._engine.connect() as conn:
            subscriber = conn.execute(select(SUBSCRIBERS).where(SUBSCRIBERS.c.id == row.subscriber_id)).first()
            wanted = CONFIRMED if row.update_id is not None else PENDING
            if subscriber is None or subscriber.state != wanted:
                raise _Cancel(f"the subscriber is {subscriber.state if subscriber else 'gone'}")
            incident = update_view = None
            if row.update_id is not None:
                incident = get_incident(conn, _incident_of(conn, row.update_id))
                update_view = next((u for u in incident.updates if u.id == row.update_id), None) if incident else None
                if update_view is None or not update_view.published:
                    raise _Cancel("the update is no longer published")
        channel = subscriber.kind if subscriber.kind == EMAIL else host_of(subscriber.address)
        if channel in skip:
            raise _Skip(channel)
        if self._secret is None:
            self._secret = link_secret(self._engine)
        site_title = getattr(getattr(self._config, "status_site", None), "title", "Status")
        url = messages.site_url(self._config, subscriber.base_url)
        if url is None:
            return channel, DeliveryError("no public URL for the links: set status_site.url", retryable=True)
        site = messages.Site(site_title, url)
        confirm = row.kind == CONFIRM_KIND
        links = messages.links_for(site, self._secret, subscriber, now=self._delivery.clock(), confirm=confirm)
        try:
            if channel == EMAIL:
                self._mail(row, subscriber, site, links, incident, update_view)
            else:
                self._post(row, subscriber, site, links, incident, update_view)
        except (MailError, DeliveryError) as exc:
            return channel, exc
        except Exception as exc:  # a bug here must not stop the other messages
            return channel, DeliveryError(f"{type(exc).__name__}: {exc}")
        return None

    def _mail(self, row, subscriber, site, links, incident, update_view) -> None:
        smtp = getattr(self._config, "smtp", None)
        if smtp is None:
            raise MailError("no smtp: server configured", retryable=True)
        if row.kind == CONFIRM_KIND:
            message = messages.confirm_mail(site, links, sender=smtp.sender, to=subscriber.address, delivery_id=row.id)
        else:
            message = messages.update_mail(
                site, links, incident, update_view, sender=smtp.sender, to=subscriber.address, delivery_id=row.id
            )
        if self._mailer is None:
            self._mailer = self._delivery._mailer(smtp, self._secrets)
        self._mailer.send(message)

    def _post(self, row, subscriber, site, links, incident, update_view) -> None:
        if not self._delivery.allow_private_webhooks and not public_host(urlsplit(subscriber.address).hostname or ""):
            raise DeliveryError("webhook host is not a public address", retryable=False)
        if row.kind == CONFIRM_KIND:
            body, event = messages.confirm_body(site, links, self._secret, subscriber), messages.CONFIRM_EVENT
        else:
            body, event = messages.update_body(site, links, incident, update_view), messages.UPDATE_EVENT
        raw = encode(body)
        key = webhook_key(self._secret, subscriber.id, subscriber.address_key)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            SIGNATURE_HEADER: signature(key, raw),
            DELIVERY_HEADER: f"subscriber-{row.id}",
            EVENT_HEADER: event,
        }
        if self._client is None:
            self._client, self._own_client = httpx.Client(), True
        post(self._client, subscriber.address, raw, headers, timeout_s=WEBHOOK_TIMEOUT_S, what="webhook")

    def close(self) -> None:
        if self._mailer is not None:
            self._mailer.close()
        if self._own_client and self._client is not None:
            self._client.close()


def _incident_of(conn, update_id: int) -> int:
    return conn.execute(select(UPDATES.c.incident_id).where(UPDATES.c.id == update_id)).scalar() or -1


def subscription_jobs_for(alerting: Any) -> dict[str, tuple[float, Any]]:
    """The leader's job for `monitor.leader.jobs`: fan out and deliver the subscriber outbox, as often and
    with the same retries as the alert outbox (the config's `alerting:` block)."""
    retry = RetryPolicy(base_s=alerting.retry_after_s, cap_s=alerting.retry_max_s, max_age_s=alerting.give_up_after_s)
    delivery = SubscriberDelivery(policy=retry, budget_s=max(5.0, 4 * alerting.deliver_every_s))
    return {"status.deliver": (alerting.deliver_every_s, delivery.run)}
