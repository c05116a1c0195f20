"""Providers' official status pages: polled from a local Statuspage v2 server, stored, closed when
they stop being listed, and timed against our alerts (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from monitor.alerts.records import AlertRecord, Change
from monitor.alerts.scope import Scope
from monitor.alerts.store import apply_changes
from monitor.config import load_config_text
from monitor.official.match import lead_minutes, lead_text, matching_incident
from monitor.official.poll import parse_summary, poll_status_pages
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import NotificationOutbox
from monitor.storage.queries.official import incidents_between
from tests.integrations.conftest import StatusPageServer, official_incident, wait_for

pytestmark = pytest.mark.integration
T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)


@pytest.fixture
def page():
    server = StatusPageServer()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request, tmp_path):
    if request.param == "sqlite":
        eng = make_engine(f"sqlite:///{tmp_path / 'official.db'}")
    else:
        from tests.pg import pg_url

        eng = make_engine(pg_url(request.getfixturevalue("pg_server").create_database()))
    migrate.upgrade(eng)
    yield eng
    eng.dispose()


def config_for(tmp_path, pages: dict[str, str]):
    spec = {
        "providers": {
            name: {
                "protocol": "openai-chat",
                "regions": {"r": "http://127.0.0.1:9/v1"},
                "models": ["m"],
                "status_page": url,
            }
            for name, url in pages.items()
        },
        "prompts": {"p": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
        "checks": [{"providers": list(pages), "prompts": ["p"]}],
    }
    return load_config_text(json.dumps(spec), base_dir=tmp_path, env={})


def test_incidents_are_stored_updated_and_closed(engine, page, tmp_path):
    broken = StatusPageServer()
    broken.status_code = 503
    config = config_for(tmp_path, {"acme": page.url, "other": broken.url})
    try:
        page.document["incidents"] = [official_incident("i1", "Elevated errors", "2026-05-04T10:12:00Z")]
        assert poll_status_pages(engine, config, now=T0 + timedelta(minutes=15)) == {"acme": 1}  # `other` failed
        (stored,) = incidents_between(engine, T0, T0 + timedelta(hours=1))
        assert (stored.provider, stored.source_id, stored.name, stored.status, stored.impact) == (
            "acme",
            "i1",
            "Elevated errors",
            "investigating",
            "major",
        )
        assert stored.started_at == T0 + timedelta(minutes=12) and stored.resolved_at is None

        # Updated in place (no second row), then gone from the summary: resolved at that poll.
        page.document["incidents"][0].update(status="monitoring", updated_at="2026-05-04T10:30:00Z")
        poll_status_pages(engine, config, now=T0 + timedelta(minutes=31))
        (stored,) = incidents_between(engine, T0, T0 + timedelta(hours=1))
        assert stored.status == "monitoring"
        page.document["incidents"] = []
        poll_status_pages(engine, config, now=T0 + timedelta(minutes=45))
        (stored,) = incidents_between(engine, T0, T0 + timedelta(hours=1))
        assert stored.status == "resolved" and stored.resolved_at == T0 + timedelta(minutes=45)
        assert broken.hits == 3 and page.hits == 3
    finally:
        broken.stop()


def test_each_alert_says_how_far_ahead_of_the_official_incident_it_fired(engine, page, tmp_path):
    config = config_for(tmp_path, {"acme": page.url})
    page.document["incidents"] = [official_incident("i9", "Degraded latency", "2026-05-04T10:12:00Z")]
    poll_status_pages(engine, config, now=T0 + timedelta(minutes=20))
    (official,) = incidents_between(engine, T0, T0 + timedelta(hours=1))
    assert lead_minutes(T0, official) == 12
    assert lead_text(T0, official) == "12 min before acme's own incident (Degraded latency)"
    assert lead_text(T0 + timedelta(minutes=20), official) == "8 min after acme's own incident (Degraded latency)"
    assert matching_incident("acme", T0 - timedelta(hours=4), [official]) is None
    assert matching_incident("other", T0, [official]) is None

    # The notification says it too: the body carries `official_incident`.
    scope = Scope(provider="acme", region="r", model="m", prompt="p")
    record = AlertRecord(
        rule="slow", scope=scope, state="resolved", severity="page", metric="ttft_ms", started_at=T0, fired_at=T0
    )
    with engine.begin() as conn:
        apply_changes(conn, [Change(record, ("firing",))], config.notifiers or (), dashboard_url=None, now=T0)
    from monitor.config import LogNotifierConfig

    with engine.begin() as conn:
        apply_changes(
            conn, [Change(record, ("resolved",))], (LogNotifierConfig(name="log"),), dashboard_url=None, now=T0
        )
        (payload,) = [r.payload for r in conn.execute(NotificationOutbox.__table__.select())]
    assert payload["official_incident"] == "12 min before acme's own incident (Degraded latency)"


def test_parse_refuses_what_is_not_a_statuspage_summary():
    with pytest.raises(ValueError):
        parse_summary("x", {"status": "ok"})
    (done,) = parse_summary(
        "x", {"incidents": [official_incident("a", "n", "2026-01-01T00:00:00Z", status="resolved")]}
    )
    assert done.resolved_at is not None  # resolved without resolved_at: its last update closes it


def test_the_leader_of_a_real_run_polls_the_configured_page(running, status_page):
    def stored():
        with sqlite3.connect(running.db) as conn:
            return conn.execute("SELECT provider, source_id, name FROM provider_incidents").fetchall()

    assert wait_for(stored, 30) == [("sim", "inc-run-1", "Elevated error rates")]
    assert status_page.hits >= 1
    assert status_page.url not in running.output()  # the page's URL is config: the log names its host only
