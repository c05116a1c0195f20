"""Write one batch of samples in one transaction, as fast as each database allows.

PostgreSQL, fresh batches: binary COPY straight into `samples` (partition
routing is done by the server). Rows are converted inside the COPY loop, as
raw COPY does, so their conversion overlaps the server parsing what psycopg's
copy thread has already sent. COPY cannot skip duplicates, but a fresh batch
only holds new uuid4 ids, so a duplicate means the batch was already stored
(a commit whose acknowledgement was lost): we then fall back to the idempotent
path for that batch. Spool replays always take the idempotent path: binary
COPY into a session temp table, then INSERT … SELECT … ON CONFLICT DO NOTHING.
`benchmarks/ingest.py` compares both with executemany and the ORM.

SQLite: executemany INSERT … ON CONFLICT DO NOTHING.

In the same transaction the batch upserts `targets.last_seen`,
`agents.last_sample_at`, and marks hours older than the current one as dirty
so the leader recomputes their rollups (a replay of yesterday, a late batch).
`targets.last_seen` is touched at most every TARGET_TOUCH_S per target and
process: updating a shared row per sample would double the write volume and
make agents queue on each other's row locks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta

import psycopg
from sqlalchemy import Connection, Engine, exc
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.sample import Sample
from monitor.storage.bookkeeping import BatchFacts, batch_facts, record_batch
from monitor.storage.models import SampleRow
from monitor.storage.partitions import PartitionCache
from monitor.storage.rows import SAMPLE_COLUMNS, sample_values

_PG_TYPES = {
    "String": "text",
    "Text": "text",
    "UTCDateTime": "timestamptz",
    "Boolean": "bool",
    "Float": "float8",
    "BigInteger": "int8",
    "Integer": "int4",
}
COPY_TYPES = [_PG_TYPES.get(type(c.type).__name__, "jsonb") for c in SampleRow.__table__.columns]
_COLS = ", ".join(SAMPLE_COLUMNS)
# Connection classes (08), resources (53), operator/shutdown (57), system (58),
# rollbacks (40), lock timeouts (55), read-only after a failover (25),
# missing database or table while it is being restored (3D, 42P01), auth (28),
# a column missing while a migration is undone and applied again beside live
# agents (42703: the samples spool until the schema is back, none is rejected).
_TRANSIENT_SQLSTATE_CLASSES = ("08", "53", "57", "58", "40", "55", "25", "3D", "28")
_TRANSIENT_SQLSTATES = ("42P01", "42703")
_NO_PARTITION = "no partition of relation"
TARGET_TOUCH_S = 900.0


def root_error(error: BaseException) -> BaseException:
    return getattr(error, "orig", None) or error


def is_transient(error: BaseException) -> bool:
    """True when retrying later can succeed (the database, not the data, is the problem)."""
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    if isinstance(error, exc.DisconnectionError | exc.TimeoutError | exc.InterfaceError | OSError):
        return True
    err = root_error(error)
    if isinstance(err, psycopg.Error):
        state = err.sqlstate or ""
        if not state:  # no server answer at all: connection-level failure
            return True
        return state.startswith(_TRANSIENT_SQLSTATE_CLASSES) or state in _TRANSIENT_SQLSTATES
    if isinstance(err, sqlite3.OperationalError | sqlite3.InterfaceError):
        return True
    return isinstance(error, exc.OperationalError)


def is_duplicate(error: BaseException) -> bool:
    err = root_error(error)
    return isinstance(err, psycopg.errors.UniqueViolation | sqlite3.IntegrityError) and "unique" in str(err).lower()


def is_missing_partition(error: BaseException) -> bool:
    return _NO_PARTITION in str(root_error(error))


class BatchInserter:
    """Used from one thread. Holds one connection across batches: checking one out
    per batch costs a liveness ping, and round trips are most of a batch's time."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.postgres = engine.dialect.name == "postgresql"
        self.partitions = PartitionCache(engine)
        self._conn: Connection | None = None
        # target id -> last_seen this process has committed; see TARGET_TOUCH_S.
        self._target_seen: dict[str, datetime] = {}

    def insert(self, samples: Sequence[Sample], *, now: datetime, idempotent: bool = True) -> None:
        if not samples:
            return
        facts = batch_facts(samples, now)
        targets = self._targets_to_touch(facts.newest)
        if self.postgres:
            self.partitions.ensure_days(facts.days)
            write = self._copy_idempotent if idempotent else self._copy_direct
        else:
            write = self._sqlite_rows
        reused = self._conn is not None
        try:
            self._transaction(samples, facts, targets, now, write)
        except Exception as error:
            if is_missing_partition(error):  # retention dropped a day we had cached
                self.partitions.forget()
                self.partitions.ensure_days(facts.days)
            elif is_transient(error) and reused:
                pass  # the kept connection went stale (server restart, idle timeout): one retry on a new one
            elif not (is_duplicate(error) and not idempotent):
                raise
            # The first attempt may have committed without us hearing back: idempotent from here.
            self._transaction(samples, facts, targets, now, self._copy_idempotent if self.postgres else write)
        self._touched(targets)

    def _transaction(self, samples, facts: BatchFacts, targets, now, write_samples) -> None:
        conn = self._conn = self._conn or self.engine.connect()
        try:
            with conn.begin():
                write_samples(conn, samples)
                record_batch(conn, facts, targets, now)
        except Exception as error:
            if is_transient(error):
                self.close()
            raise

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.invalidate()
                conn.close()
            except Exception:  # already broken; nothing left to release
                pass

    def _targets_to_touch(self, newest: dict[str, Sample]) -> list[Sample]:
        touch_after = timedelta(seconds=TARGET_TOUCH_S)
        seen_at = self._target_seen.get
        # Unsorted: record_batch puts the rows in id order (the lock order) itself.
        return [s for tid, s in newest.items() if (seen := seen_at(tid)) is None or s.started_at >= seen + touch_after]

    def _touched(self, targets: list[Sample]) -> None:
        # Only after the commit: a rolled-back touch must be retried with the next batch.
        for s in targets:
            self._target_seen[s.target] = s.started_at

    @staticmethod
    def _copy_direct(conn: Connection, samples: Sequence[Sample]) -> None:
        _copy(conn, "samples", samples)

    @staticmethod
    def _copy_idempotent(conn: Connection, samples: Sequence[Sample]) -> None:
        # Created once per session (IF NOT EXISTS is a catalog lookup afterwards); not
        # cached in Python, because a rolled-back first batch also rolls back the CREATE.
        conn.exec_driver_sql(
            "CREATE TEMP TABLE IF NOT EXISTS samples_stage (LIKE samples INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
        )
        _copy(conn, "samples_stage", samples)
        conn.exec_driver_sql(f"INSERT INTO samples ({_COLS}) SELECT {_COLS} FROM samples_stage ON CONFLICT DO NOTHING")

    @staticmethod
    def _sqlite_rows(conn: Connection, samples: Sequence[Sample]) -> None:
        stmt = sqlite_insert(SampleRow.__table__).on_conflict_do_nothing()
        conn.execute(stmt, [dict(zip(SAMPLE_COLUMNS, sample_values(s), strict=True)) for s in samples])


def _copy(conn: Connection, table: str, samples: Sequence[Sample]) -> None:
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        with cursor.copy(f"COPY {table} ({_COLS}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(COPY_TYPES)
            write_row = copy.write_row
            for sample in samples:
                write_row(sample_values(sample))
    finally:
        cursor.close()
