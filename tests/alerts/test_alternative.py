"""The alternative route in a route alert (monitor.alerts.alternative), and how each notifier shows it."""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.alerts.alternative import alternative_text, best_other
from monitor.alerts.notifiers.alertmanager import to_alert
from monitor.alerts.notifiers.pagerduty import event_body
from monitor.alerts.payload import with_alternative
from monitor.routing.rank import RouteStats, rank_routes


def stats(provider: str, p50: float, ok: int = 100, samples: int = 100, model: str = "llama-3.1-70b-versatile"):
    return RouteStats(
        target=f"{provider}/{model}@global:short", provider=provider, model=model, canonical_model="llama-3.1-70b",
        region="global", prompt="short", samples=samples, ok=ok, ttft_p50_ms=p50,
    )  # fmt: skip


RANKED = rank_routes([stats("groq", 310.4), stats("together", 520), stats("fireworks", 90, ok=90)])


def test_the_alternative_is_the_best_other_route_above_the_floor():
    alt = best_other(RANKED, "together/llama-3.1-70b-versatile@global:short")
    assert alt == {
        "target": "groq/llama-3.1-70b-versatile@global:short",
        "provider": "groq",
        "model": "llama-3.1-70b-versatile",
        "region": "global",
        "ttft_ms": {"p50": 310.4},
        "availability": 1.0,
    }
    # The alert is on the best route: the next one up; the fast but failing route never.
    assert best_other(RANKED, "groq/llama-3.1-70b-versatile@global:short")["provider"] == "together"
    assert best_other(rank_routes([stats("groq", 300), stats("fireworks", 90, ok=90)]), stats("groq", 0).target) is None


def test_the_summary_reads_as_advice():
    alt = best_other(RANKED, "together/llama-3.1-70b-versatile@global:short")
    assert alternative_text(alt) == "consider groq/llama-3.1-70b-versatile@global: p50 310 ms, 100%"
    assert alternative_text(None) == ""
    body = {"status": "firing", "summary": "ttft-regression: ttft_ms of together/… is 1,900 ms"}
    with_alternative(body, alt)
    assert body["alternative"] == alt
    assert body["summary"].endswith("; consider groq/llama-3.1-70b-versatile@global: p50 310 ms, 100%")
    resolved = with_alternative({"status": "resolved", "summary": "resolved: x"}, alt)
    assert resolved["alternative"] is None and resolved["summary"] == "resolved: x"
    assert with_alternative({"status": "firing", "summary": "x"}, None) == {
        "status": "firing",
        "summary": "x",
        "alternative": None,
    }


def test_pagerduty_and_alertmanager_carry_it():
    alt = best_other(RANKED, "together/llama-3.1-70b-versatile@global:short")
    body = with_alternative(
        {"status": "firing", "rule": "r", "severity": "page", "summary": "s", "metric": "ttft_ms",
         "scope": {"provider": "together", "model": "llama-3.1-70b-versatile", "region": "global", "prompt": "short"},
         "alert_id": 1, "started_at": "2026-12-01T00:00:00Z"},
        alt,
    )  # fmt: skip
    assert event_body(body, "rk")["payload"]["custom_details"]["alternative"] == alt
    annotations = to_alert(body, now=datetime(2026, 12, 1, tzinfo=UTC), resend_every_s=60)["annotations"]
    assert annotations["alternative"] == "consider groq/llama-3.1-70b-versatile@global: p50 310 ms, 100%"
