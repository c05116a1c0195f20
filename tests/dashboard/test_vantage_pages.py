"""Vantage points on the dashboard (DESIGN §11): one line per agent on the Target page and Trends,
the "is it them or us" split of an alert, and each agent's health on the Overview."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.models import Alert
from monitor.storage.queries import insert_samples
from monitor.storage.rollups import rollup_hours
from tests.dashboard.figures import figures, problems
from tests.dashboard.seed import make_samples, seed


@pytest.fixture(scope="module")
def two_agents(tmp_path_factory):
    """The seeded database plus a second vantage point, `far`, 3x slower on one target's path,
    and a vantage alert from it with its attribution."""
    url = f"sqlite:///{tmp_path_factory.mktemp('vantage') / 'v.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    seeded = seed(engine, now)
    target = seeded.samples[0].target
    recent = [s for s in make_samples(now, seed=12) if s.started_at >= now - timedelta(hours=6)]
    far = [replace(s, agent="far", ttft_ms=s.ttft_ms * 3 if s.ok and s.target == target else s.ttft_ms)
           for s in recent]  # fmt: skip
    insert_samples(engine, far)
    rollup_hours(engine, now - timedelta(hours=7), now + timedelta(hours=1), now=now)  # 24 h reads rollups
    provider, rest = target.split("/", 1)
    model, rest = rest.split("@", 1)
    region, prompt = rest.split(":", 1)
    with engine.begin() as conn:
        conn.execute(
            Alert.__table__.insert(),
            dict(rule="ttft-regression", scope_kind="vantage", scope_key=f"{target}~far", provider=provider,
                 model=model, region=region, prompt=prompt, agent="far", agents=["far"],
                 agents_clear=["test-agent"], attribution={"network_ms": 1210.0, "provider_ms": 12.0,
                                                           "dominant": "network"},
                 state="firing", severity="ticket", metric="ttft_ms", value=2700.0, baseline=900.0,
                 started_at=now - timedelta(minutes=30), fired_at=now - timedelta(minutes=25),
                 summary="seen from far only"),
        )  # fmt: skip
        alert_id = conn.execute(text("SELECT max(id) FROM alerts")).scalar()
    engine.dispose()
    return url, target, alert_id


def test_the_target_page_draws_a_line_per_vantage_point_and_says_who_moved(app, two_agents):
    url, target, alert_id = two_agents
    at = app(url).run()
    at.switch_page("pages/target.py")
    at.query_params["target"] = target
    at.query_params["alert"] = str(alert_id)
    at.query_params["agents"] = "true"
    at.run()
    assert not problems(at), problems(at)
    trend = figures(at)[0]
    names = {t.get("name") for t in trend["data"] if t.get("name")}
    assert {"far", "test-agent"} <= {n.split(" ")[0] for n in names}, names
    text_ = " ".join(m.value for m in at.markdown)
    assert "mostly the network path" in text_ and "+1,210 ms network" in text_ and "normal from test-agent" in text_
    split = [d.value for d in at.dataframe if "mostly" in d.value.columns]
    assert split and split[0]["mostly"].tolist() == ["network"] and split[0]["scope"].tolist() == ["from far"]


def test_trends_offer_one_line_per_agent(app, two_agents):
    url, _, _ = two_agents
    at = app(url).run()
    at.switch_page("pages/trends.py")
    at.query_params["split"] = "agent"
    at.run()
    assert not problems(at), problems(at)
    names = {t.get("name", "").split(" ")[0] for f in figures(at) for t in f["data"]}
    assert {"far", "test-agent"} <= names, names


def test_overview_lists_each_agents_health(app, two_agents):
    url, _, _ = two_agents
    at = app(url).run()
    assert not problems(at), problems(at)
    tables = [d.value for d in at.dataframe if "agent" in d.value.columns and "last sample" in d.value.columns]
    assert tables, [list(d.value.columns) for d in at.dataframe]
    health = tables[0].set_index("agent")
    assert {"far", "test-agent"} <= set(health.index)
    assert "anthropic" in health.columns and "openai" in health.columns  # reach per provider


def test_provider_health_shows_only_what_the_quorum_confirmed(app, two_agents):
    """The `far` agent's vantage alert (its path, 3x slower) is no incident on Provider health, as on the
    public status (DESIGN §16); the target alert of the seed is."""
    url, target, _ = two_agents
    provider = target.split("/", 1)[0]
    at = app(url).run()
    at.switch_page("pages/health.py")
    at.query_params["provider"] = provider
    at.run()
    assert not problems(at), problems(at)
    (incidents,) = [d.value for d in at.dataframe if "impact" in d.value.columns]
    assert incidents["impact"].str.startswith("errors on").any()  # the seeded target alert, confirmed
    slow = incidents["impact"].str.startswith("slow first token")
    assert slow.any() and not (slow & (incidents["ended (UTC)"] == "ongoing")).any()  # the seed's resolved one only
    text = " ".join(m.value for m in at.caption)
    assert "quorum" in text
    assert any("No public status page is known" in i.value for i in at.info)  # no config, no FIRSTTOKEN_STATUS_URL
