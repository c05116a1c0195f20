"""The live-routing reads on real databases (SQLite and PostgreSQL): the ranking of one vantage point
(`agent`), GET /routes' conditional answers (ETag, 304, max-age) and base_url, and the MCP tools'
read-only sessions."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.routes import routes_handler
from monitor.http.server import StatusServer
from monitor.mcp_server.database import read_only_engine
from monitor.storage.queries import insert_samples
from monitor.storage.queries.routes import load_routes
from monitor.storage.rollups import HOUR, rollup_hours

from .factories import BASE_TIME, make_samples

END = BASE_TIME + timedelta(minutes=20)


def seed(engine):
    """Two agents see the same three targets; from agent "slow-isp" every TTFT is 10x."""
    near = make_samples(600, start=BASE_TIME, step_s=1.5, targets=3, agent="near", seed=5)
    far = [
        replace(s, ttft_ms=s.ttft_ms * 10 if s.ttft_ms else None)
        for s in make_samples(600, start=BASE_TIME, step_s=1.5, targets=3, agent="slow-isp", seed=6)
    ]
    insert_samples(engine, near + far)
    return near, far


@pytest.mark.parametrize("window", [timedelta(minutes=30), timedelta(days=3)])
def test_one_vantage_points_ranking_counts_only_its_samples(engine, window):
    near, far = seed(engine)
    end = END
    if window > timedelta(days=1):
        rollup_hours(engine, BASE_TIME - HOUR, END + HOUR, now=END + 2 * HOUR)
        end = END + HOUR  # whole hours in the rollups
    every, _ = load_routes(engine, end, window)
    only_near, _ = load_routes(engine, end, window, agent="near")
    only_far, _ = load_routes(engine, end, window, agent="slow-isp")
    by_target = {r.stats.target: r.stats for r in every}
    counts = {}
    for ranked, samples in ((only_near, near), (only_far, far)):
        assert {r.stats.target for r in ranked} == set(by_target)
        for r in ranked:
            assert r.stats.samples == sum(s.target == r.stats.target for s in samples)
            counts[r.stats.target] = counts.get(r.stats.target, 0) + r.stats.samples
    assert counts == {t: s.samples for t, s in by_target.items()}  # every agent's = the sum of each one's
    p50 = {r.stats.target: r.stats.ttft_p50_ms for r in only_near}
    for r in only_far:
        assert r.stats.ttft_p50_ms == pytest.approx(10 * p50[r.stats.target], rel=0.25)
    assert load_routes(engine, end, window, agent="nobody")[0] == []


@pytest.fixture
def status_server(engine):
    seed(engine)
    bases = {f"prov{i}/model-{i}@region:short": f"https://user:pw@prov{i}.example/v1?key=sk-q" for i in range(3)}
    app = build_app(
        lambda: [],
        lambda: Health(True, {}),
        routes=routes_handler(engine, clock=lambda: END, base_urls=lambda: bases),
        max_age_s=lambda: 7,
    )
    server = StatusServer("127.0.0.1", 0, app)
    server.start()
    yield f"http://127.0.0.1:{server.port}"
    server.stop()


def test_get_routes_answers_304_to_its_own_etag_and_caches_for_the_probe_cadence(status_server):
    first = httpx.get(status_server + "/routes?window=30m")
    assert first.status_code == 200
    etag = first.headers["etag"]
    assert etag.startswith('"') and first.headers["cache-control"] == "public, max-age=7"
    again = httpx.get(status_server + "/routes?window=30m", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    assert httpx.get(status_server + "/routes?window=30m", headers={"If-None-Match": f"W/{etag}"}).status_code == 304
    other = httpx.get(status_server + "/routes?window=10m", headers={"If-None-Match": etag})
    assert other.status_code == 200 and other.headers["etag"] != etag  # a different ranking, a different tag
    assert httpx.get(status_server + "/routes?window=soon", headers={"If-None-Match": etag}).status_code == 400


def test_get_routes_names_each_routes_endpoint_without_credentials(status_server):
    body = httpx.get(status_server + "/routes?window=30m").json()
    assert {r["base_url"] for r in body["routes"]} == {f"https://prov{i}.example/v1" for i in range(3)}
    assert "pw" not in str(body) and "sk-q" not in str(body)
    near = httpx.get(status_server + "/routes?window=30m&agent=near").json()["routes"]
    assert sum(r["samples"] for r in near) == 600


def test_the_mcp_engine_cannot_write(engine):
    ro = read_only_engine(engine.url.render_as_string(hide_password=False))
    try:
        with ro.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM samples")).scalar() == 0
        with pytest.raises(DBAPIError), ro.begin() as conn:
            conn.execute(text("DELETE FROM samples"))
    finally:
        ro.dispose()
