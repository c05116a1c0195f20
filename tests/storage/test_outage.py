"""The database goes away under a running writer and comes back: zero loss, zero duplicates, in order."""

import threading
import time

import pytest
from sqlalchemy import func, select

from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.ingest import BatchInserter
from monitor.storage.models import SampleRow
from monitor.storage.writer import SampleWriter
from tests.pg import pg_url

from .factories import make_samples

pytestmark = pytest.mark.postgres


class RecordingInserter(BatchInserter):
    """Remembers the ids of every committed batch, in commit order."""

    def __init__(self, engine):
        super().__init__(engine)
        self.committed: list[str] = []

    def insert(self, samples, **kwargs):
        super().insert(samples, **kwargs)
        self.committed += [s.id for s in samples]


def wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_outage_spools_then_replays_in_order_with_no_loss_and_no_duplicates(pg_server, tmp_path):
    name = pg_server.create_database()
    engine = make_engine(pg_url(name))
    migrate.upgrade(engine)
    writer = SampleWriter(
        engine, tmp_path / "spool", batch_size=50, flush_interval_s=0.02, retry_min_s=0.05, retry_max_s=0.3
    )
    writer._inserter = recorder = RecordingInserter(engine)
    samples = make_samples(3000, step_s=0.5, targets=20)
    submitted = threading.Event()

    def probe_loop() -> None:  # a steady stream of samples, like the scheduler's
        for i, sample in enumerate(samples):
            writer.submit(sample)
            if i % 50 == 49:
                time.sleep(0.01)
        submitted.set()

    producer = threading.Thread(target=probe_loop)
    producer.start()
    try:
        wait_for(lambda: writer.stats().written_total >= 300, 30, "the first writes")
        pg_server.set_allow_connections(name, False)  # backends killed, new connections refused
        wait_for(lambda: writer.stats().spool_samples >= 500, 60, "samples to pile up in the spool")
        during = writer.stats()
        assert not during.database_up and during.failed_batches >= 1
        assert writer.stats().written_total < len(samples)
    finally:
        pg_server.set_allow_connections(name, True)
    producer.join(60)
    assert submitted.is_set()
    assert writer.drain(120), writer.stats()

    stats = writer.stats()
    assert stats.spool_samples == 0 and stats.dropped_total == 0 and stats.rejected_total == 0
    assert stats.database_up and stats.replayed_total >= 500
    with engine.connect() as conn:
        ids = list(conn.execute(select(SampleRow.__table__.c.id)).scalars())
        total = conn.execute(select(func.count()).select_from(SampleRow)).scalar()
    assert total == len(ids) == len(set(ids)) == len(samples)
    assert set(ids) == {s.id for s in samples}
    first_commits = list(dict.fromkeys(recorder.committed))
    assert first_commits == [s.id for s in samples]  # replayed in submission order
    writer.close()
    engine.dispose()
