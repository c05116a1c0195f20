from collections import defaultdict
from datetime import timedelta

import numpy as np
from sqlalchemy import select, text

from monitor.storage import histogram
from monitor.storage.ingest import BatchInserter
from monitor.storage.models import ROLLUP_METRICS, RollupDirtyHour, RollupHourly
from monitor.storage.queries import insert_samples
from monitor.storage.rollups import hour_floor, rollup_dirty, rollup_hours, rollup_recent

from .factories import BASE_TIME, make_samples

HOUR = timedelta(hours=1)
START = hour_floor(BASE_TIME)


def rollup_rows(engine) -> dict:
    with engine.connect() as conn:
        rows = conn.execute(select(RollupHourly.__table__)).mappings().all()
    return {(r["target"], r["hour"], r["agent"]): dict(r) for r in rows}


def seed(engine):
    samples = make_samples(6 * 360, start=START, step_s=10, targets=4, agent="eu", seed=7)
    samples += make_samples(6 * 120, start=START, step_s=30, targets=4, agent="us", seed=8)
    insert_samples(engine, samples)
    return samples


def test_rollup_counts_sums_and_errors_match_the_raw_samples(engine):
    samples = seed(engine)
    assert rollup_hours(engine, START, START + 6 * HOUR) == 6 * 4 * 2
    rows = rollup_rows(engine)
    groups = defaultdict(list)
    for s in samples:
        groups[(s.target, hour_floor(s.started_at), s.agent)].append(s)
    assert set(rows) == set(groups)
    for key, group in groups.items():
        row = rows[key]
        ok = [s for s in group if s.ok]
        assert row["samples"] == len(group) and row["ok_count"] == len(ok)
        errors = defaultdict(int)
        for s in group:
            if not s.ok:
                errors[s.error_kind] += 1
        assert row["error_counts"] == dict(errors)
        assert row["input_tokens_sum"] == sum(s.input_tokens or 0 for s in group)
        assert row["output_tokens_sum"] == sum(s.output_tokens or 0 for s in group)
        for metric in ROLLUP_METRICS:
            values = [getattr(s, metric) for s in ok]
            assert row[f"{metric}_count"] == len(values)
            assert np.isclose(row[f"{metric}_sum"], sum(values))
            assert row[f"{metric}_min"] == min(values) and row[f"{metric}_max"] == max(values)
            # Same buckets whether built by SQL (PostgreSQL) or Python (SQLite).
            assert histogram.from_json(row[f"{metric}_hist"]) == histogram.from_values(values)


def test_merged_rollup_percentiles_match_numpy_within_the_histogram_error(engine):
    samples = seed(engine)
    rollup_hours(engine, START, START + 6 * HOUR)
    rows = rollup_rows(engine).values()
    target = "prov2/model-2@region:short"
    for metric in ROLLUP_METRICS:
        merged = histogram.merge(histogram.from_json(r[f"{metric}_hist"]) for r in rows if r["target"] == target)
        exact = np.array([getattr(s, metric) for s in samples if s.target == target and s.ok])
        for q in (0.5, 0.9, 0.95, 0.99):
            want = float(np.percentile(exact, q * 100))
            got = histogram.quantile(merged, q)
            assert abs(got - want) / want <= histogram.MAX_RELATIVE_ERROR, (metric, q, got, want)


def test_recomputing_is_idempotent_and_picks_up_late_samples(engine):
    samples = seed(engine)
    rollup_hours(engine, START, START + 6 * HOUR)
    first = rollup_rows(engine)
    rollup_hours(engine, START, START + 6 * HOUR)
    again = rollup_rows(engine)
    for key in first:
        first[key].pop("updated_at"), again[key].pop("updated_at")
    assert first == again
    late = make_samples(5, start=START + 30 * timedelta(minutes=1), targets=1, agent="eu", seed=99)
    insert_samples(engine, late)
    rollup_hours(engine, START, START + HOUR)
    key = (late[0].target, START, "eu")
    assert rollup_rows(engine)[key]["samples"] == first[key]["samples"] + 5
    assert len(samples) > 0


def test_rollups_outlive_raw_samples(engine):
    seed(engine)
    rollup_hours(engine, START, START + 6 * HOUR)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM samples"))
    rollup_hours(engine, START, START + 6 * HOUR)
    assert len(rollup_rows(engine)) == 48


def test_recent_rollups_resume_from_the_watermark(engine):
    seed(engine)  # samples in hours START … START+5h
    with engine.begin() as conn:  # seeded "late" (written years after): forget those marks here
        conn.execute(RollupDirtyHour.__table__.delete())
    first = rollup_recent(engine, now=START + HOUR + timedelta(minutes=5))
    assert first.hours == (START, START + HOUR)  # a first run: the previous and the current hour
    assert {hour for _, hour, _ in rollup_rows(engine)} == {START, START + HOUR}
    # Within the grace period the previous hour is still redone (late commits).
    assert rollup_recent(engine, now=START + HOUR + timedelta(minutes=10)).hours == (START, START + HOUR)
    assert rollup_recent(engine, now=START + HOUR + timedelta(minutes=20)).hours == (START, START + HOUR)
    assert rollup_recent(engine, now=START + HOUR + timedelta(minutes=30)).hours == (START + HOUR,)
    # The leader was gone for hours: its successor catches up on every hour since.
    late = rollup_recent(engine, now=START + 5 * HOUR + timedelta(minutes=1))
    assert late.hours == tuple(START + n * HOUR for n in range(1, 6))
    assert len(rollup_rows(engine)) == 6 * 4 * 2


def test_late_batches_mark_hours_dirty_for_the_leader(engine):
    now = START + 10 * HOUR
    old = make_samples(20, start=START + 2 * HOUR, step_s=60, seed=5)
    current = make_samples(5, start=now, seed=6)
    BatchInserter(engine).insert(old + current, now=now)
    with engine.connect() as conn:
        marks = conn.execute(select(RollupDirtyHour.__table__.c.hour)).scalars().all()
    assert marks == [START + 2 * HOUR]  # the current hour is the regular job's
    assert rollup_dirty(engine, now=now) == [START + 2 * HOUR]
    assert {hour for _, hour, _ in rollup_rows(engine)} == {START + 2 * HOUR}
    with engine.connect() as conn:
        assert conn.execute(select(RollupDirtyHour.__table__)).all() == []


def test_a_hour_remarked_during_its_recompute_stays_dirty(engine, monkeypatch):
    import monitor.storage.rollups as rollups

    now = START + 10 * HOUR
    BatchInserter(engine).insert(make_samples(3, start=START, seed=1), now=now)
    real = rollups.rollup_hours

    def with_a_concurrent_batch(*args, **kwargs):
        result = real(*args, **kwargs)
        BatchInserter(engine).insert(make_samples(3, start=START + timedelta(minutes=5), seed=2), now=now)
        return result

    monkeypatch.setattr(rollups, "rollup_hours", with_a_concurrent_batch)
    rollup_dirty(engine, now=now)
    monkeypatch.setattr(rollups, "rollup_hours", real)
    with engine.connect() as conn:
        version = conn.execute(select(RollupDirtyHour.__table__.c.version)).scalar_one()
    assert version == 2  # the later batch's mark survived: it will be recomputed next time
    rollup_dirty(engine, now=now)
    assert rollup_rows(engine)[(make_samples(1)[0].target, START, "local")]["samples"] == 2


def test_the_open_hours_are_redone_every_few_minutes_not_every_run(engine):
    from monitor.storage.rollups import OPEN_HOURS_EVERY_S

    seed(engine)
    with engine.begin() as conn:
        conn.execute(RollupDirtyHour.__table__.delete())
    at = START + 2 * HOUR + timedelta(minutes=20)
    assert rollup_recent(engine, now=at).hours == (START + HOUR, START + 2 * HOUR)  # a first run
    minute = timedelta(minutes=1)
    assert rollup_recent(engine, now=at + minute).hours == ()  # a minute on: nothing is due
    every = timedelta(seconds=OPEN_HOURS_EVERY_S)
    assert rollup_recent(engine, now=at + every).hours == (START + 2 * HOUR,)  # the open hour, again
    # Leaving the grace, an hour is redone once more, final, whenever the watermark passes it.
    at_next = START + 3 * HOUR + timedelta(minutes=16)
    assert rollup_recent(engine, now=at_next).hours == (START + 2 * HOUR, START + 3 * HOUR)
    assert rollup_recent(engine, now=at_next + minute).hours == ()
