"""Every reader of a long range follows the tier plan (`queries.tiers`) on SQLite and PostgreSQL:
its 30-day figures read whole days from the daily tier (they stay the same once those days' hourly
rows are gone) and equal the hourly-only read exactly."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete

from monitor.storage.models import RollupDirtyHour, RollupHourly
from monitor.storage.queries import insert_samples, tierread
from monitor.storage.queries.cache_figures import cache_figures
from monitor.storage.queries.compare import compare
from monitor.storage.queries.routes import route_stats
from monitor.storage.queries.slo import Bound, scope_counts
from monitor.storage.queries.spend import recorded_cost_by_target, spend_by_provider
from monitor.storage.queries.targets import list_targets
from monitor.storage.queries.tierread import in_spans, read_plan
from monitor.storage.queries.trends import trend
from monitor.storage.rollups import DAY, HOUR, rollup_hours

from .factories import make_samples

START = datetime(2025, 5, 1, 7, 30, tzinfo=UTC)
DAYS = 34
END = START + 33 * DAY + 3 * HOUR + timedelta(minutes=17)  # 10:47, not on the hour
NOW = END + timedelta(minutes=20)  # the rollup job's clock: every day before END's is built
WINDOW = timedelta(days=30)


def seed(engine) -> None:
    """3 targets probed every hour by two agents; prov2 as cold/warm cache pairs; costs in 1/1024 USD,
    so every sum is exact whichever order adds it."""
    samples = []
    for agent, offset_s, rng_seed in (("eu", 0, 3), ("us", 600, 4)):
        start = START + timedelta(seconds=offset_s)
        samples += make_samples(DAYS * 24 * 3, start=start, step_s=1200, targets=3, agent=agent, seed=rng_seed)
    out = []
    for i, s in enumerate(samples):
        s = replace(s, cost_usd=(1 + i % 7) / 1024)
        if s.target.startswith("prov2"):
            warm = i % 2 == 1
            s = replace(
                s,
                cache_state="warm" if warm else "cold",
                cache_hit=(i % 5 != 0) if warm else None,
                cache_read_tokens=900 if warm else 0,
                cache_write_tokens=0 if warm else 900,
            )
        out.append(s)
    insert_samples(engine, out)
    with engine.begin() as conn:
        conn.execute(RollupDirtyHour.__table__.delete())
    rollup_hours(engine, START, END + HOUR, now=NOW)


def figures(engine) -> dict:
    targets = list_targets(engine)
    ids = [t.id for t in targets]
    start = END - WINDOW
    # A bound on a bucket edge (1024 ms) counts whole buckets: the SLO's counts are exact too.
    slo = scope_counts(
        engine, {t: 0 for t in ids}, 1, [Bound("ttft_ms", below=1024.0)], checks=True, start=start, end=END
    )
    return {
        "routes": route_stats(engine, targets, END, WINDOW),
        "cache": cache_figures(engine, ids, END, WINDOW),
        "compare": compare(engine, targets, start, END),
        "spend": spend_by_provider(engine, start, END),
        "cost": recorded_cost_by_target(engine, ids, start, END),
        "slo": (slo.probes.tolist(), slo.good.tolist(), slo.day_probes.tolist(), slo.day_good.tolist()),
        # 35 days: day-long buckets, which the daily tier serves (30 days' 6-hour ones cut every day).
        "trend": trend(engine, targets, END - timedelta(days=35), END, "target"),
    }


@pytest.fixture
def seeded(engine):
    seed(engine)
    return engine


def test_a_30_day_range_reads_the_daily_tier(seeded, monkeypatch):
    plan = read_plan(seeded, END - WINDOW, END)
    assert len(plan.day_starts()) == 29  # 10:47 to 10:47: every day between, the first partial one out
    with_days = figures(seeded)
    assert with_days["routes"][0].samples and with_days["cache"] and with_days["spend"]
    assert sum(with_days["trend"].series[0].measured)

    with monkeypatch.context() as m:  # the hourly-only read: the same figures, exactly
        m.setattr(tierread, "days_built_until", lambda engine: None)
        assert figures(seeded) == with_days

    # Without the hourly rows of those days, every reader still has them all: it read their days.
    hourly = RollupHourly.__table__
    with seeded.begin() as conn:
        gone = conn.execute(delete(hourly).where(in_spans(hourly.c.hour, plan.days))).rowcount
    assert gone == 29 * 24 * 3 * 2
    assert figures(seeded) == with_days
