"""`alertmanager` notifier: config from YAML, and its minimal send (API v2, every cluster member)."""

from __future__ import annotations

import pytest

from monitor.alerts.notifiers import DeliveryError, build_notifier
from monitor.alerts.notifiers.alertmanager import AlertmanagerConfig, alerts_body
from tests.config_helpers import load, minimal

from .receiver import Receiver
from .test_notifiers import firing_body


def test_config_takes_one_url_or_a_cluster():
    (one,) = load(minimal(notifiers=[{"name": "am", "type": "alertmanager", "url": "http://am:9093"}])).notifiers
    assert isinstance(one, AlertmanagerConfig) and one.urls == ("http://am:9093",)
    assert (one.timeout_s, one.resend_every_s) == (10.0, 60.0)
    cluster = {"name": "am", "type": "alertmanager", "url": ["http://a:9093", "http://b:9093"], "resend_every": "30s"}
    (two,) = load(minimal(notifiers=[cluster])).notifiers
    assert two.urls == ("http://a:9093", "http://b:9093") and two.resend_every_s == 30.0


def test_body_is_an_api_v2_alert_list():
    (alert,) = alerts_body(firing_body())
    assert alert["labels"]["alertname"] == "ttft-regression" and alert["labels"]["provider"] == "openai"
    assert alert["startsAt"] == "2025-06-01T12:00:00Z" and "endsAt" not in alert
    assert alert["generatorURL"] == "https://dash.example/alerts" and alert["annotations"]["summary"]
    resolved = alerts_body({**firing_body(), "status": "resolved", "resolved_at": "2025-06-01T13:00:00Z"})
    assert resolved[0]["endsAt"] == "2025-06-01T13:00:00Z"


def test_send_posts_to_every_member_and_fails_only_when_none_took_it():
    with Receiver() as up, Receiver(fail_first=10, fail_status=503) as down:
        notifier = build_notifier(AlertmanagerConfig(name="am", urls=(up.url + "/", down.url)))
        notifier.send(firing_body(), event="firing", delivery_id="1")
        notifier.close()
        assert [r.path for r in up.requests] == ["/api/v2/alerts"] and len(down.requests) == 1
        assert isinstance(up.requests[0].json(), list)
    with Receiver(fail_first=10, fail_status=503) as down:
        with pytest.raises(DeliveryError) as exc:
            build_notifier(AlertmanagerConfig(name="am", urls=(down.url,))).send(
                firing_body(), event="firing", delivery_id="2"
            )
        assert exc.value.retryable
