"""The daily rollup tier (migration 0008) on SQLite and PostgreSQL: each completed day's rows are
the merge of its hourly rows, every path that writes hours keeps them so (rollup_hours, dirty
hours, retention, the migration's backfill), and a long routes window read through it ranks
exactly as the hourly-only read did."""

from __future__ import annotations

from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, text

from monitor.storage import migrate
from monitor.storage.ingest import BatchInserter
from monitor.storage.models import RollupDaily, RollupDirtyHour, RollupHourly
from monitor.storage.queries import insert_samples
from monitor.storage.queries.routes import load_routes, route_stats
from monitor.storage.queries.targets import list_targets
from monitor.storage.queries.tierread import read_plan
from monitor.storage.queries.tiers import Span
from monitor.storage.retention import apply_retention
from monitor.storage.rollups import DAY, HOUR, day_floor, merge_rows, rollup_dirty, rollup_hours

from .factories import make_samples

START = datetime(2025, 3, 4, 9, 0, tzinfo=UTC)  # samples from 09:00 on day 0 …
DAYS = 9  # … to 09:00 on day 9
NOW = START + DAYS * DAY + 2 * HOUR  # the rollup job's clock: day 9 is the current day


def seed(engine, start=START, days=DAYS):
    """3 targets a sample every 10 minutes from each of two agents, with cancellations and costs."""
    n = days * 24 * 6 * 3
    samples = make_samples(n, start=start, step_s=200, targets=3, agent="eu", seed=3)
    samples += make_samples(n, start=start + timedelta(seconds=50), step_s=200, targets=3, agent="us", seed=4)
    out = []
    for i, s in enumerate(samples):
        if i % 41 == 0:
            s = replace(s, ok=False, error_kind="cancelled", ttft_ms=None, ttft_answer_ms=None, tps=None)
        if s.target.startswith("prov1"):
            s = replace(s, cost_usd=0.0001 * (1 + i % 7))
        out.append(s)
    insert_samples(engine, out)
    with engine.begin() as conn:  # stored "late" (years after): the marks are not what is tested here
        conn.execute(RollupDirtyHour.__table__.delete())
    rollup_hours(engine, start, start + days * DAY + HOUR, now=NOW)
    return out


def table_rows(engine, table, key) -> dict:
    with engine.connect() as conn:
        rows = conn.execute(select(table)).mappings().all()
    return {(r["target"], r[key], r["agent"]): {k: v for k, v in r.items() if k != "updated_at"} for r in rows}


def merged_from_hours(engine) -> dict:
    """The daily rows the hourly rows imply, completed days only."""
    groups: dict = {}
    for (target, hour, agent), row in sorted(table_rows(engine, RollupHourly.__table__, "hour").items()):
        if day_floor(hour) + DAY <= NOW:
            groups.setdefault((target, day_floor(hour), agent), []).append(row)
    out = {}
    for (target, day, agent), rows in groups.items():
        merged = merge_rows(target, day, agent, rows, NOW)
        merged.pop("updated_at")
        out[(target, day, agent)] = merged
    return out


def assert_same_stats(new, old):
    assert [s.target for s in new] == [s.target for s in old]
    for a, b in zip(new, old, strict=True):
        da, db = asdict(a), asdict(b)
        assert da.pop("cost_usd_sum") == pytest.approx(db.pop("cost_usd_sum"), rel=1e-12, abs=1e-15)
        assert da == db, a.target


def test_daily_rows_are_the_merge_of_their_hours_completed_days_only(engine):
    seed(engine)
    daily = table_rows(engine, RollupDaily.__table__, "day")
    assert daily == merged_from_hours(engine)
    days = sorted({day for _, day, _ in daily})
    # Day 0 from 09:00 (a partial first day is still a completed one); day 9, today, is left to hours.
    assert days == [day_floor(START) + n * DAY for n in range(DAYS)]
    with engine.connect() as conn:
        hourly = conn.execute(select(RollupHourly.__table__.c.samples)).scalars().all()
    assert sum(r["samples"] for r in daily.values()) == sum(hourly) - 9 * 3 * 2 * 6  # less day 9 (00:00-09:00)


@pytest.mark.parametrize(
    "end_offset, window",
    [
        (timedelta(days=9), timedelta(days=7)),  # ends at 09:00: edges on both sides
        (timedelta(days=8, hours=15, minutes=31), timedelta(days=7)),  # ends 00:31: one hour of the last day
        (timedelta(days=8, hours=14, minutes=59), timedelta(days=3)),  # ends 23:59: the last day whole
        (timedelta(days=8, hours=15), timedelta(days=2)),  # ends exactly at midnight
        (timedelta(days=9, hours=1, minutes=17), timedelta(days=30)),  # longer than the data, into today
        (timedelta(days=12), timedelta(days=5)),  # ends in the future: today's and later days by hour
        (timedelta(days=1, hours=20), timedelta(days=1, hours=1)),  # too short for a whole day
    ],
)
def test_a_long_window_through_the_daily_tier_equals_the_hourly_path(engine, end_offset, window):
    seed(engine)
    end = START + end_offset
    targets = list_targets(engine)
    new = route_stats(engine, targets, end, window)
    old = route_stats(engine, targets, end, window, daily=False)
    assert_same_stats(new, old)
    assert any(s.samples for s in new)
    ranked_new, _ = load_routes(engine, end, window)
    ranked_old, _ = load_routes(engine, end, window, daily=False)
    assert [(r.rank, r.eligible, r.stats.target) for r in ranked_new] == [
        (r.rank, r.eligible, r.stats.target) for r in ranked_old
    ]
    days = read_plan(engine, end - window, end).days
    if window >= timedelta(days=2):
        assert days  # the daily tier was read
        assert days[-1].end <= day_floor(NOW)  # and never for the current day
    else:
        assert not days


def test_a_dirty_hour_rebuilds_its_day(engine):
    seed(engine)
    late_hour = START + 3 * DAY + 5 * HOUR
    late = make_samples(12, start=late_hour + timedelta(seconds=7), step_s=60, targets=3, agent="eu", seed=9)
    late = [replace(s, id=f"late-{i}") for i, s in enumerate(late)]
    BatchInserter(engine).insert(late, now=NOW)
    assert rollup_dirty(engine, now=NOW) == [late_hour]
    daily = table_rows(engine, RollupDaily.__table__, "day")
    assert daily == merged_from_hours(engine)
    key = ("prov0/model-0@region:short", day_floor(late_hour), "eu")
    assert daily[key]["samples"] == 24 * 6 + 4
    end = START + 8 * DAY
    targets = list_targets(engine)
    assert_same_stats(
        route_stats(engine, targets, end, timedelta(days=7)),
        route_stats(engine, targets, end, timedelta(days=7), daily=False),
    )


def test_retention_drops_whole_days_and_rebuilds_the_day_it_cuts(engine):
    seed(engine)
    cutoff = START + 2 * DAY + 4 * HOUR + timedelta(minutes=30)  # day 2, 13:30
    apply_retention(engine, raw_s=400 * 86400, rollups_s=(NOW - cutoff).total_seconds(), now=NOW)
    daily = table_rows(engine, RollupDaily.__table__, "day")
    assert min(day for _, day, _ in daily) == day_floor(cutoff)
    assert daily == merged_from_hours(engine)  # the cut day counts only the hours kept
    targets = list_targets(engine)
    end = START + 8 * DAY
    assert_same_stats(
        route_stats(engine, targets, end, timedelta(days=7)),
        route_stats(engine, targets, end, timedelta(days=7), daily=False),
    )


def test_the_migration_backfills_days_from_the_hourly_rows(engine):
    seed(engine)
    built = table_rows(engine, RollupDaily.__table__, "day")
    migrate.downgrade(engine, "0007")
    migrate.upgrade(engine)
    backfilled = table_rows(engine, RollupDaily.__table__, "day")
    # The migration's clock is today's: every day of 2025 is completed, day 9's two hours included.
    today = day_floor(START) + DAYS * DAY
    assert {k: v for k, v in backfilled.items() if k[1] < today} == built
    assert {k[1] for k in backfilled if k[1] >= today} == {today}
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            storage = dict(
                conn.execute(
                    text(
                        "SELECT attname, attstorage FROM pg_attribute "
                        "WHERE attrelid = 'rollups_daily'::regclass AND attnum > 0"
                    )
                ).all()
            )
        assert storage["ttft_ms_hist"] == "e" and storage["ttft_ms_packed"] == "m"  # JSON out of line, packed inline


def test_packed_histograms_give_the_figures_of_their_json():
    import numpy as np

    from monitor.storage import histogram
    from monitor.storage.queries.histmatrix import hist_quantiles, packed_quantiles

    rng = np.random.default_rng(5)
    hists = [histogram.from_values(rng.lognormal(6, 0.5, 200)) for _ in range(6)]
    hists.append({})
    assert all(histogram.unpack(histogram.pack(h)) == h for h in hists)
    groups = np.array([0, 1, 0, 2, 1, 0, 2])
    texts = [histogram.to_json(h) for h in hists]
    qs = (0.5, 0.9, 0.99)
    expected, _ = hist_quantiles(texts, groups, 3, qs)
    half = 3  # the first rows as texts (hours), the rest packed (days)
    packed = packed_quantiles(
        texts[:half], groups[:half], [histogram.pack(h) for h in hists[half:]], groups[half:], 3, qs
    )
    np.testing.assert_array_equal(packed, expected)


def test_the_minute_job_builds_a_day_once_it_has_ended(engine):
    from monitor.storage.rollups import rollup_recent

    midnight = day_floor(START) + 2 * DAY
    samples = make_samples(6 * 30, start=midnight - 2 * HOUR, step_s=60, targets=3, agent="eu", seed=2)
    insert_samples(engine, samples)
    with engine.begin() as conn:
        conn.execute(RollupDirtyHour.__table__.delete())
    rollup_recent(engine, now=midnight - timedelta(minutes=50))  # 23:10: the day is still running
    assert table_rows(engine, RollupDaily.__table__, "day") == {}
    targets = list_targets(engine)
    end = midnight - timedelta(minutes=1)
    assert_same_stats(  # its hours answer meanwhile
        route_stats(engine, targets, end, timedelta(days=3)),
        route_stats(engine, targets, end, timedelta(days=3), daily=False),
    )
    rollup_recent(engine, now=midnight + timedelta(minutes=5))  # 00:05: 23:00 redone, the day not yet final
    assert table_rows(engine, RollupDaily.__table__, "day") == {}
    assert_same_stats(  # its hours answer meanwhile
        route_stats(engine, targets, midnight + timedelta(minutes=5), timedelta(days=3)),
        route_stats(engine, targets, midnight + timedelta(minutes=5), timedelta(days=3), daily=False),
    )
    rollup_recent(engine, now=midnight + timedelta(minutes=16))  # past the grace: the day is built, once
    daily = table_rows(engine, RollupDaily.__table__, "day")
    assert {day for _, day, _ in daily} == {midnight - DAY}
    assert sum(r["samples"] for r in daily.values()) == 120  # 22:00-23:59, the hours before midnight
    # A window ending at 00:01 takes that day whole from the daily tier, today from hours.
    assert read_plan(engine, midnight - 3 * DAY, midnight + timedelta(minutes=1)).days == (
        Span(midnight - 3 * DAY, midnight),
    )
    end = midnight + timedelta(minutes=1)
    assert_same_stats(
        route_stats(engine, targets, end, timedelta(days=3)),
        route_stats(engine, targets, end, timedelta(days=3), daily=False),
    )
