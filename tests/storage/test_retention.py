from datetime import UTC, datetime, timedelta

from sqlalchemy import event, func, select

from monitor.storage.models import RollupHourly, SampleRow
from monitor.storage.partitions import ensure_partitions_ahead, list_partitions, partition_name
from monitor.storage.queries import insert_samples
from monitor.storage.retention import apply_retention
from monitor.storage.rollups import rollup_hours

from .factories import make_samples

NOW = datetime(2025, 6, 30, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def counts(engine) -> tuple[int, int]:
    with engine.connect() as conn:
        raw = conn.execute(select(func.count()).select_from(SampleRow)).scalar()
        rollups = conn.execute(select(func.count()).select_from(RollupHourly)).scalar()
    return raw, rollups


def test_partitions_are_made_ahead_for_today_and_two_days(engine):
    if engine.dialect.name != "postgresql":
        assert ensure_partitions_ahead(engine, NOW) == []
        return
    created = ensure_partitions_ahead(engine, NOW)
    assert created == [partition_name((NOW + n * DAY).date()) for n in range(3)]
    assert ensure_partitions_ahead(engine, NOW) == []  # idempotent
    assert sorted(list_partitions(engine)) == [(NOW + n * DAY).date() for n in range(3)]


def test_retention_drops_old_raw_data_and_old_rollups(engine):
    # One sample an hour for 40 days before NOW.
    start = NOW - 40 * DAY
    samples = make_samples(40 * 24, start=start, step_s=3600, targets=1)
    insert_samples(engine, samples)
    rollup_hours(engine, start, NOW)
    assert counts(engine) == (960, 960)

    result = apply_retention(engine, raw_s=30 * 86400, rollups_s=35 * 86400, now=NOW)

    raw, rollups = counts(engine)
    assert rollups == 35 * 24 and result.deleted_rollups == 5 * 24
    cutoff = NOW - 30 * DAY
    with engine.connect() as conn:
        oldest = conn.execute(select(func.min(SampleRow.__table__.c.started_at))).scalar()
    if engine.dialect.name == "postgresql":
        # Whole days only: the day holding the cutoff survives until it has fully expired.
        assert oldest == datetime.combine(cutoff.date(), datetime.min.time(), tzinfo=UTC)
        assert len(result.dropped_partitions) == 10 and result.deleted_samples == 0
        assert min(list_partitions(engine)) == cutoff.date()
    else:
        assert oldest >= cutoff and result.deleted_samples == 960 - raw
    assert raw == len([s for s in samples if s.started_at >= oldest])


def test_retention_never_deletes_row_by_row_on_postgres(engine):
    if engine.dialect.name != "postgresql":
        return
    insert_samples(engine, make_samples(48, start=NOW - 40 * DAY, step_s=3600, targets=1))
    statements: list[str] = []

    def record(conn, cursor, statement, *args):
        statements.append(" ".join(statement.split()).upper())

    event.listen(engine, "before_cursor_execute", record)
    try:
        result = apply_retention(engine, raw_s=30 * 86400, now=NOW)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert counts(engine)[0] == 0 and len(result.dropped_partitions) == 3  # 48 h from noon: 3 days
    assert not [s for s in statements if s.startswith("DELETE FROM SAMPLES")]
    assert sum(s.startswith("DROP TABLE SAMPLES_P") for s in statements) == 3
