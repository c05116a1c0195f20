"""The `alertmanager` notifier through the real outbox, against Debian's Alertmanager on loopback:
the alert appears with our labels, stays while we re-post, and resolves."""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import select

from monitor.alerts.notifiers.alertmanager import to_alert
from monitor.alerts.outbox import OutboxDelivery, RetryPolicy
from monitor.alerts.records import AlertRecord, Change
from monitor.alerts.scope import Scope
from monitor.alerts.store import apply_changes
from monitor.config import AlertmanagerConfig, Config
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import NotificationOutbox
from tests.integrations.conftest import need, wait_for
from tests.net import free_port

pytestmark = pytest.mark.integration
OUTBOX = NotificationOutbox.__table__
AM_CONFIG = """
route: {receiver: blackhole, group_wait: 1s, group_interval: 1s, repeat_interval: 1h}
receivers: [{name: blackhole}]
"""


@pytest.fixture(scope="module")
def alertmanager(tmp_path_factory):
    binary = need("prometheus-alertmanager")
    work = tmp_path_factory.mktemp("alertmanager")
    (work / "am.yml").write_text(AM_CONFIG)
    port = free_port()
    log = open(work / "am.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={work / 'am.yml'}",
            f"--storage.path={work / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",  # no gossip port: a single loopback instance
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return httpx.get(url + "/-/ready", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    assert wait_for(ready, 30), (work / "am.log").read_text()
    yield url
    proc.terminate()
    proc.wait(20)
    log.close()


def active(url: str) -> list[dict]:
    return httpx.get(url + "/api/v2/alerts", params={"active": "true"}, timeout=5).json()


def test_alert_appears_is_kept_alive_and_resolves(alertmanager, tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'am.db'}")
    migrate.upgrade(engine)
    # A dead second URL: the cluster member that answers is enough.
    dead = f"http://127.0.0.1:{free_port()}"
    notifier = AlertmanagerConfig(name="am", urls=(alertmanager, dead), timeout_s=2, resend_every_s=1.0)
    config = Config(notifiers=(notifier,), secrets=frozenset())
    delivery = OutboxDelivery(policy=RetryPolicy(base_s=1, cap_s=2, lease_s=30))

    now = datetime.now(UTC)
    scope = Scope(provider="openai", region="eu", model="gpt-x", prompt="short")
    record = AlertRecord(
        rule="ttft-regression",
        scope=scope,
        state="firing",
        severity="page",
        metric="ttft_ms",
        started_at=now - timedelta(minutes=3),
        fired_at=now,
        value=912.5,
        baseline=340.0,
        summary="openai/gpt-x eu: TTFT p50 912 ms vs 340 ms baseline",
    )
    with engine.begin() as conn:
        apply_changes(conn, [Change(record, ("firing",))], config.notifiers, dashboard_url="http://dash:8501", now=now)
    assert delivery.run(engine, config).sent == 1

    (alert,) = active(alertmanager)
    assert alert["labels"] == {
        "alertname": "ttft-regression",
        "severity": "page",
        "provider": "openai",
        "model": "gpt-x",
        "region": "eu",
        "prompt": "short",
    }
    annotations = dict(alert["annotations"])
    assert annotations.pop("dashboard_url").startswith("http://dash:8501/")  # a deep link to the alert's view
    assert annotations == {
        "summary": "openai/gpt-x eu: TTFT p50 912 ms vs 340 ms baseline",
        "value": "912.5",
        "baseline": "340",
    }
    assert alert["startsAt"].startswith(record.started_at.strftime("%Y-%m-%dT%H:%M"))
    assert alert["status"]["state"] == "active"

    # The outbox chained the next re-post, due one resend interval later.
    with engine.connect() as conn:
        rows = conn.execute(select(OUTBOX.c.event, OUTBOX.c.status, OUTBOX.c.next_attempt_at)).all()
    assert [(r.event, r.status) for r in rows] == [("firing", "sent"), ("repeat", "pending")]

    # Keep delivering for longer than the first post's endsAt (4 resends): the alert stays active.
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline:
        delivery.run(engine, config)
        time.sleep(0.3)
    (alert,) = active(alertmanager)
    assert datetime.fromisoformat(alert["endsAt"].replace("Z", "+00:00")) > datetime.now(UTC)
    with engine.connect() as conn:
        repeats = conn.execute(select(OUTBOX.c.id).where(OUTBOX.c.event == "repeat", OUTBOX.c.status == "sent")).all()
    assert len(repeats) >= 3

    # Resolved: the queued re-post is dropped, the resolution goes out at once with endsAt.
    resolved_at = datetime.now(UTC)
    from dataclasses import replace

    done = replace(record, id=1, state="resolved", resolved_at=resolved_at)
    with engine.begin() as conn:
        apply_changes(conn, [Change(done, ("resolved",))], config.notifiers, dashboard_url=None, now=resolved_at)
    assert delivery.run(engine, config).sent == 1
    assert wait_for(lambda: active(alertmanager) == [], 10)
    with engine.connect() as conn:
        statuses = [r.status for r in conn.execute(select(OUTBOX.c.status).order_by(OUTBOX.c.id))]
    assert set(statuses) == {"sent"}  # nothing left pending, nothing failed
    engine.dispose()


def test_alert_shape_for_a_provider_wide_scope():
    body = {
        "status": "resolved",
        "rule": "errors",
        "severity": "warn",
        "scope": {"provider": "anthropic", "region": "us", "model": None, "prompt": None},
        "value": None,
        "baseline": 0.01,
        "started_at": "2026-01-01T00:00:00Z",
        "resolved_at": "2026-01-01T00:10:00Z",
        "summary": "s",
        "dashboard_url": None,
    }
    alert = to_alert(body, now=datetime.now(UTC), resend_every_s=60)
    assert alert["labels"] == {"alertname": "errors", "severity": "warn", "provider": "anthropic", "region": "us"}
    assert alert["endsAt"] == "2026-01-01T00:10:00Z" and "generatorURL" not in alert
    assert alert["annotations"] == {"summary": "s", "baseline": "0.01"}
