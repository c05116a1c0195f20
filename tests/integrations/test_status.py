"""Public status on `firsttoken run --listen`: Statuspage v2 JSON, badges, an Atom feed; nothing internal."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import httpx
import pytest

from monitor.http import statuspage as sp
from tests.integrations.conftest import BROKEN, FAST, SECRET_KEY, SLOW, wait_for

pytestmark = pytest.mark.integration
ATOM = "{http://www.w3.org/2005/Atom}"


def get(running, path: str) -> httpx.Response:
    return httpx.get(running.url + path, timeout=10)


def test_status_json_has_the_statuspage_summary_shape(running):
    def ready():
        body = get(running, "/status.json").json()
        names = {c["name"] for c in body["components"]}
        return body if {f"sim/{FAST}", f"sim/{BROKEN}"} <= names and body["incidents"] else None

    body = wait_for(ready, 60)
    assert body, get(running, "/status.json").text
    assert set(body) == {"page", "components", "incidents", "scheduled_maintenances", "status"}
    assert body["page"]["name"] == "LLM provider status" and body["page"]["time_zone"] == "Etc/UTC"
    by_name = {c["name"]: c for c in body["components"]}
    provider = by_name["sim"]
    assert provider["group"] is True and len(provider["components"]) == 3
    assert by_name[f"sim/{FAST}"]["status"] == "operational"
    assert by_name[f"sim/{SLOW}"]["status"] == "operational"
    assert by_name[f"sim/{BROKEN}"]["status"] == "major_outage"  # every probe fails
    assert by_name[f"sim/{BROKEN}"]["group_id"] == provider["id"]
    assert provider["status"] == "major_outage"
    assert body["status"] == {"indicator": "critical", "description": "Major Service Outage"}
    (incident,) = body["incidents"]
    assert incident["status"] == "investigating" and incident["impact"] == "critical"  # its model: major outage
    assert incident["components"][0]["name"] == f"sim/{BROKEN}"
    response = get(running, "/status.json")
    assert response.headers["content-type"] == "application/json"
    assert response.headers["access-control-allow-origin"] == "*"


def test_badge_shows_status_and_p50(running):
    wait_for(lambda: "p50" in get(running, "/badge/sim.svg").text, 60)
    response = get(running, "/badge/sim.svg")
    assert response.status_code == 200 and response.headers["content-type"] == "image/svg+xml"
    svg = ET.fromstring(response.text)
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[0] == "sim" and texts[1].startswith("major outage · p50 ") and texts[1].endswith(" ms")
    missing = get(running, "/badge/nobody.svg")
    assert missing.status_code == 404 and "unknown" in missing.text


def test_incident_feed_is_atom(running):
    assert wait_for(lambda: "<entry>" in get(running, "/incidents.atom").text, 60)
    response = get(running, "/incidents.atom")
    assert response.headers["content-type"] == "application/atom+xml"
    feed = ET.fromstring(response.text)
    assert feed.tag == f"{ATOM}feed" and feed.find(f"{ATOM}title").text == "LLM provider status incidents"
    entries = feed.findall(f"{ATOM}entry")
    assert entries and entries[0].find(f"{ATOM}title").text.startswith("[ongoing] ")
    assert all(e.find(f"{ATOM}id").text.startswith("urn:firsttoken:") for e in entries)


def test_public_routes_reveal_no_config(running, simulator):
    assert wait_for(lambda: "<entry>" in get(running, "/incidents.atom").text, 60)
    bodies = {path: get(running, path).text for path in ("/status.json", "/badge/sim.svg", "/incidents.atom")}
    forbidden = [
        SECRET_KEY,
        "dashboard.internal.example",  # the config's dashboard_url
        f"127.0.0.1:{simulator.port}",  # a region's base URL
        "integ.db",  # the database
        "sqlite",
        "hi",  # the prompt's text is never shown
    ]
    for path, text in bodies.items():
        for secret in forbidden:
            if secret == "hi":
                assert '"hi"' not in text and ">hi<" not in text, path
            else:
                assert secret not in text, (path, secret)


# --------------------------------------------------------------------------- pure builders
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def incident(metric: str, model: str | None = "m", state: str = "firing") -> sp.Incident:
    return sp.Incident(1, "r", metric, "p", model, state, "t", NOW, None, NOW)


@pytest.mark.parametrize(
    ("measured", "failed", "alerts", "model_status", "indicator"),
    [
        (100, 0, [], "operational", "none"),
        (100, 3, [incident("ttft_ms")], "degraded_performance", "minor"),
        (100, 10, [], "partial_outage", "major"),
        (100, 0, [incident("error_rate")], "partial_outage", "major"),
        (100, 60, [], "major_outage", "critical"),
        (0, 0, [], "operational", "none"),
        (100, 0, [incident("ttft_ms", state="resolved")], "operational", "none"),
    ],
)
def test_component_status_from_values(measured, failed, alerts, model_status, indicator):
    status = sp.compute([sp.TargetStats("p", "m", measured, failed, 200.0)], alerts)
    assert status.models[("p", "m")] == model_status and status.indicator == indicator


def test_a_provider_wide_alert_degrades_the_provider_and_every_model():
    stats = [sp.TargetStats("p", "a", 10, 0, 100.0), sp.TargetStats("p", "b", 10, 0, 300.0)]
    status = sp.compute(stats, [incident("ttft_ms", model=None)])
    assert status.providers["p"] == "degraded_performance"
    assert set(status.models.values()) == {"degraded_performance"}
    assert status.provider_p50_ms["p"] == 300.0  # the median of the models' medians (upper middle)
