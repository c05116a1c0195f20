"""What prompt caching is worth per target (DESIGN §13), from raw samples and from the rollups,
on SQLite and PostgreSQL; and `routes --by warm_ttft`."""

from __future__ import annotations

import random
from datetime import timedelta

import httpx
import pytest

from monitor.config.schema import Price
from monitor.http.app import build_app
from monitor.http.health import Health
from monitor.http.routes import routes_handler
from monitor.http.server import StatusServer
from monitor.sample import Sample
from monitor.storage.queries import insert_samples
from monitor.storage.queries.cache_figures import cache_figures
from monitor.storage.queries.routes import load_routes
from monitor.storage.rollups import hour_floor, rollup_hours

from .factories import BASE_TIME

START = hour_floor(BASE_TIME)
END = START + timedelta(hours=6)


def pair_samples(
    provider: str, cold_ms: float, warm_ms: float, hit_every: int, seed: int, agent: str = "a", offset_s: float = 0.0
) -> list[Sample]:
    """A cache target's rounds every minute for 6 hours: cold, then warm 1 s later."""
    rng = random.Random(seed)
    out = []
    for i in range(6 * 60):
        at = START + timedelta(minutes=i, seconds=offset_s)
        hit = (i + 1) % hit_every != 0
        common = dict(target=f"{provider}/m@r:doc", provider=provider, model="m", region="r", prompt="doc", agent=agent)
        cold = cold_ms * rng.uniform(0.9, 1.1)
        out.append(Sample(started_at=at, ok=True, ttft_ms=cold, input_tokens=1300, cache_read_tokens=0,
                          cache_write_tokens=1200, cache_state="cold", **common))  # fmt: skip
        warm = (warm_ms if hit else cold_ms) * rng.uniform(0.9, 1.1)
        out.append(Sample(started_at=at + timedelta(seconds=1), ok=True, ttft_ms=warm, input_tokens=1300,
                          cache_read_tokens=1200 if hit else 0, cache_write_tokens=0 if hit else 1200,
                          cache_state="warm", cache_hit=hit, **common))  # fmt: skip
    return out


@pytest.fixture
def seeded(engine):
    fast = pair_samples("fast", 900.0, 150.0, hit_every=10, seed=1)  # 90% hits
    slow = pair_samples("slow", 700.0, 400.0, hit_every=1_000_000, seed=2)  # every warm hits
    plain = [
        Sample(target="sim/plain@r:short", provider="sim", model="plain", region="r", prompt="short",
               started_at=START + timedelta(minutes=i), ok=True, ttft_ms=300.0, agent="a")
        for i in range(6 * 60)
    ]  # fmt: skip
    insert_samples(engine, fast + slow + plain)
    return engine


def test_raw_figures(seeded):
    ids = ["fast/m@r:doc", "slow/m@r:doc", "sim/plain@r:short"]
    got = cache_figures(seeded, ids, END, timedelta(hours=6))
    assert set(got) == set(ids[:2])  # a target without cache probes has no figures
    fast = got["fast/m@r:doc"]
    assert fast.cold_ttft_p50_ms == pytest.approx(900, rel=0.05)
    assert fast.warm_ttft_p50_ms == pytest.approx(150, rel=0.05)
    assert fast.saving_ms == pytest.approx(750, rel=0.08)
    assert (fast.judged, fast.hits) == (360, 324) and fast.hit_ratio == pytest.approx(0.9)
    assert fast.cache_read_tokens == 324 * 1200 and fast.cache_write_tokens == (360 + 36) * 1200
    price = Price(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    want = (324 * 1200 * (3.0 - 0.3) - (360 + 36) * 1200 * (3.75 - 3.0)) / 1e6
    assert fast.saving_usd(price) == pytest.approx(want)
    assert got["slow/m@r:doc"].hit_ratio == 1.0


def test_rollup_figures_match_the_raw_ones(seeded):
    ids = ["fast/m@r:doc", "slow/m@r:doc"]
    raw = cache_figures(seeded, ids, END, timedelta(hours=6))
    rollup_hours(seeded, START, END)
    long = cache_figures(seeded, ids, START + timedelta(days=2), timedelta(days=3))  # > 1 day: rollups only
    for target in ids:
        a, b = raw[target], long[target]
        assert (a.hits, a.judged, a.cache_read_tokens, a.cache_write_tokens) == (
            b.hits, b.judged, b.cache_read_tokens, b.cache_write_tokens
        )  # fmt: skip
        assert (a.cold_probes, a.warm_probes) == (b.cold_probes, b.warm_probes)
        # Histogram buckets are within ~3% of a value.
        assert b.cold_ttft_p50_ms == pytest.approx(a.cold_ttft_p50_ms, rel=0.04)
        assert b.warm_ttft_p50_ms == pytest.approx(a.warm_ttft_p50_ms, rel=0.04)


def test_routes_rank_by_warm_ttft(seeded):
    """Two routes of one model: the slow cache has the lower TTFT over all probes, the fast one
    the lower warm TTFT; `--by warm_ttft` ranks what a cached prefix will see."""
    window = timedelta(hours=6)
    by_ttft, _ = load_routes(seeded, END, window, model="m", by="ttft", min_availability=0.0)
    by_warm, _ = load_routes(seeded, END, window, model="m", by="warm_ttft", min_availability=0.0)
    assert [r.stats.provider for r in by_ttft] == ["slow", "fast"]
    # A cache target's TTFT is its cold half (the warm one has its own figure), raw and rolled up alike.
    assert by_ttft[0].stats.ttft_p50_ms == pytest.approx(700, rel=0.05)
    rollup_hours(seeded, START, END)
    long, _ = load_routes(seeded, START + timedelta(days=2), timedelta(days=3), model="m", min_availability=0.0)
    assert {r.stats.provider: r.stats.ttft_p50_ms for r in long} == {
        "slow": pytest.approx(700, rel=0.06), "fast": pytest.approx(900, rel=0.06)
    }  # fmt: skip
    assert [r.stats.provider for r in by_warm] == ["fast", "slow"]
    fast = by_warm[0].stats
    assert fast.warm_ttft_p50_ms == pytest.approx(150, rel=0.05) and fast.cache_hit_ratio == pytest.approx(0.9)
    assert fast.cold_ttft_p50_ms == pytest.approx(900, rel=0.05)


def test_routes_by_warm_ttft_from_one_vantage_point_read_its_cache_probes_alone(engine):
    """`routes --by warm_ttft --agent far` (and GET /routes?agent=far&by=warm_ttft): the warm TTFT and
    hit ratio are far's, as every other figure of an agent's ranking. Seen from near, fast's cache hits
    (150 ms warm) and it probes twice as often; seen from far, fast's cache never hits (900 ms warm),
    so from far the slow route is the better warm route, though the pooled figures say fast."""
    near = [
        *pair_samples("fast", 900.0, 150.0, hit_every=10, seed=1, agent="near"),
        *pair_samples("fast", 900.0, 150.0, hit_every=10, seed=2, agent="near", offset_s=30.0),
        *pair_samples("slow", 700.0, 400.0, hit_every=1_000_000, seed=3, agent="near"),
    ]
    far = [
        *pair_samples("fast", 900.0, 150.0, hit_every=1, seed=4, agent="far"),  # never hits
        *pair_samples("slow", 700.0, 400.0, hit_every=1_000_000, seed=5, agent="far"),
    ]
    insert_samples(engine, near + far)
    window = timedelta(hours=6)

    def ranked(agent: str | None, end=END, window=window) -> list[tuple[str, float, float]]:
        routes, _ = load_routes(engine, end, window, model="m", by="warm_ttft", min_availability=0.0, agent=agent)
        return [(r.stats.provider, r.stats.warm_ttft_p50_ms, r.stats.cache_hit_ratio) for r in routes]

    assert [p for p, *_ in ranked(None)] == ["fast", "slow"]  # pooled: near's many hits dominate
    assert [p for p, *_ in ranked("near")] == ["fast", "slow"]
    assert ranked("far") == [
        ("slow", pytest.approx(400, rel=0.05), 1.0),
        ("fast", pytest.approx(900, rel=0.05), 0.0),
    ]
    # Longer than a day: the hourly rollups, each agent's own rows.
    rollup_hours(engine, START, END)
    long_end, long_window = START + timedelta(days=2), timedelta(days=3)
    assert ranked("far", long_end, long_window) == [
        ("slow", pytest.approx(400, rel=0.06), 1.0),
        ("fast", pytest.approx(900, rel=0.06), 0.0),
    ]
    assert [p for p, *_ in ranked("near", long_end, long_window)] == ["fast", "slow"]
    assert cache_figures(engine, ["fast/m@r:doc"], END, window, agent="nobody") == {}

    # GET /routes?agent=far&by=warm_ttft: the same query behind a real status server.
    app = build_app(lambda: [], lambda: Health(True, {}), routes=routes_handler(engine, clock=lambda: END))
    server = StatusServer("127.0.0.1", 0, app)
    server.start()
    try:
        url = f"http://127.0.0.1:{server.port}/routes?window=6h&min_availability=0&by=warm_ttft&model=m"
        far_routes = httpx.get(url + "&agent=far").json()["routes"]
        near_routes = httpx.get(url + "&agent=near").json()["routes"]
    finally:
        server.stop()
    assert [(r["provider"], r["cache"]["hit_ratio"]) for r in far_routes] == [("slow", 1.0), ("fast", 0.0)]
    assert [r["provider"] for r in near_routes] == ["fast", "slow"]
