"""Notifiers against a real local receiver: bodies, signatures, PagerDuty events, apprise, secrets."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import socket
from datetime import UTC, datetime, timedelta

import pytest

from monitor.alerts.notifiers import DeliveryError, build_notifier
from monitor.alerts.notifiers.log import LogNotifier
from monitor.alerts.notifiers.pagerduty import dedup_key, event_body
from monitor.alerts.payload import BODY_KEYS, build_body
from monitor.alerts.records import AlertRecord
from monitor.alerts.scope import Scope
from monitor.config import AppriseConfig, LogNotifierConfig, PagerDutyConfig, WebhookConfig

from .receiver import Receiver

T0 = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
SECRET = "whsec-0123456789abcdef"
ROUTING_KEY = "R0UTINGKEY0123456789abcdef012345"


def record(**kw) -> AlertRecord:
    values = dict(
        rule="ttft-regression",
        scope=Scope(provider="openai", region="global", model="gpt-4o", prompt="short"),
        state="firing",
        severity="page",
        metric="ttft_ms",
        started_at=T0,
        fired_at=T0 + timedelta(minutes=2),
        value=812.5,
        baseline=401.25,
        summary="ttft-regression: ttft_ms of openai/gpt-4o@global:short is 812 ms, baseline 401 ms (+102%)",
    )
    values.update(kw)
    return AlertRecord(**values)


def firing_body(**kw):
    return build_body(record(**kw), "firing", 42, "https://dash.example")


def test_webhook_body_is_exactly_design_section_5():
    body = firing_body()
    assert tuple(body) == BODY_KEYS
    assert body == {
        "status": "firing",
        "alert_id": 42,
        "rule": "ttft-regression",
        "severity": "page",
        "scope": {"provider": "openai", "model": "gpt-4o", "region": "global", "prompt": "short", "agent": None},
        "metric": "ttft_ms",
        "value": 812.5,
        "baseline": 401.25,
        "fired_value": None,
        "worst_value": None,
        "started_at": "2025-06-01T12:00:00Z",
        "resolved_at": None,
        "summary": body["summary"],
        # The alert's own view (monitor.alerts.links): its target, from before it started, marked.
        "dashboard_url": "https://dash.example/target?target=openai%2Fgpt-4o%40global%3Ashort"
        "&from=2025-06-01T11%3A30Z&alert=42",
        # DESIGN §11: no vantage-point information on a record built without it.
        "agents": [],
        "agents_clear": [],
        "attribution": None,
        # DESIGN §18: the rule's runbook, the signed chart and silence links (none without public_url).
        "runbook": None,
        "chart_url": None,
        "silence_url": None,
    }
    group = build_body(record(scope=Scope(provider="bedrock", region="eu-west-1")), "firing", 7, None)
    assert group["scope"] == {
        "provider": "bedrock",
        "model": None,
        "region": "eu-west-1",
        "prompt": None,
        "agent": None,
    }
    resolved = build_body(record(state="resolved", resolved_at=T0 + timedelta(hours=1)), "resolved", 42, None)
    assert resolved["status"] == "resolved" and resolved["resolved_at"] == "2025-06-01T13:00:00Z"
    assert build_body(record(value=float("nan")), "firing", 1, None)["value"] is None


def test_webhook_posts_signed_json_with_delivery_and_event_headers():
    with Receiver() as rx:
        config = WebhookConfig(name="hooks", url=rx.url + "/alerts", secret=SECRET, headers={"X-Team": "sre"})
        notifier = build_notifier(config)
        notifier.send(firing_body(), event="firing", delivery_id="17")
        notifier.close()
    (req,) = rx.requests
    assert req.path == "/alerts" and req.headers["content-type"] == "application/json"
    assert req.json() == firing_body()
    expected = hmac.new(SECRET.encode(), req.raw, hashlib.sha256).hexdigest()
    assert req.headers["x-firsttoken-signature"] == f"sha256={expected}"
    assert req.headers["x-firsttoken-delivery"] == "17" and req.headers["x-firsttoken-event"] == "firing"
    assert req.headers["x-team"] == "sre"
    assert SECRET not in req.raw.decode()


def test_webhook_without_secret_sends_no_signature():
    with Receiver() as rx:
        build_notifier(WebhookConfig(name="h", url=rx.url)).send(firing_body(), event="firing", delivery_id="1")
    assert "x-firsttoken-signature" not in rx.requests[0].headers


@pytest.mark.parametrize(
    ("status", "retryable"), [(500, True), (503, True), (429, True), (408, True), (400, False), (404, False)]
)
def test_webhook_errors_are_classified(status, retryable):
    with Receiver(fail_first=1, fail_status=status) as rx:
        notifier = build_notifier(WebhookConfig(name="h", url=rx.url + "/hook/tok3n-abcdef123456", secret=SECRET))
        with pytest.raises(DeliveryError) as err:
            notifier.send(firing_body(), event="firing", delivery_id="1")
    assert err.value.retryable is retryable
    assert f"HTTP {status}" in str(err.value)
    assert "tok3n" not in str(err.value) and SECRET not in str(err.value)


def test_webhook_connection_refused_and_timeout_are_retryable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    notifier = build_notifier(WebhookConfig(name="h", url=f"http://127.0.0.1:{port}/x"))
    with pytest.raises(DeliveryError) as err:
        notifier.send(firing_body(), event="firing", delivery_id="1")
    assert err.value.retryable
    with Receiver(delay_s=1.0) as rx:
        slow = build_notifier(WebhookConfig(name="h", url=rx.url, timeout_s=0.2))
        with pytest.raises(DeliveryError) as err:
            slow.send(firing_body(), event="firing", delivery_id="1")
    assert err.value.retryable and "timed out" in str(err.value)


def test_pagerduty_trigger_and_resolve_share_a_stable_dedup_key():
    with Receiver(ok_status=202) as rx:
        config = PagerDutyConfig(name="oncall", routing_key=ROUTING_KEY, url=rx.url + "/v2/enqueue")
        notifier = build_notifier(config)
        notifier.send(firing_body(), event="firing", delivery_id="1")
        notifier.send(firing_body(value=900.0), event="repeat", delivery_id="2")
        resolved = build_body(record(state="resolved", resolved_at=T0 + timedelta(hours=1)), "resolved", 42, None)
        notifier.send(resolved, event="resolved", delivery_id="3")
    trigger, repeat, resolve = (r.json() for r in rx.requests)
    assert trigger["routing_key"] == ROUTING_KEY and trigger["event_action"] == "trigger"
    assert trigger["dedup_key"] == repeat["dedup_key"] == resolve["dedup_key"]
    assert trigger["dedup_key"].startswith("firsttoken:ttft-regression:") and "42" in trigger["dedup_key"]
    assert resolve == {"routing_key": ROUTING_KEY, "event_action": "resolve", "dedup_key": trigger["dedup_key"]}
    payload = trigger["payload"]
    assert set(payload) == {
        "summary",
        "source",
        "severity",
        "timestamp",
        "component",
        "group",
        "class",
        "custom_details",
    }
    assert payload["severity"] == "critical" and payload["timestamp"] == "2025-06-01T12:00:00Z"
    assert payload["source"] == "openai/gpt-4o@global:short" and payload["component"] == "gpt-4o"
    assert payload["group"] == "openai@global" and payload["class"] == "ttft_ms"
    assert payload["custom_details"]["value"] == 812.5 and payload["custom_details"]["baseline"] == 401.25
    link = firing_body()["dashboard_url"]
    assert link.startswith("https://dash.example/target?") and trigger["client_url"] == link
    assert trigger["links"] == [{"href": link, "text": "firsttoken: this alert on the dashboard"}]


def test_pagerduty_severity_mapping_and_key_for_other_alerts():
    assert event_body(firing_body(severity="ticket"), "k")["payload"]["severity"] == "warning"
    assert event_body(firing_body(severity="info"), "k")["payload"]["severity"] == "info"
    assert event_body(firing_body(severity="whatever"), "k")["payload"]["severity"] == "warning"
    other = build_body(record(), "firing", 43, None)
    assert dedup_key(other) != dedup_key(firing_body())
    long = firing_body(scope=Scope(provider="p", region="r", model="m" * 300, prompt="x"))
    assert len(dedup_key(long)) <= 255 and dedup_key(long) == dedup_key(long)


def test_pagerduty_rejection_never_shows_the_routing_key():
    with Receiver(fail_first=1, fail_status=400, echo=True) as rx:  # the error quotes the request, key included
        config = PagerDutyConfig(name="oncall", routing_key=ROUTING_KEY, url=rx.url + "/v2/enqueue")
        with pytest.raises(DeliveryError) as err:
            build_notifier(config).send(firing_body(), event="firing", delivery_id="1")
    assert not err.value.retryable and "HTTP 400" in str(err.value)
    assert "routing_key" in str(err.value) and ROUTING_KEY not in str(err.value)


def test_apprise_json_url_reaches_a_local_receiver():
    with Receiver() as rx:
        port = rx.url.rsplit(":", 1)[1]
        config = AppriseConfig(name="chat", urls=(f"json://127.0.0.1:{port}/apprise/S3CRETPATHTOKEN",))
        notifier = build_notifier(config)
        notifier.send(firing_body(fired_value=790.0, worst_value=1250.0), event="firing", delivery_id="1")
    (req,) = rx.requests
    assert req.path == "/apprise/S3CRETPATHTOKEN"
    message = req.json()
    assert message["title"].startswith("[FIRING] ttft-regression (page)") and "model=gpt-4o" in message["title"]
    assert "812 ms" in message["message"] and "baseline 401 ms" in message["message"]
    assert "fired at 790 ms, worst 1,250 ms" in message["message"]
    assert firing_body()["dashboard_url"] in message["message"]  # the deep link, in the text
    assert message["type"] == "failure"


def test_apprise_failure_is_retryable_and_redacted():
    with Receiver(fail_first=5, fail_status=503) as rx:
        port = rx.url.rsplit(":", 1)[1]
        url = f"json://user:pa55word-xyz@127.0.0.1:{port}/apprise/S3CRETPATHTOKEN"
        notifier = build_notifier(AppriseConfig(name="chat", urls=(url,)), secrets=(url,))
        with pytest.raises(DeliveryError) as err:
            notifier.send(firing_body(), event="firing", delivery_id="1")
    assert err.value.retryable
    text = str(err.value)
    assert "S3CRETPATHTOKEN" not in text and "pa55word" not in text


def test_log_notifier_prints_one_readable_line():
    out = io.StringIO()
    LogNotifier(LogNotifierConfig(name="log"), stream=out).send(firing_body(), event="firing", delivery_id="1")
    line = out.getvalue()
    assert line.count("\n") == 1
    assert line.startswith("ALERT FIRING #42 [page] ttft-regression: ttft_ms of openai/gpt-4o@global:short is 812 ms")


def test_registry_builds_each_type_and_refuses_unknown_ones():
    assert build_notifier(LogNotifierConfig(name="l")).name == "l"
    assert build_notifier(WebhookConfig(name="w", url="http://127.0.0.1:1")).name == "w"
    assert build_notifier(PagerDutyConfig(name="p", routing_key=ROUTING_KEY)).name == "p"

    class Odd:
        type = "carrier-pigeon"

    with pytest.raises(DeliveryError):
        build_notifier(Odd())
    json.dumps(firing_body())  # the stored body is plain JSON
