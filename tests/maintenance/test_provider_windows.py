"""Providers' scheduled maintenances (DESIGN §16): read by the leader's status-page poll from the
`scheduled-maintenances.json` beside the configured summary (or the summary's own list), stored as
windows of source `provider`: shown, never muting, never out of SLO budgets. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from monitor.alerts.scope import Scope
from monitor.config import load_config_text
from monitor.maintenance.store import active_windows, coverage_between, windows_between
from monitor.official.poll import maintenances_url, parse_maintenances, poll_status_pages
from tests.integrations.conftest import StatusPageServer

T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)


def planned(mid: str, name: str, starts: datetime, ends: datetime, status: str = "scheduled", **extra) -> dict:
    iso = lambda t: t.isoformat().replace("+00:00", "Z")  # noqa: E731
    return {
        "id": mid,
        "name": name,
        "status": status,
        "impact": "maintenance",
        "scheduled_for": iso(starts),
        "scheduled_until": iso(ends),
        "resolved_at": None,
        "shortlink": f"https://stspg.io/{mid}",
        "incident_updates": [],
        **extra,
    }


@pytest.fixture
def page():
    server = StatusPageServer()
    yield server
    server.stop()


def config_for(url: str):
    spec = {
        "providers": {
            "acme": {
                "protocol": "openai-chat",
                "regions": {"r": "http://127.0.0.1:9/v1"},
                "models": ["m"],
                "status_page": url,
            }
        },
        "prompts": {"p": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
        "checks": [{"providers": ["acme"], "prompts": ["p"]}],
    }
    return load_config_text(json.dumps(spec), env={})


def provider_windows(db, start=T0 - timedelta(days=1), end=T0 + timedelta(days=7)):
    with db.connect() as conn:
        return [w for w in windows_between(conn, (), start, end) if w.source == "provider"]


def test_polled_stored_updated_cancelled_and_never_muting(db, page):
    hour = timedelta(hours=1)
    page.maintenances = [
        planned("m1", "Database upgrade", T0 + hour, T0 + 2 * hour),
        planned("m2", "Network work", T0 - 3 * hour, T0 - hour, status="completed", resolved_at="2026-05-04T08:30:00Z"),
        planned("m3", "No end given", T0, T0 + hour, scheduled_until=None),
    ]
    config = config_for(page.url)
    assert poll_status_pages(db, config, now=T0) == {"acme": 0}
    assert (page.hits, page.maintenance_hits) == (1, 1)
    got = {w.name: w for w in provider_windows(db)}
    assert set(got) == {"Database upgrade", "Network work"}
    upgrade, network = got["Database upgrade"], got["Network work"]
    assert (upgrade.starts_at, upgrade.ends_at, dict(upgrade.match)) == (T0 + hour, T0 + 2 * hour, {"provider": "acme"})
    assert network.ends_at == T0 - timedelta(minutes=90)  # completed half an hour early
    assert upgrade.note == "Database upgrade" and not upgrade.ours

    # In effect, shown as active, but it mutes nothing and takes nothing out of an SLO budget.
    with db.connect() as conn:
        (running,) = active_windows(conn, (), T0 + 1.5 * hour)
        cover = coverage_between(conn, (), config.targets, T0, T0 + 3 * hour)
    assert running.name == "Database upgrade" and running.kind == "maintenance"
    assert not running.mutes(Scope(provider="acme", region="r", model="m", prompt="p"))
    assert not cover.covers(config.targets[0].id, T0 + 1.5 * hour)

    # Moved by the provider: updated in place; then cancelled (no longer listed, not begun): deleted.
    page.maintenances[0] = planned("m1", "Database upgrade", T0 + 3 * hour, T0 + 4 * hour)
    poll_status_pages(db, config, now=T0)
    assert [(w.name, w.starts_at) for w in provider_windows(db) if w.name == "Database upgrade"] == [
        ("Database upgrade", T0 + 3 * hour)
    ]
    page.maintenances = [page.maintenances[1]]
    poll_status_pages(db, config, now=T0)
    assert [w.name for w in provider_windows(db)] == ["Network work"]  # the past one stays


def test_without_the_maintenances_document_the_summary_list_is_read(db, page):
    page.maintenances = None  # 404 beside the summary
    page.document["scheduled_maintenances"] = [planned("s1", "Failover test", T0, T0 + timedelta(hours=1))]
    poll_status_pages(db, config_for(page.url), now=T0)
    assert [w.name for w in provider_windows(db)] == ["Failover test"]
    del page.document["scheduled_maintenances"]  # neither says: what is stored stays
    poll_status_pages(db, config_for(page.url), now=T0 - timedelta(hours=1))
    assert [w.name for w in provider_windows(db)] == ["Failover test"]


def test_urls_and_parsing():
    assert maintenances_url("https://status.openai.com/api/v2/summary.json") == (
        "https://status.openai.com/api/v2/scheduled-maintenances.json"
    )
    assert maintenances_url("https://x.example/api/v2/incidents.json?k=1") == (
        "https://x.example/api/v2/scheduled-maintenances.json?k=1"
    )
    assert maintenances_url("https://x.example/status") is None
    with pytest.raises(ValueError):
        parse_maintenances({"incidents": []})
    assert parse_maintenances({"scheduled_maintenances": [{"name": "no id"}, "junk"]}) == []
