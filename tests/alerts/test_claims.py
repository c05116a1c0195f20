"""A claimed delivery's lease: short, so a dead sender's page goes out again within a minute; renewed while
a slow receiver holds the request, so a live sender's page never goes out twice."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from monitor.alerts.claims import ClaimKeeper
from monitor.alerts.outbox import OutboxDelivery, RetryPolicy
from monitor.config import Config, WebhookConfig

from .receiver import Receiver
from .test_outbox import enqueue, outbox_rows


def now() -> datetime:
    return datetime.now(UTC)


def test_the_default_lease_lets_a_page_survive_its_leader_within_a_minute():
    # Lease, plus the leader lease a successor waits out, plus its first poll: under 60 s.
    from monitor.leader.election import LEADER_RETRY_S, LEASE_TTL_S

    assert RetryPolicy().lease_s + LEASE_TTL_S + LEADER_RETRY_S < 60


def test_a_slow_receiver_keeps_the_claim_and_gets_the_page_once(db):
    with Receiver(delay_s=2.5) as hooks:
        config = Config(notifiers=(WebhookConfig(name="hooks", url=hooks.url + "/alerts"),))
        enqueue(db, config, now=now())
        policy = RetryPolicy(lease_s=0.8)  # renewed every 0.2 s while the receiver holds the request
        slow = OutboxDelivery(policy=policy)
        other = OutboxDelivery(policy=policy)  # a second deliverer trying while the first one sends
        result = {}
        sender = threading.Thread(target=lambda: result.update(stats=slow.run(db, config)))
        sender.start()
        assert hooks.wait_for(lambda r: len(r.requests) == 1, 10)
        tries = 0
        while sender.is_alive():
            tries += 1
            assert other.run(db, config).sent == 0  # the lease never ran out under the slow send
            sender.join(0.3)
        assert result["stats"].sent == 1 and tries >= 3
    assert len(hooks.requests) == 1
    (row,) = outbox_rows(db)
    assert row["status"] == "sent" and row["attempts"] == 1


def test_renewal_moves_only_the_rows_still_held(db):
    config = Config(notifiers=(WebhookConfig(name="hooks", url="http://127.0.0.1:9/never"),))
    start = now()
    enqueue(db, config, now=start, model="a")
    enqueue(db, config, now=start, model="b")
    first, second = (row["id"] for row in outbox_rows(db))
    keeper = ClaimKeeper(db, 30.0, now)
    try:
        keeper.hold(first, 0)
        keeper.hold(second, 5)  # a claim another deliverer has since taken (attempts moved on)
        assert keeper.renew() == 1
        keeper.drop(first)
        assert keeper.renew() == 0
    finally:
        keeper.close()
    rows = {row["id"]: row for row in outbox_rows(db)}
    assert (rows[first]["next_attempt_at"] - start).total_seconds() > 25
    assert rows[second]["next_attempt_at"] <= start
