"""The Alerts page's Incidents section: publish, post an update, resolve (what `firsttoken incident` does),
through dashboard/writes.py, on SQLite and PostgreSQL (the dashboard's own reads stay read-only)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from monitor.alerts.records import Change
from monitor.alerts.scope import Scope
from monitor.incidents.views import get_incident
from monitor.storage.db import make_engine
from tests.dashboard.figures import problems
from tests.incidents.rounds import write_round
from tests.incidents.test_drafting import firing


@pytest.fixture
def held(seeded):
    """(database URL, engine): the seeded database with one drafted incident, held (`publish: manual`)."""
    url, _ = seeded
    engine = make_engine(url)
    site = type("Site", (), {"publish": "manual", "components": ("*",)})
    config = type("Config", (), {"status_site": site, "targets": ()})
    now = datetime.now(UTC)
    page = firing(
        Scope("p", "r1", "m0", "short"), rule="slow", fired_at=now - timedelta(minutes=9), last_notified_at=now
    )
    write_round(engine, [Change(page)], config, now)
    yield url, engine
    engine.dispose()


def test_publish_update_and_resolve_from_the_alerts_page(app, held):
    url, engine = held
    at = app(url).run()
    at.switch_page("pages/alerts.py").run()
    assert not problems(at), problems(at)
    (table,) = [t.value for t in at.dataframe if "drafts" in t.value.columns]
    assert table["status"].tolist() == ["draft"] and table["title"].tolist()[0].startswith("p m0: slow")

    at.button(key="incident-publish").click().run()
    assert any("published (1 update made public)" in s.value for s in at.success), [s.value for s in at.success]
    with engine.connect() as conn:
        assert get_incident(conn, 1).status == "published"

    at.text_area[0].input("A fix is rolling out.")
    at.selectbox(key="incident-state").select("monitoring")
    (post,) = [b for b in at.button if b.label.startswith("Post update")]
    post.click().run()
    assert not problems(at), problems(at)
    at.button(key="incident-resolve").click().run()
    with engine.connect() as conn:
        incident = get_incident(conn, 1)
    shown = json.loads(json.dumps(incident.as_json()))
    assert shown["state"] == "resolved"
    assert [(u["kind"], u["state"], u["created_by"], u["published"]) for u in shown["updates"]] == [
        ("detected", "investigating", None, True),
        ("update", "monitoring", "dashboard", True),
        ("resolved", "resolved", "dashboard", True),
    ]
