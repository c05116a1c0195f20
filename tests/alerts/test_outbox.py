"""Outbox delivery: at least once, never twice once sent, backoff, give-up, ordering, leases."""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from monitor.alerts.notifiers import DeliveryError
from monitor.alerts.outbox import OutboxDelivery, RetryPolicy
from monitor.alerts.records import AlertRecord, Change
from monitor.alerts.scope import Scope
from monitor.alerts.store import apply_changes
from monitor.config import Config, LogNotifierConfig, WebhookConfig
from monitor.storage.models import NotificationOutbox

from .receiver import Receiver

OUTBOX = NotificationOutbox.__table__
SECRET = "s3cr3t-value-0123456789"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class FakeNotifier:
    """Fails the first `failures` sends (with `error`), records the rest."""

    def __init__(self, name: str, log: list, failures: int = 0, error: DeliveryError | None = None, delay_s: float = 0):
        self.name, self.log, self.failures, self.error, self.delay_s = name, log, failures, error, delay_s

    def send(self, body, *, event, delivery_id) -> None:
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.failures > 0:
            self.failures -= 1
            raise self.error or DeliveryError(f"HTTP 503 from receiver holding {SECRET}")
        self.log.append((self.name, event, delivery_id, body["alert_id"]))

    def close(self) -> None:
        pass


def factory_of(notifiers: dict):
    return lambda config, secrets, context=None: notifiers[config.name]


def config_with(*names: str) -> Config:
    return Config(notifiers=tuple(LogNotifierConfig(name=n) for n in names), secrets=frozenset({SECRET}))


def enqueue(db, config, events=("firing",), *, now, model="m0") -> int:
    scope = Scope(provider="p", region="r1", model=model, prompt="short")
    record = AlertRecord(
        rule="slow", scope=scope, state="firing", severity="page", metric="ttft_ms", started_at=now, fired_at=now
    )
    with db.begin() as conn:
        return apply_changes(conn, [Change(record, tuple(events))], config.notifiers, dashboard_url=None, now=now)


def outbox_rows(db):
    with db.connect() as conn:
        return [r._mapping for r in conn.execute(select(OUTBOX).order_by(OUTBOX.c.id))]


def delivery(clock, notifiers, **kw) -> OutboxDelivery:
    policy = kw.pop("policy", RetryPolicy(base_s=10, cap_s=300, max_age_s=3600, lease_s=60, jitter=0.5))
    return OutboxDelivery(policy=policy, factory=factory_of(notifiers), clock=clock, rng=random.Random(1), **kw)


def test_each_row_is_sent_once_and_marked(db):
    clock, log = Clock(), []
    config = config_with("a", "b")
    assert enqueue(db, config, now=clock()) == 2
    d = delivery(clock, {"a": FakeNotifier("a", log), "b": FakeNotifier("b", log)})
    assert d.run(db, config).sent == 2
    assert d.run(db, config).sent == 0
    clock.advance(3600)
    assert d.run(db, config).sent == 0
    assert sorted((n, e) for n, e, _, _ in log) == [("a", "firing"), ("b", "firing")]
    assert all(r["status"] == "sent" and r["sent_at"] is not None and r["attempts"] == 1 for r in outbox_rows(db))


def test_failures_back_off_exponentially_with_jitter_then_deliver(db):
    clock, log = Clock(), []
    config = config_with("a")
    enqueue(db, config, now=clock())
    d = delivery(clock, {"a": FakeNotifier("a", log, failures=3)})
    waits = []
    for _ in range(3):
        assert d.run(db, config).retried == 1
        (row,) = outbox_rows(db)
        wait = (row["next_attempt_at"] - clock()).total_seconds()
        waits.append(wait)
        assert d.run(db, config).sent == 0  # not due yet
        assert row["last_error"] and SECRET not in row["last_error"] and "***" in row["last_error"]
        clock.advance(wait)
    assert 5 <= waits[0] <= 10 and 10 <= waits[1] <= 20 and 20 <= waits[2] <= 40
    assert d.run(db, config).sent == 1
    (row,) = outbox_rows(db)
    assert row["status"] == "sent" and row["attempts"] == 4 and row["last_error"] is None
    assert [e for _, e, _, _ in log] == ["firing"]


def test_gives_up_after_max_age_and_on_a_permanent_refusal(db):
    clock, log = Clock(), []
    config = config_with("flaky", "refuses", "fine")
    enqueue(db, config, now=clock())
    notifiers = {
        "flaky": FakeNotifier("flaky", log, failures=10**6),
        "refuses": FakeNotifier("refuses", log, failures=1, error=DeliveryError("HTTP 400", retryable=False)),
        "fine": FakeNotifier("fine", log),
    }
    d = delivery(clock, notifiers)
    d.run(db, config)
    by_name = {r["notifier"]: r for r in outbox_rows(db)}
    assert by_name["refuses"]["status"] == "failed" and by_name["fine"]["status"] == "sent"
    assert by_name["flaky"]["status"] == "pending"
    for _ in range(40):
        clock.advance(300)
        d.run(db, config)
    by_name = {r["notifier"]: r for r in outbox_rows(db)}
    assert by_name["flaky"]["status"] == "failed" and by_name["flaky"]["attempts"] > 5


def test_resolved_waits_for_its_firing(db):
    clock, log = Clock(), []
    config = config_with("a")
    enqueue(db, config, ("firing", "resolved"), now=clock())
    d = delivery(clock, {"a": FakeNotifier("a", log, failures=1)})
    d.run(db, config)
    assert log == []  # firing failed; resolved must not overtake it
    clock.advance(60)
    d.run(db, config)
    assert [e for _, e, _, _ in log] == ["firing", "resolved"]


def test_a_notifier_that_is_down_does_not_hold_up_the_others(db):
    clock, log = Clock(), []
    config = config_with("down", "up")
    for model in ("m0", "m1", "m2"):
        enqueue(db, config, now=clock(), model=model)
    down = FakeNotifier("down", log, failures=10**6)
    d = delivery(clock, {"down": down, "up": FakeNotifier("up", log)}, batch=2)
    stats = d.run(db, config)
    assert stats.sent == 3 and stats.retried == 1  # one try at the broken one per run, then its rows wait
    rows = [r for r in outbox_rows(db) if r["notifier"] == "down"]
    assert sorted(r["attempts"] for r in rows) == [0, 0, 1]


def test_a_claim_whose_sender_died_is_retried_after_the_lease_with_the_same_delivery_id(db):
    clock, log = Clock(), []
    config = config_with("a")
    enqueue(db, config, now=clock())
    d = delivery(clock, {"a": FakeNotifier("a", log)})
    (claimed,) = d._claim(db, clock(), exclude=())  # a process claims, then dies before sending
    assert d.run(db, config).sent == 0  # leased
    clock.advance(61)
    assert d.run(db, config).sent == 1
    assert log == [("a", "firing", str(claimed.id), claimed.alert_id)]


def test_notifier_removed_from_the_config_fails_its_rows(db):
    clock = Clock()
    enqueue(db, config_with("gone"), now=clock())
    delivery(clock, {}).run(db, config_with())
    (row,) = outbox_rows(db)
    assert row["status"] == "failed" and "no longer configured" in row["last_error"]


def test_two_deliverers_at_once_send_each_row_exactly_once(db):
    clock, log = Clock(), []
    config = config_with("a")
    for i in range(12):
        enqueue(db, config, now=clock(), model=f"m{i}")
    notifier = FakeNotifier("a", log, delay_s=0.01)
    workers = [delivery(clock, {"a": notifier}, batch=3) for _ in range(3)]
    threads = [threading.Thread(target=w.run, args=(db, config)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [delivery_id for _, _, delivery_id, _ in log]
    assert len(ids) == 12 and len(set(ids)) == 12
    assert all(r["status"] == "sent" for r in outbox_rows(db))


@pytest.mark.parametrize("status", [500, 503])
def test_webhook_retry_through_the_outbox_reaches_the_receiver_once(db, status):
    clock = Clock()
    with Receiver(fail_first=2, fail_status=status) as rx:
        hook = WebhookConfig(name="hook", url=rx.url + "/in", secret=SECRET)
        config = Config(notifiers=(hook,), secrets=frozenset({SECRET}))
        enqueue(db, config, now=clock())
        d = OutboxDelivery(policy=RetryPolicy(base_s=1, jitter=0), clock=clock)
        for _ in range(5):
            d.run(db, config)
            clock.advance(10)
    assert len(rx.requests) == 3 and len(rx.accepted) == 1
    assert {r.headers["x-firsttoken-delivery"] for r in rx.requests} == {"1"}
    (row,) = outbox_rows(db)
    assert row["status"] == "sent" and row["attempts"] == 3


def test_stored_payload_and_errors_hold_no_secret(db):
    clock = Clock()
    with Receiver(fail_first=1, fail_status=500, echo=True) as rx:
        hook = WebhookConfig(name="hook", url=rx.url + f"/in/{SECRET}", secret=SECRET)
        config = Config(notifiers=(hook,), secrets=frozenset({SECRET}), dashboard_url=f"https://dash/?token={SECRET}")
        scope = Scope(provider="p", region="r1", model="m", prompt="s")
        record = AlertRecord(
            rule="r", scope=scope, state="firing", severity="page", metric="ttft_ms", started_at=clock()
        )
        with db.begin() as conn:
            apply_changes(
                conn,
                [Change(record, ("firing",))],
                config.notifiers,
                dashboard_url=config.dashboard_url,
                now=clock(),
                secrets=config.secrets,
            )
        OutboxDelivery(clock=clock).run(db, config)
    (row,) = outbox_rows(db)
    assert SECRET not in str(dict(row)) and row["last_error"]
    with db.begin() as conn:  # keep the test database tidy for the next parametrisation
        conn.execute(update(OUTBOX).values(status="failed"))
