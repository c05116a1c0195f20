"""Every page renders against a seeded SQLite and PostgreSQL database, with the seeded data in it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.dashboard.figures import figures, problems

PAGES = {
    "overview": 1,  # the matrix
    "trends": 1,
    "compare": 3,  # bars, TTFT vs prompt length, TTFT vs TPS
    "timeline": 1,  # the seeded firing alert and failures make at least one lane
    "health": 1,
    "alerts": 0,
    "samples": 1,
    "reports": 0,  # the reports are HTML (charts inside as PNGs), previewed in a frame
}


@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_with_data(app, seeded, page):
    url, _ = seeded
    at = app(url).run()
    assert not problems(at), problems(at)
    if page != "overview":
        at.switch_page(f"pages/{page}.py").run()
    assert not problems(at), problems(at)
    assert len(figures(at)) >= PAGES[page]
    assert not at.warning, [w.value for w in at.warning]


def test_overview_shows_every_target_and_the_firing_alert(app, seeded):
    url, _data = seeded
    at = app(url).run()
    (grid,) = [f for f in figures(at) if f["data"][0]["type"] == "heatmap"]
    heat = grid["data"][0]
    assert set(heat["y"]) == {"anthropic/claude-3-5-haiku", "openai/gpt-4o-mini"}
    assert set(heat["x"]) == {"eu-west-1 · long", "eu-west-1 · short"}
    assert all(v is not None for row in heat["z"] for v in row)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Firing alerts"] == "1"
    assert sum(int(metrics[k]) for k in ("Healthy", "Degraded", "Down", "No data (1 h)")) == 4


def test_alerts_page_lists_alerts_silences_and_deliveries(app, seeded):
    url, _ = seeded
    at = app(url).run()
    at.switch_page("pages/alerts.py").run()
    assert not problems(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Firing"] == "1"
    assert metrics["Failed deliveries"] == "1"
    tables = [t.value for t in at.dataframe]
    assert len(tables) == 4  # firing, resolved, silences, deliveries
    assert "HTTP 500 from receiver" in tables[3]["last error"].tolist()


def test_alerts_show_fired_worst_and_resolved_values_in_units(app, seeded):
    """The seeded regression fired at 1,812 ms, got to 2,456 ms and resolved at 819 ms against 867 ms:
    it reads as a spell that ended, not an improvement; the error rate reads in %."""
    url, _ = seeded
    at = app(url).run()
    at.switch_page("pages/alerts.py").run()
    live, resolved = (t.value.to_dict("records") for t in at.dataframe[:2])
    (errors,) = live
    assert (errors["fired at"], errors["worst"], errors["baseline"], errors["now"]) == ("4.2%", "50%", "5.0%", "40%")
    assert errors["duration"] == "35 min" or errors["duration"] == "36 min"
    (regression,) = resolved
    assert (regression["fired at"], regression["worst"], regression["baseline"]) == ("1,812 ms", "2,456 ms", "867 ms")
    assert regression["resolved at"] == "819 ms" and "now" not in regression
    assert regression["duration"] == "3 h 00 min"
    assert regression["view"].startswith("/target?target=anthropic%2Fclaude-3-5-haiku%40eu-west-1%3Along&from=")


def test_samples_page_offers_backtest_csv(app, seeded):
    url, data = seeded
    at = app(url).run()
    at.switch_page("pages/samples.py").run()
    assert not problems(at)
    assert len(at.get("download_button")) == 2
    (scatter,) = figures(at)
    target = at.selectbox(key="samples-target").value
    ok_points = next(p for p in scatter["data"] if p["name"] == "ok")
    # The page's window ends at its own clock (to 10 s); count the seed's ok samples on either side.
    since = data.now - timedelta(hours=24)
    ok_times = [s.started_at for s in data.of(target) if s.ok]
    widest = sum(t >= since - timedelta(minutes=5) for t in ok_times)
    narrowest = sum(t >= since + timedelta(minutes=5) for t in ok_times)
    assert narrowest <= len(ok_points["y"]) <= widest
    assert narrowest > 200


def test_overview_shows_the_spend_so_far_this_month(app, seeded):
    from monitor.storage.queries.spend import month_start

    url, data = seeded
    at = app(url).run()
    since = month_start(data.now)
    expected = sum(s.cost_usd or 0 for s in data.samples if s.started_at >= since)
    tables = [t.value for t in at.dataframe if "spend" in t.value.columns]
    if expected == 0:  # the first minutes of a month
        assert not tables
        return
    (table,) = tables
    assert table["provider"].tolist() == ["openai", "total"]
    shown = float(table["spend"].iloc[-1].lstrip("$").replace(",", ""))
    assert abs(shown - expected) <= max(0.00005, expected * 0.005)


def test_health_page_links_the_public_status(app, seeded, monkeypatch):
    url, _ = seeded
    monkeypatch.setenv("FIRSTTOKEN_STATUS_URL", "https://status.example.com/")
    at = app(url).run()
    at.switch_page("pages/health.py").run()
    assert not problems(at)
    text = " ".join(m.value for m in at.markdown)
    provider = at.selectbox(key="health-provider").value
    assert f"https://status.example.com/badge/{provider}.svg" in text
    assert "https://status.example.com/status.json" in text and "https://status.example.com/incidents.atom" in text


def test_status_links_fall_back_to_the_dashboards_sibling():
    from monitor.http.public import status_links

    assert status_links("https://dash.example.com:8501/x", environ={}) == "https://dash.example.com:9464"
    assert status_links(None, environ={}) is None
    assert status_links(None, environ={"FIRSTTOKEN_STATUS_URL": "https://s.example/"}) == "https://s.example"


def test_official_incidents_beside_ours_on_the_timeline_and_the_alerts_page(app, seeded):
    url, _ = seeded
    at = app(url).run()
    at.switch_page("pages/timeline.py").run()
    assert not problems(at)
    names = {trace.get("name") for fig in figures(at) for trace in fig["data"]}
    assert "official incident" in names
    at.switch_page("pages/alerts.py").run()
    firing = at.dataframe[0].value
    (lead,) = firing["vs provider's status page"].tolist()
    assert lead.startswith("12 min before ") and "Elevated error rates" in lead


def test_the_target_page_from_a_link_shows_that_target_its_errors_by_kind_and_the_alert_marked(app, seeded):
    url, data = seeded
    target = data.samples[0].target  # the seeded alerts' target
    at = app(url).run()
    at.switch_page("pages/target.py")
    at.query_params["target"] = target
    at.query_params["alert"] = "2"  # the firing error-rate alert
    at.run()
    assert not problems(at), problems(at)
    assert at.selectbox(key="target-id").value == target
    trend, errors = figures(at)
    notes = [a.get("text") for a in trend["layout"]["annotations"]]
    assert "▼ alert #2: errors" in notes
    assert {t["name"] for t in errors["data"]} <= {"timeout", "server_error", "rate_limited"}
    banner = " ".join(m.value for m in at.markdown)
    assert "Alert #2: errors" in banner and "fired at **4.2%**" in banner and "worst **50%**" in banner
    alerts = at.dataframe[0].value
    assert alerts["rule"].tolist()[0] == "errors" and set(alerts["scope"]) == {target}


def test_an_overview_pick_opens_the_target_page(app, seeded):
    url, data = seeded
    at = app(url).run()
    target = data.samples[-1].target
    at.selectbox(key="overview-open").select(target).run()
    assert not problems(at), problems(at)
    assert at.selectbox(key="target-id").value == target


def test_compare_shows_what_the_probes_recorded_they_cost(app, seeded):
    url, data = seeded
    at = app(url).run()
    at.switch_page("pages/compare.py").run()
    assert not problems(at), problems(at)
    (table,) = [t.value for t in at.dataframe if "cost / 1k probes" in t.value.columns]
    prompt = sorted({s.prompt for s in data.samples})[0]  # the page's default prompt
    hour = (data.now - timedelta(hours=24)).replace(minute=0, second=0, microsecond=0)  # by rollup hour, 24 h
    for row in table.to_dict("records"):
        mine = [
            s
            for s in data.samples
            if f"{s.provider}/{s.model}" == row["model"] and s.prompt == prompt and s.started_at >= hour
        ]
        spent = sum(s.cost_usd or 0 for s in mine)
        if not any(s.cost_usd for s in mine):
            assert row["cost / 1k probes"] == "—"  # unpriced: no cost, not $0
            continue
        shown = float(row["cost / 1k probes"].lstrip("$"))
        assert abs(shown - 1000 * spent / len(mine)) < 0.0006, (row, 1000 * spent / len(mine))
    assert any(r["cost / 1k probes"] != "—" for r in table.to_dict("records"))  # the seed prices a model
