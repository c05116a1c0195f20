"""Route truth on the dashboard: Compare's best route now, Samples' route columns, and a
route change on the timeline and the Trends chart (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete, text

from monitor.storage.db import make_engine
from monitor.storage.models import Alert
from tests.dashboard.figures import figures, problems


@pytest.fixture
def route_change(seeded):
    """A resolved served_by change on the first seeded target; removed afterwards (the seed is shared)."""
    url, data = seeded
    engine = make_engine(url)
    target = data.samples[0]
    now = datetime.now(UTC)
    row = dict(scope_kind="target", scope_key=target.target, provider=target.provider, model=target.model,
               region=target.region, prompt=target.prompt, severity="ticket", summary="route changed",
               state="resolved", rule="route-changed", metric="served_by", value_text="Together",
               baseline_text="Groq", started_at=now - timedelta(hours=3), fired_at=now - timedelta(hours=3),
               resolved_at=now - timedelta(hours=2))  # fmt: skip
    with engine.begin() as conn:
        conn.execute(Alert.__table__.insert(), row)
        conn.execute(text("UPDATE samples SET served_by = 'Together', fallback = true WHERE target = :t"),
                     {"t": target.target})  # fmt: skip
    yield url, target
    with engine.begin() as conn:
        conn.execute(delete(Alert.__table__).where(Alert.__table__.c.rule == "route-changed"))
        conn.execute(text("UPDATE samples SET served_by = NULL, fallback = NULL WHERE target = :t"),
                     {"t": target.target})  # fmt: skip
    engine.dispose()


def test_compare_shows_the_best_route_now_and_the_routes_that_fell_back(app, route_change):
    url, target = route_change
    at = app(url).run()
    at.switch_page("pages/compare.py").run()
    assert not problems(at), problems(at)
    assert "Best route now (last 30 min)" in [h.value for h in at.subheader]
    best = [t.value for t in at.dataframe if "best route" in t.value.columns]
    assert best and set(best[0]["model"]) <= {"gpt-4o-mini", "claude-3-5-haiku"}
    if target.prompt == at.selectbox(key="compare-prompt").value:
        assert any("Fell back" in c.value and target.target in c.value for c in at.caption)


def test_samples_show_served_by_and_fallback(app, route_change):
    url, target = route_change
    at = app(url).run()
    at.switch_page("pages/samples.py").run()
    at.selectbox(key="samples-target").set_value(target.target).run()
    assert not problems(at), problems(at)
    table = at.dataframe[-1].value
    assert {"served by", "fingerprint", "fallback"} <= set(table.columns)
    assert set(table["served by"]) == {"Together"} and set(table["fallback"]) == {"yes"}


def test_a_route_change_is_marked_on_the_timeline_and_the_trends_chart(app, route_change):
    url, _ = route_change
    at = app(url).run()
    at.switch_page("pages/timeline.py").run()
    assert not problems(at), problems(at)
    names = {trace.get("name") for f in figures(at) for trace in f["data"]}
    assert "route change" in names
    at.switch_page("pages/trends.py").run()
    assert not problems(at), problems(at)
    notes = [a.get("text", "") for f in figures(at) for a in f["layout"].get("annotations", [])]
    assert any("served_by: Groq → Together" in n for n in notes), notes


def test_alert_rows_show_a_change_alerts_labels():
    from dashboard.alert_rows import row
    from monitor.storage.queries.alertviews import AlertView

    now = datetime.now(UTC)
    view = AlertView(1, "route-changed", "target", "gw/m@r:p", "gw", "m", "r", "p", "resolved", "ticket",
                     "served_by", None, None, now - timedelta(hours=1), now - timedelta(hours=1), now,
                     "route-changed: served_by of gw/m@r:p changed from Groq to Together", False,
                     value_text="Together", baseline_text="Groq")  # fmt: skip
    r = row(view, now, links=False)
    assert (r["fired at"], r["baseline"], r["resolved at"]) == ("Together", "Groq", "Together")
