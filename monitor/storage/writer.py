"""SampleWriter: probes hand samples over and never wait on the database.

`submit()` appends to a bounded in-memory queue (a few microseconds, any
thread). One background thread writes what is queued (see ingest.py) when
`batch_size` samples wait or every `flush_interval_s`, up to `max_batch_size`
per transaction.
When the database fails, the batch goes to the on-disk spool instead and the
writer retries with exponential backoff; once a write succeeds again the spool
is replayed oldest segment first, before newer queued batches, so the spool
drains in order. A full queue sends the sample straight to the spool: nothing is
dropped silently (only the spool's own size bound drops data, counted).

Batches failing for a data reason (not the database being down) are split in
halves and retried, down to single samples (a bad row in 20,000 costs ~30
transactions, not 20,000); a sample that still fails is appended to
`rejected-samples.ndjson` in the spool directory and counted, so one bad row
can never wedge the writer.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.engine import URL

from monitor.sample import Sample
from monitor.storage.db import as_engine, db_error_line, redact_url
from monitor.storage.ingest import BatchInserter, is_transient
from monitor.storage.spool import DEFAULT_MAX_BYTES, Spool

log = logging.getLogger(__name__)

REJECTED_FILE = "rejected-samples.ndjson"


@dataclass(frozen=True, slots=True)
class WriterStats:
    queue_depth: int
    queue_max: int
    spool_bytes: int
    spool_segments: int
    spool_samples: int
    submitted_total: int
    written_total: int  # committed to the database, replays included
    spooled_total: int
    replayed_total: int
    failed_batches: int
    dropped_total: int  # lost to the spool's size bound or a failing disk
    rejected_total: int  # refused by the database as bad data, kept in REJECTED_FILE
    last_write_at: datetime | None
    last_error: str | None
    database_up: bool


class SampleWriter:
    def __init__(
        self,
        engine_or_url: Engine | str | URL,
        spool_dir: str | os.PathLike,
        *,
        batch_size: int = 500,
        max_batch_size: int | None = None,
        flush_interval_s: float = 0.5,
        queue_max: int = 100_000,
        spool_max_bytes: int = DEFAULT_MAX_BYTES,
        spool_segment_bytes: int | None = None,
        retry_min_s: float = 0.5,
        retry_max_s: float = 30.0,
        stuck_after_s: float = 60.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        start: bool = True,
    ) -> None:
        self.engine, self._owns_engine = as_engine(engine_or_url)
        self.spool = Spool(spool_dir, max_bytes=spool_max_bytes, segment_bytes=spool_segment_bytes)
        self.batch_size = batch_size
        # A backlog is written in bigger transactions: per-transaction cost (commit,
        # round trips, bookkeeping) dominates, so a writer behind catches up faster.
        # 40x: in benchmarks/ingest.py 20,000 per transaction ran at 0.9x raw COPY
        # where 5,000 ran at 0.65x (same run); rows stream into COPY, so a big
        # batch holds no more memory than its queued samples.
        self.max_batch_size = max(batch_size, max_batch_size or 40 * batch_size)
        self.flush_interval_s = flush_interval_s
        self.queue_max = queue_max
        self.retry_min_s, self.retry_max_s = retry_min_s, retry_max_s
        self.stuck_after_s = stuck_after_s
        self.clock = clock
        self._inserter = BatchInserter(self.engine)
        self._queue: deque[Sample] = deque()
        self._cond = threading.Condition()
        self._stopping = False
        self._closed = False
        self._wake = False
        self._inflight: list[Sample] = []
        self._submitted = self._settled = 0
        self._written = self._spooled = self._replayed = self._failed = self._rejected = 0
        self._last_write_at: datetime | None = None
        self._last_error: str | None = None
        self._db_up = True
        self._backoff_s = retry_min_s
        self._retry_at = 0.0
        now = time.monotonic()
        self._last_success_mono = self._last_idle_mono = now
        self._thread = threading.Thread(target=self._run, name="firsttoken-writer", daemon=True)
        if start:
            self._thread.start()

    def start(self) -> None:
        """Start the writer thread (done by the constructor unless `start=False`)."""
        if not self._thread.is_alive() and not self._closed:
            self._thread.start()

    # -- producer side -------------------------------------------------------

    def submit(self, sample: Sample) -> None:
        """Non-blocking and thread-safe; the sample is never dropped silently."""
        with self._cond:
            self._submitted += 1
            if not self._closed and len(self._queue) < self.queue_max:
                self._queue.append(sample)
                if len(self._queue) >= self.batch_size:
                    self._cond.notify()
                return
        # Queue full (or writer closed): straight to disk, outside the queue lock.
        self.spool.append([sample])
        with self._cond:
            self._spooled += 1
            self._settled += 1
            self._cond.notify_all()

    def submit_many(self, samples: Sequence[Sample]) -> None:
        for sample in samples:
            self.submit(sample)

    # -- shutdown ------------------------------------------------------------

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every sample submitted so far is durable (database or spool)."""
        with self._cond:
            target = self._submitted
            self._wake = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._settled >= target, timeout_s)

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until everything is in the database: queue written and spool replayed."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        if not self.flush(timeout_s):
            return False
        with self._cond:
            return (
                self._cond.wait_for(
                    lambda: (self.spool.is_empty() and not self._queue) or not self._thread.is_alive(),
                    None if deadline is None else max(0.0, deadline - time.monotonic()),
                )
                and self.spool.is_empty()
            )

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what can be written within `timeout_s`; spool the rest; stop."""
        with self._cond:
            if self._closed:
                return
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout_s)
        with self._cond:
            self._closed = True
            leftover = list(self._queue)
            self._queue.clear()
            # A write hung past the timeout, or the thread gave up on a surprise mid-batch:
            # spool that batch too. If it committed after all, the replay skips the duplicate ids.
            if self._thread.is_alive() or self._inflight:
                leftover = list(self._inflight) + leftover
        if leftover:
            self.spool.append(leftover)
            log.warning("writer closed with %d samples not written: kept in the spool", len(leftover))
        self.spool.close()
        if not self._thread.is_alive():
            self._inserter.close()
            if self._owns_engine:
                self.engine.dispose()

    # -- health --------------------------------------------------------------

    def stats(self) -> WriterStats:
        spool = self.spool.stats()
        with self._cond:
            return WriterStats(
                queue_depth=len(self._queue),
                queue_max=self.queue_max,
                spool_bytes=spool.bytes,
                spool_segments=spool.segments,
                spool_samples=spool.samples,
                submitted_total=self._submitted,
                written_total=self._written,
                spooled_total=self._spooled,
                replayed_total=self._replayed,
                failed_batches=self._failed,
                dropped_total=spool.dropped_samples,
                rejected_total=self._rejected,
                last_write_at=self._last_write_at,
                last_error=self._last_error,
                database_up=self._db_up,
            )

    def is_stuck(self, stuck_after_s: float | None = None) -> bool:
        """No successful write for `stuck_after_s` while samples wait (queued or spooled)."""
        limit = self.stuck_after_s if stuck_after_s is None else stuck_after_s
        with self._cond:
            pending = bool(self._queue) or bool(self._inflight)
            since = max(self._last_success_mono, self._last_idle_mono)
        pending = pending or not self.spool.is_empty()
        return pending and time.monotonic() - since > limit

    # -- the writer thread ---------------------------------------------------

    def _run(self) -> None:
        surprises = 0  # unexpected errors in a row
        while True:
            with self._cond:
                if len(self._queue) < self.batch_size and not (self._stopping or self._wake):
                    self._cond.wait(self.flush_interval_s)
                self._wake = False
                stopping = self._stopping
            try:
                self._drain(stopping)
                surprises = 0
            except Exception:  # the writer must outlive any surprise
                surprises += 1
                if surprises <= 3 or surprises % 100 == 0:  # a lasting fault must not flood the log
                    log.exception("unexpected error in the sample writer (%d in a row)", surprises)
                if stopping:
                    return  # close() spools what is left
                with self._cond:  # and must not spin: back off as for an outage
                    self._cond.wait(min(self.retry_max_s, 0.1 * 2 ** min(surprises, 8)))
            if stopping:
                with self._cond:
                    if not self._queue:
                        self._cond.notify_all()
                        return

    def _drain(self, stopping: bool) -> None:
        while True:
            # The spool holds older samples than the queue: replay it first. Not while
            # stopping: it stays on disk for the next start, and shutdown stays quick.
            if not stopping and not self.spool.is_empty() and time.monotonic() >= self._retry_at:
                self._replay()
            with self._cond:
                batch = [self._queue.popleft() for _ in range(min(self.max_batch_size, len(self._queue)))]
                self._inflight = batch
                if not batch and self.spool.is_empty():
                    self._last_idle_mono = time.monotonic()
            if not batch:
                return
            try:
                self._write_or_spool(batch)
            finally:
                with self._cond:
                    self._inflight = []
                    self._settled += len(batch)
                    self._cond.notify_all()
            if not stopping and len(self._queue) < self.batch_size:
                return

    def _write_or_spool(self, batch: list[Sample]) -> None:
        if not self.spool.is_empty() or time.monotonic() < self._retry_at:
            self._to_spool(batch)  # behind what is already waiting, in order
            return
        try:
            self._insert(batch, idempotent=False)
        except Exception as error:
            self._failed_write(error)
            self._to_spool(batch)
            return
        self._succeeded(len(batch))

    def _replay(self) -> None:
        while (segment := self.spool.oldest()) is not None:
            samples = self.spool.read(segment)
            try:
                for start in range(0, len(samples), self.max_batch_size):
                    self._insert(samples[start : start + self.max_batch_size], idempotent=True)
            except Exception as error:
                self._failed_write(error)
                return
            self.spool.remove(segment)
            with self._cond:
                self._replayed += len(samples)
                self._cond.notify_all()
            if samples:
                self._succeeded(len(samples))
                log.info("replayed %d spooled samples from %s", len(samples), segment.path.name)

    def _insert(self, batch: list[Sample], *, idempotent: bool) -> None:
        try:
            self._inserter.insert(batch, now=self.clock(), idempotent=idempotent)
        except Exception as error:
            if is_transient(error):
                raise
            self._isolate(batch, error)

    def _isolate(self, batch: list[Sample], batch_error: Exception) -> None:
        log.warning("a batch of %d samples was refused (%s); retrying in halves", len(batch), _one_line(batch_error))
        pending = [(batch, batch_error)]  # the whole batch just failed: start with its halves
        while pending:
            part, error = pending.pop()
            if error is None:
                try:
                    self._inserter.insert(part, now=self.clock(), idempotent=True)
                    continue
                except Exception as part_error:
                    if is_transient(part_error):
                        raise
                    error = part_error
            if len(part) == 1:
                self._reject(part[0], error)
            else:
                half = len(part) // 2
                pending += [(part[half:], None), (part[:half], None)]  # first half next: rows keep their order

    def _reject(self, sample: Sample, error: Exception) -> None:
        record = {"error": _one_line(error), "sample": sample.to_dict()}
        with open(Path(self.spool.dir) / REJECTED_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, default=str) + "\n")
        with self._cond:
            self._rejected += 1
        log.error("sample %s refused by the database, kept in %s: %s", sample.id, REJECTED_FILE, _one_line(error))

    def _to_spool(self, batch: list[Sample]) -> None:
        if self.spool.append(batch):
            with self._cond:
                self._spooled += len(batch)

    def _succeeded(self, count: int) -> None:
        with self._cond:
            self._written += count
            self._last_write_at = self.clock()
            self._last_success_mono = time.monotonic()
            if not self._db_up:
                log.warning("database %s is reachable again", redact_url(self.engine.url))
            self._db_up = True
            self._backoff_s = self.retry_min_s
            self._retry_at = 0.0

    def _failed_write(self, error: Exception) -> None:
        with self._cond:
            self._failed += 1
            self._last_error = _one_line(error)
            if self._db_up:
                log.warning(
                    "database %s unavailable (%s): spooling samples to %s",
                    redact_url(self.engine.url),
                    self._last_error,
                    self.spool.dir,
                )
            self._db_up = False
            self._retry_at = time.monotonic() + self._backoff_s
            self._backoff_s = min(self._backoff_s * 2, self.retry_max_s)


def _one_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {db_error_line(error)}"[:300]
