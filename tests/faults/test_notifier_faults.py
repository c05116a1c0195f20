"""Receivers that time out, answer 500, close the connection or reset it: the
outbox retries with the real notifiers until they come back, and then each
page is accepted exactly once.

A receiver that read the request and then dropped the connection may have
acted on it: the retry carries the same delivery id (webhook) or dedup key
(PagerDuty), so the receiver can tell. The alert engine's own tests cover
backoff, leases and restarts with fake notifiers; these put real HTTP between.
"""

from __future__ import annotations

import json
import random
import socket
import socketserver
import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from monitor.alerts.outbox import OutboxDelivery, RetryPolicy
from monitor.alerts.records import AlertRecord, Change
from monitor.alerts.scope import Scope
from monitor.alerts.store import apply_changes
from monitor.config import AppriseConfig, Config, PagerDutyConfig, WebhookConfig
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import NotificationOutbox

MODES = ("hang", "500", "close", "reset")
SECRET = "KOALA4webhook-secret-8812"
ROUTING_KEY = "EMU6routing-key-2231"


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


class Misbehaving:
    """An HTTP receiver whose first `failures` requests meet `mode`; then 202 Accepted."""

    def __init__(self, mode: str, failures: int) -> None:
        self.mode, self.failures = mode, failures
        self.requests: list[tuple[str, dict, bytes, bool]] = []  # (path, headers, body, accepted)
        self.release = threading.Event()  # ends the hangs when the test is over
        owner = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                line = self.rfile.readline().decode()
                headers = {}
                while (h := self.rfile.readline().decode().strip()) != "":
                    k, _, v = h.partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = self.rfile.read(int(headers.get("content-length") or 0))
                fail = len(owner.requests) < owner.failures
                owner.requests.append((line.split()[1], headers, body, not fail))
                sock: socket.socket = self.request
                if not fail:
                    self.wfile.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}")
                elif owner.mode == "hang":
                    owner.release.wait(10)
                elif owner.mode == "500":
                    self.wfile.write(b"HTTP/1.1 500 Oops\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                elif owner.mode == "reset":
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                # "close": nothing at all, the connection just ends

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def accepted(self, prefix: str) -> list:
        return [r for r in self.requests if r[0].startswith(prefix) and r[3]]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def db(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'alerts.db'}")
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


@pytest.mark.parametrize("mode", MODES)
def test_a_receiver_that_fails_then_recovers_gets_each_page_once(db, mode):
    receiver = Misbehaving(mode, failures=3 * 3)  # three rounds of failure for each notifier
    try:
        notifiers = (
            WebhookConfig(name="hooks", url=receiver.url + "/webhook", secret=SECRET, timeout_s=0.5),
            PagerDutyConfig(name="oncall", routing_key=ROUTING_KEY, url=receiver.url + "/pd", timeout_s=0.5),
            AppriseConfig(name="chat", urls=(f"json://{receiver.url[7:]}/apprise",)),
        )
        config = Config(notifiers=notifiers, secrets=frozenset({SECRET, ROUTING_KEY}))
        clock = Clock()
        with db.begin() as conn:
            for model in ("m1", "m2"):
                record = AlertRecord(
                    rule="slow", scope=Scope(provider="p", region="r", model=model, prompt="short"), state="firing",
                    severity="page", metric="ttft_ms", started_at=clock(), fired_at=clock(),
                )  # fmt: skip
                apply_changes(conn, [Change(record, ("firing",))], notifiers, dashboard_url=None, now=clock())
        policy = RetryPolicy(base_s=10, cap_s=60, max_age_s=3600, lease_s=60, jitter=0.5)
        delivery = OutboxDelivery(policy=policy, clock=clock, rng=random.Random(7), budget_s=30)
        for _ in range(30):  # each run: whatever is due; then the clock jumps past the backoff
            delivery.run(db, config)
            clock.now += timedelta(seconds=61)
            with db.connect() as conn:
                statuses = [r.status for r in conn.execute(select(NotificationOutbox.__table__.c.status))]
            if all(s == "sent" for s in statuses):
                break
        assert statuses == ["sent"] * 6, statuses
        # Each page accepted once per notifier; the repeats of one page are recognisable.
        hooks = receiver.accepted("/webhook")
        assert sorted(json.loads(b)["scope"]["model"] for _, _, b, _ in hooks) == ["m1", "m2"]
        assert len(receiver.accepted("/pd")) == 2 and len(receiver.accepted("/apprise")) == 2
        for path, _, body, _ in receiver.requests:
            if path == "/webhook":
                ids = {h["x-firsttoken-delivery"] for p, h, b, _ in receiver.requests if p == path and b == body}
                assert len(ids) == 1  # every attempt of one page: one delivery id
            assert SECRET.encode() not in body
        dedup = {json.loads(b)["dedup_key"] for p, _, b, _ in receiver.requests if p == "/pd"}
        assert len(dedup) == 2  # two alerts, however many attempts
        with db.connect() as conn:
            errors = [r.last_error for r in conn.execute(select(NotificationOutbox.__table__.c.last_error))]
        assert all(e is None for e in errors)
    finally:
        receiver.close()


def test_failed_attempts_are_recorded_redacted(db):
    receiver = Misbehaving("500", failures=10**6)
    try:
        notifier = WebhookConfig(name="hooks", url=receiver.url + "/webhook?token=" + SECRET, timeout_s=0.5)
        config = Config(notifiers=(notifier,), secrets=frozenset({SECRET}))
        clock = Clock()
        with db.begin() as conn:
            record = AlertRecord(
                rule="slow", scope=Scope(provider="p", region="r", model="m", prompt="short"), state="firing",
                severity="page", metric="ttft_ms", started_at=clock(), fired_at=clock(),
            )  # fmt: skip
            apply_changes(conn, [Change(record, ("firing",))], (notifier,), dashboard_url=None, now=clock())
        OutboxDelivery(clock=clock, rng=random.Random(1)).run(db, config)
        with db.connect() as conn:
            (row,) = conn.execute(select(NotificationOutbox.__table__)).mappings().all()
        assert row["status"] == "pending" and row["attempts"] == 1
        assert "500" in row["last_error"] and SECRET not in row["last_error"]
    finally:
        receiver.close()
