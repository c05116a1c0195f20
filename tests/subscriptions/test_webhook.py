"""Webhook subscribers (DESIGN §16): a confirmation request first (double opt-in, like email), then one
signed JSON POST per published incident update; retries with backoff, failures recorded."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import select

from monitor.alerts.notifiers.webhook import signature
from monitor.alerts.outbox import RetryPolicy
from monitor.alerts.records import Change
from monitor.alerts.scope import Scope
from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.server import StatusServer
from monitor.storage.models import SubscriberOutboxRow
from monitor.subscriptions.outbox import SubscriberDelivery
from monitor.subscriptions.web import SubscriptionPages
from tests.alerts.conftest import make_config
from tests.alerts.helpers import config_spec
from tests.alerts.receiver import Receiver
from tests.incidents.rounds import write_round
from tests.incidents.test_drafting import firing

OUTBOX = SubscriberOutboxRow.__table__


def serve(db, config, **kw) -> StatusServer:
    pages = SubscriptionPages(db, lambda: config, **kw)
    server = StatusServer("127.0.0.1", 0, build_app(lambda: [], lambda: Health(True, {}), subscriptions=pages))
    server.start()
    return server


def publish_an_update(db, config, **kw) -> None:
    change = Change(firing(scope=Scope("p", "r1", "m0", "short"), rule="slow", **kw))
    write_round(db, [change], config, datetime.now(UTC))


def outbox(db) -> list[dict]:
    with db.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(select(OUTBOX).order_by(OUTBOX.c.id))]


def test_a_webhook_confirms_then_gets_each_update_signed(db, tmp_path):
    spec = config_spec(models=("m0",)) | {"status_site": {"title": "Acme status", "url": "https://status.example"}}
    config = make_config(spec, tmp_path)
    server = serve(db, config, allow_private_webhooks=True)
    delivery = SubscriberDelivery(allow_private_webhooks=True)
    try:
        with Receiver() as hook:
            answer = httpx.post(f"http://127.0.0.1:{server.port}/status/subscribe", data={"webhook": hook.url + "/h"})
            assert answer.status_code == 200 and "Confirm the webhook" in answer.text
            assert delivery.run(db, config).sent == 1
            (request,) = hook.requests
            body = request.json()
            assert request.headers["x-firsttoken-event"] == "subscription.confirm" and request.path == "/h"
            assert body["confirm_url"].startswith("https://status.example/status/confirm?token=")
            key = body["signing_key"]
            assert request.headers["x-firsttoken-signature"] == signature(key, request.raw)
            publish_an_update(db, config)
            assert delivery.run(db, config).sent == 0, "not confirmed yet: nothing"
            token = body["confirm_url"].split("token=", 1)[1]
            confirmed = httpx.get(f"http://127.0.0.1:{server.port}/status/confirm", params={"token": token})
            assert confirmed.status_code == 200
            publish_an_update(db, config, agents=("a", "b", "c"))  # confirmed from 3 vantage points
            assert delivery.run(db, config).sent == 1
            update = hook.requests[-1]
            assert update.headers["x-firsttoken-event"] == "incident.update"
            assert update.headers["x-firsttoken-signature"] == signature(key, update.raw)
            assert update.headers["x-firsttoken-delivery"].startswith("subscriber-")
            sent = json.loads(update.raw)
            assert sent["update"]["kind"] == "confirmed" and sent["incident"]["components"] == ["p/m0"]
            assert sent["unsubscribe_url"].startswith("https://status.example/status/unsubscribe?token=")
    finally:
        server.stop()


def test_a_failing_webhook_is_retried_with_backoff_and_a_refusing_one_fails_for_good(db, tmp_path):
    config = make_config(config_spec(models=("m0",)) | {"status_site": {"url": "https://status.example"}}, tmp_path)
    server = serve(db, config, allow_private_webhooks=True)
    now = datetime.now(UTC) + timedelta(seconds=5)  # after the subscriptions below
    clock = {"now": now}
    delivery = SubscriberDelivery(
        allow_private_webhooks=True, policy=RetryPolicy(base_s=60, jitter=0), clock=lambda: clock["now"]
    )
    try:
        with Receiver(fail_first=1, fail_status=503) as flaky, Receiver(ok_status=410) as gone:
            for url in (flaky.url, gone.url):
                httpx.post(f"http://127.0.0.1:{server.port}/status/subscribe", data={"webhook": url})
            stats = delivery.run(db, config)
            assert (stats.sent, stats.retried, stats.failed) == (0, 1, 1)
            first, second = outbox(db)
            assert first["status"] == "pending" and first["attempts"] == 1 and "HTTP 503" in first["last_error"]
            assert first["next_attempt_at"] == now + timedelta(seconds=60)
            assert second["status"] == "failed" and "HTTP 410" in second["last_error"]
            assert delivery.run(db, config).sent == 0  # not due yet
            clock["now"] = now + timedelta(seconds=61)
            assert delivery.run(db, config).sent == 1 and outbox(db)[0]["status"] == "sent"
            assert len(flaky.requests) == 2
    finally:
        server.stop()


def test_webhooks_into_the_servers_own_network_are_refused(db, tmp_path):
    config = make_config(config_spec(models=("m0",)), tmp_path)
    server = serve(db, config)
    try:
        for url in ("http://127.0.0.1:9/x", "http://10.0.0.1/x", "https://user:pw@example.com/", "ftp://x/"):
            answer = httpx.post(f"http://127.0.0.1:{server.port}/status/subscribe", data={"webhook": url})
            assert answer.status_code == 400, url
        assert outbox(db) == []
    finally:
        server.stop()
