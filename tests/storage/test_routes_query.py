"""The routes query on SQLite and PostgreSQL: raw samples for a day or less, rollups beyond,
the same answer either way; cost and fallbacks from the samples; the newest served_by."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from monitor.storage.queries import insert_samples
from monitor.storage.queries.routes import route_stats
from monitor.storage.queries.targets import list_targets
from monitor.storage.rollups import rollup_hours

from .factories import BASE_TIME, make_samples


def seeded(engine):
    samples = make_samples(3 * 600, step_s=6.0)  # 3 targets, a sample each 18 s for 3 hours
    routed = []
    for i, s in enumerate(samples):
        named = s.ok and s.target.startswith("prov0")
        routed.append(
            replace(
                s,
                served_by=(f"up-{i // 900}" if named else None),  # prov0's upstream changes half way
                fallback=(i % 10 == 0) if named else None,
                cost_usd=0.002 if s.target.startswith("prov1") else None,
            )
        )
    insert_samples(engine, routed)
    return routed


def test_raw_window_counts_percentiles_cost_fallbacks_and_newest_upstream(engine):
    samples = seeded(engine)
    end = BASE_TIME + timedelta(hours=3)
    stats = {s.target: s for s in route_stats(engine, list_targets(engine), end, timedelta(hours=3))}
    for target, st in stats.items():
        mine = [s for s in samples if s.target == target]
        ok = [s.ttft_ms for s in mine if s.ok]
        assert (st.samples, st.ok) == (len(mine), len(ok))
        assert st.ttft_p50_ms == pytest.approx(float(np.quantile(ok, 0.5)))
        assert st.ttft_p99_ms == pytest.approx(float(np.quantile(ok, 0.99)))
    prov0 = stats["prov0/model-0@region:short"]
    assert prov0.served_by == "up-1"
    assert prov0.fallbacks == sum(1 for s in samples if s.target.startswith("prov0") and s.fallback)
    prov1 = stats["prov1/model-1@region:short"]
    assert prov1.cost_per_1k_probes_usd == pytest.approx(2.0)
    assert stats["prov2/model-2@region:short"].cost_per_1k_probes_usd is None  # no prices: "-", not 0


def test_rollup_window_agrees_with_raw(engine):
    seeded(engine)
    rollup_hours(engine, BASE_TIME, BASE_TIME + timedelta(hours=3), now=BASE_TIME + timedelta(hours=4))
    end = BASE_TIME + timedelta(hours=3)
    targets = list_targets(engine)
    raw = {s.target: s for s in route_stats(engine, targets, end, timedelta(hours=3))}
    rolled = {s.target: s for s in route_stats(engine, targets, end, timedelta(days=2))}
    for target, r in rolled.items():
        assert (r.samples, r.ok) == (raw[target].samples, raw[target].ok)
        assert r.ttft_p50_ms == pytest.approx(raw[target].ttft_p50_ms, rel=0.05)  # histogram buckets
        assert r.fallbacks is None  # not in the rollups: shown as unknown, not as zero
    assert rolled["prov1/model-1@region:short"].cost_per_1k_probes_usd == pytest.approx(2.0)
    assert rolled["prov0/model-0@region:short"].served_by == "up-1"


def test_routes_as_seen_from_one_vantage_point(engine):
    """`routes --agent NAME` / GET /routes?agent=NAME (DESIGN §11): one agent's samples and rollups only.
    From `far`, prov0 is slow (its own path); from `near` it is not; pooled it is in between."""
    from monitor.storage.queries.routes import load_routes

    near = make_samples(3 * 300, step_s=6.0, agent="near", seed=1)
    far = [
        replace(s, ttft_ms=s.ttft_ms * 10 if s.ok and s.target.startswith("prov0") else s.ttft_ms)
        for s in make_samples(3 * 300, step_s=6.0, agent="far", seed=2)
    ]
    insert_samples(engine, near + far)
    end = BASE_TIME + timedelta(hours=3)
    targets = list_targets(engine)
    for agent, samples in (("near", near), ("far", far)):
        stats = {s.target: s for s in route_stats(engine, targets, end, timedelta(hours=3), agent=agent)}
        for target, st in stats.items():
            ok = [s.ttft_ms for s in samples if s.target == target and s.ok]
            assert st.ok == len(ok) and st.ttft_p50_ms == pytest.approx(float(np.quantile(ok, 0.5)))
    pooled = {s.target: s for s in route_stats(engine, targets, end, timedelta(hours=3))}
    assert pooled["prov0/model-0@region:short"].samples == 600
    # The rollup path (a window over a day) filters the same way.
    rollup_hours(engine, BASE_TIME, BASE_TIME + timedelta(hours=3), now=BASE_TIME + timedelta(hours=4))
    rolled = {s.target: s for s in route_stats(engine, targets, end, timedelta(days=2), agent="far")}
    assert rolled["prov0/model-0@region:short"].samples == 300
    ranked_far, _ = load_routes(engine, end, timedelta(hours=3), agent="far", min_availability=0.5)
    ranked_near, _ = load_routes(engine, end, timedelta(hours=3), agent="near", min_availability=0.5)
    p50 = {name: {r.stats.target: r.stats.ttft_p50_ms for r in ranked} for name, ranked in
           (("far", ranked_far), ("near", ranked_near))}  # fmt: skip
    prov0 = "prov0/model-0@region:short"
    assert p50["far"][prov0] > 5 * p50["near"][prov0]  # ten times slower from far away, as its samples say
    assert load_routes(engine, end, timedelta(hours=3), agent="nobody")[0] == []
