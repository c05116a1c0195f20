import dataclasses
import time
from datetime import UTC

from sqlalchemy import func, select

from monitor.storage.ingest import BatchInserter
from monitor.storage.models import SampleRow, Target
from monitor.storage.queries import insert_samples, recent_samples
from monitor.storage.spool import Spool
from monitor.storage.writer import REJECTED_FILE, SampleWriter

from .factories import BASE_TIME, make_samples

DEAD_URL = "postgresql+psycopg://postgres@127.0.0.1:1/nothing_listens_here"


def stored_ids(engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(select(SampleRow.__table__.c.id)).scalars())


def as_utc(moment):
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def count(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(SampleRow)).scalar()


class CountingInserter(BatchInserter):
    def __init__(self, engine):
        super().__init__(engine)
        self.calls: list[int] = []

    def insert(self, samples, **kwargs):
        self.calls.append(len(samples))
        return super().insert(samples, **kwargs)


def test_writer_writes_in_batches(engine, tmp_path):
    writer = SampleWriter(
        engine, tmp_path / "spool", batch_size=100, max_batch_size=100, flush_interval_s=0.05, start=False
    )
    writer._inserter = counting = CountingInserter(engine)
    samples = make_samples(1234)
    for s in samples:
        writer.submit(s)
    writer.start()
    assert writer.flush(30)
    assert sorted(stored_ids(engine)) == sorted(s.id for s in samples)
    assert max(counting.calls) == 100 and len(counting.calls) == 13
    stats = writer.stats()
    assert (stats.written_total, stats.queue_depth, stats.spool_samples, stats.failed_batches) == (1234, 0, 0, 0)
    assert stats.last_write_at is not None and stats.database_up
    writer.close()


def test_a_backlog_is_written_in_bigger_transactions(engine, tmp_path):
    writer = SampleWriter(engine, tmp_path / "spool", batch_size=100, flush_interval_s=0.05, start=False)
    writer._inserter = counting = CountingInserter(engine)
    writer.submit_many(make_samples(2500))
    writer.start()
    assert writer.flush(30)
    assert counting.calls == [2500]  # a backlog goes in one transaction, up to 40 x batch_size
    writer.close()


def test_a_backlog_beyond_max_batch_size_is_split(engine, tmp_path):
    writer = SampleWriter(engine, tmp_path / "spool", batch_size=10, flush_interval_s=0.05, start=False)
    writer._inserter = counting = CountingInserter(engine)
    writer.submit_many(make_samples(1000))
    writer.start()
    assert writer.flush(30)
    assert counting.calls == [400, 400, 200]
    assert count(engine) == 1000
    writer.close()


def test_a_big_batch_of_new_targets_records_every_target(engine, tmp_path):
    # Thousands of first-seen targets in one transaction go through the targets
    # stage (COPY on PostgreSQL); every row lands with its first and last times.
    samples = make_samples(6000, targets=3000, step_s=0.5)
    writer = SampleWriter(engine, tmp_path / "spool", batch_size=200, flush_interval_s=0.05, start=False)
    writer._inserter = counting = CountingInserter(engine)
    writer.submit_many(samples)
    writer.start()
    assert writer.flush(60)
    assert counting.calls == [6000]
    with engine.connect() as conn:
        rows = {r.id: r for r in conn.execute(select(Target.__table__))}
    assert len(rows) == 3000
    first = {s.target: s.started_at for s in samples[:3000]}
    last = {s.target: s.started_at for s in samples[3000:]}
    for target_id, row in rows.items():
        assert as_utc(row.first_seen) == first[target_id]
        assert as_utc(row.last_seen) == last[target_id]
    writer.close()


def test_a_bad_row_in_a_big_batch_is_found_by_halving(engine, tmp_path):
    samples = make_samples(2048)
    poison = dataclasses.replace(samples[1500], output_tokens=2**70)
    samples[1500] = poison
    writer = SampleWriter(engine, tmp_path / "spool", batch_size=100, flush_interval_s=0.05, start=False)
    writer._inserter = counting = CountingInserter(engine)
    writer.submit_many(samples)
    writer.start()
    assert writer.flush(60)
    assert sorted(stored_ids(engine)) == sorted(s.id for s in samples if s is not poison)
    assert writer.stats().rejected_total == 1
    # the batch, then two halves per level of 11 (2048 = 2**11): 2 log2(n) + 1 inserts, not n
    assert len(counting.calls) == 2 * 11 + 1
    writer.close()


def test_a_partial_batch_is_written_after_the_flush_interval(engine, tmp_path):
    writer = SampleWriter(engine, tmp_path / "spool", batch_size=500, flush_interval_s=0.05)
    samples = make_samples(7)
    writer.submit_many(samples)
    deadline = time.monotonic() + 10
    while count(engine) < 7 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert count(engine) == 7
    writer.close()


def test_a_full_queue_spills_to_the_spool_and_nothing_is_lost(engine, tmp_path):
    writer = SampleWriter(engine, tmp_path / "spool", queue_max=50, batch_size=20, start=False)
    samples = make_samples(130)
    for s in samples:
        writer.submit(s)  # never blocks: 50 queued, 80 straight to disk
    stats = writer.stats()
    assert (stats.queue_depth, stats.spool_samples, stats.spooled_total) == (50, 80, 80)
    writer.start()
    assert writer.drain(30)
    assert sorted(stored_ids(engine)) == sorted(s.id for s in samples)
    writer.close()


def test_close_writes_the_queue_and_later_submits_go_to_the_spool(engine, tmp_path):
    writer = SampleWriter(engine, tmp_path / "spool", batch_size=1000, flush_interval_s=60)
    samples = make_samples(10)
    writer.submit_many(samples[:7])
    writer.close(timeout_s=10)
    assert count(engine) == 7
    writer.submit_many(samples[7:])  # after close: kept on disk, not dropped
    assert writer.stats().spool_samples == 3
    writer.spool.close()
    again = SampleWriter(engine, tmp_path / "spool")
    assert again.drain(30)
    assert count(engine) == 10
    again.close()


def test_a_dead_database_spools_everything_and_reports_stuck(tmp_path):
    writer = SampleWriter(DEAD_URL, tmp_path / "spool", batch_size=10, flush_interval_s=0.02, retry_min_s=0.05)
    samples = make_samples(95)
    writer.submit_many(samples)
    assert writer.flush(30)  # durable on disk even though the database never answered
    stats = writer.stats()
    assert stats.spool_samples == 95 and stats.written_total == 0
    assert stats.failed_batches >= 1 and not stats.database_up and stats.last_error
    assert not writer.is_stuck(stuck_after_s=60)
    assert writer.is_stuck(stuck_after_s=0.0)
    writer.close(timeout_s=2)
    replayed = Spool(tmp_path / "spool")
    segment_samples = []
    while (seg := replayed.oldest()) is not None:
        segment_samples += replayed.read(seg)
        replayed.remove(seg)
    assert segment_samples == samples  # in submission order
    replayed.close()


def test_spool_bound_drops_oldest_while_the_database_is_down(tmp_path):
    writer = SampleWriter(
        DEAD_URL,
        tmp_path / "spool",
        batch_size=10,
        flush_interval_s=0.01,
        spool_max_bytes=20_000,
        spool_segment_bytes=4_000,
        retry_min_s=0.05,
    )
    writer.submit_many(make_samples(300))
    assert writer.flush(30)
    stats = writer.stats()
    assert stats.dropped_total > 0
    assert stats.spool_bytes <= 20_000
    assert stats.dropped_total + stats.spool_samples == 300
    writer.close(timeout_s=2)


def test_a_bad_row_is_rejected_alone_and_kept_aside(engine, tmp_path):
    writer = SampleWriter(engine, tmp_path / "spool", batch_size=50, flush_interval_s=0.02)
    samples = make_samples(20)
    poison = dataclasses.replace(samples[5], output_tokens=2**70)  # too big for any integer column
    samples[5] = poison
    writer.submit_many(samples)
    assert writer.flush(30)
    assert sorted(stored_ids(engine)) == sorted(s.id for s in samples if s is not poison)
    assert writer.stats().rejected_total == 1
    assert poison.id in (tmp_path / "spool" / REJECTED_FILE).read_text()
    writer.close()


def test_crash_after_commit_before_segment_delete_yields_no_duplicates(engine, tmp_path):
    samples = make_samples(60)
    spool = Spool(tmp_path / "spool", segment_bytes=3_000)
    spool.append(samples[:30])
    spool.append(samples[30:])
    spool.close()
    # The previous process committed the first segments, then died before deleting them.
    insert_samples(engine, samples[:40])
    writer = SampleWriter(engine, tmp_path / "spool", batch_size=25)
    assert writer.drain(30)
    ids = stored_ids(engine)
    assert len(ids) == len(set(ids)) == 60
    writer.close()


def test_delete_failing_after_commit_is_retried_without_duplicates(engine, tmp_path, monkeypatch):
    spool_dir = tmp_path / "spool"
    samples = make_samples(40)
    seed = Spool(spool_dir)
    seed.append(samples)
    seed.close()
    real_remove = Spool.remove
    failures = {"n": 0}

    def crash_once(self, segment):
        if failures["n"] == 0:
            failures["n"] += 1
            raise OSError("simulated crash between commit and delete")
        real_remove(self, segment)

    monkeypatch.setattr(Spool, "remove", crash_once)
    writer = SampleWriter(engine, spool_dir, batch_size=16, flush_interval_s=0.02)
    assert writer.drain(30)
    assert failures["n"] == 1
    ids = stored_ids(engine)
    assert len(ids) == len(set(ids)) == 40
    assert recent_samples(engine, since=BASE_TIME) == samples
    writer.close()
