"""Deep links (monitor.alerts.links): each alert opens its own scope, around its own time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

from monitor.alerts.links import alert_url
from monitor.alerts.payload import build_body
from monitor.alerts.records import FIRING, RESOLVED, AlertRecord
from monitor.alerts.scope import Scope

T0 = datetime(2026, 12, 1, 9, 41, 30, tzinfo=UTC)
TARGET = Scope(provider="openai", region="us", model="gpt-4o", prompt="short")


def _query(url: str) -> tuple[str, dict[str, list[str]]]:
    parts = urlsplit(url)
    return parts.path, parse_qs(parts.query)


def test_a_target_alert_opens_the_target_page_from_before_it_started_with_no_end_while_firing():
    url = alert_url("https://mon.example.com/", alert_id=42, scope=TARGET.labels(), started_at=T0)
    assert url.startswith("https://mon.example.com/target?")
    _, q = _query(url)
    assert q == {"target": ["openai/gpt-4o@us:short"], "from": ["2026-12-01T09:11Z"], "alert": ["42"]}


def test_a_resolved_alert_link_ends_after_its_resolution():
    _, q = _query(alert_url("http://h:8501", alert_id=7, scope=TARGET.labels(), started_at=T0,
                            resolved_at=T0 + timedelta(hours=4)))  # fmt: skip
    # A margin of a quarter of four hours on both sides; minutes rounded outwards.
    assert q["from"] == ["2026-12-01T08:41Z"] and q["to"] == ["2026-12-01T14:42Z"]


def test_a_provider_region_alert_opens_trends_on_every_model_of_that_provider_and_region():
    path, q = _query(alert_url("http://h", alert_id=3, scope=TARGET.group().labels(), started_at=T0))
    assert path == "/trends"
    assert q["provider"] == ["openai"] and q["region"] == ["us"] and q["model"] == ["*"] and q["prompt"] == ["*"]


def test_no_base_no_link_and_the_body_carries_the_deep_link():
    assert alert_url(None, alert_id=1, scope=TARGET.labels(), started_at=T0) is None
    record = AlertRecord("slow", TARGET, FIRING, "page", "ttft_ms", T0, fired_at=T0, value=900.0, baseline=300.0,
                         fired_value=800.0, worst_value=950.0)  # fmt: skip
    body = build_body(record, "firing", 5, "https://mon.example.com")
    assert body["dashboard_url"] == alert_url("https://mon.example.com", alert_id=5, scope=TARGET.labels(),
                                              started_at=T0)  # fmt: skip
    assert (body["fired_value"], body["worst_value"]) == (800.0, 950.0)
    assert build_body(record, "firing", 5, None)["dashboard_url"] is None
    done = build_body(
        AlertRecord("slow", TARGET, RESOLVED, "page", "ttft_ms", T0, resolved_at=T0 + timedelta(minutes=10)),
        "resolved", 5, "https://mon.example.com",
    )  # fmt: skip
    assert "to=2026-12-01T10%3A22Z" in done["dashboard_url"]


def test_an_agent_alert_links_to_trends_with_a_line_per_agent():
    from monitor.alerts.scope import Scope

    url = alert_url("http://h", alert_id=9, scope=Scope.of_agent("eu-west").labels(), started_at=T0)
    path, q = _query(url)
    assert path == "/trends" and q["split"] == ["agent"] and q["alert"] == ["9"]
