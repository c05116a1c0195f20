"""Retention (leader only): raw samples for `retention.raw`, rollups for `retention.rollups`.

Daily rollups follow the hourly ones: days wholly before the cutoff go, and the
day the cutoff cuts is rebuilt from the hours it keeps (so a day's row never
counts an hour that is gone).

PostgreSQL drops whole day partitions (DESIGN §9: never DELETE row by row);
SQLite, with a plain table and small volumes, deletes in chunks so the writer
is never locked out for long.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, bindparam, delete, text

from monitor.storage.models import RollupDaily, RollupDirtyHour, RollupHourly, UTCDateTime
from monitor.storage.partitions import drop_partitions_before
from monitor.storage.rollups import HOUR, day_floor, rollup_days
from monitor.units import DAY_S

DEFAULT_RAW_S = 30 * DAY_S
DEFAULT_ROLLUPS_S = 400 * DAY_S
_SQLITE_CHUNK = 10_000


@dataclass(frozen=True, slots=True)
class RetentionResult:
    dropped_partitions: tuple[str, ...]
    deleted_samples: int  # SQLite only; PostgreSQL drops partitions
    deleted_rollups: int


def apply_retention(
    engine: Engine, *, raw_s: float = DEFAULT_RAW_S, rollups_s: float = DEFAULT_ROLLUPS_S, now: datetime | None = None
) -> RetentionResult:
    now = now or datetime.now(UTC)
    raw_cutoff = now - timedelta(seconds=raw_s)
    rollup_cutoff = now - timedelta(seconds=rollups_s)
    dropped: list[str] = []
    deleted_samples = 0
    if engine.dialect.name == "postgresql":
        dropped = drop_partitions_before(engine, raw_cutoff)
    else:
        deleted_samples = _sqlite_delete_samples(engine, raw_cutoff)
    rollups = RollupHourly.__table__
    daily = RollupDaily.__table__
    dirty = RollupDirtyHour.__table__
    with engine.begin() as conn:
        deleted_rollups = conn.execute(delete(rollups).where(rollups.c.hour < rollup_cutoff)).rowcount
        conn.execute(delete(daily).where(daily.c.day < day_floor(rollup_cutoff)))
        # A dirty mark for an hour whose raw data is gone can never be recomputed.
        conn.execute(delete(dirty).where(dirty.c.hour < raw_cutoff - timedelta(days=1)))
    if deleted_rollups:  # the day the cutoff cuts lost hours: its daily rows count only those kept
        rollup_days(engine, rollup_cutoff, rollup_cutoff + HOUR, now=now)
    return RetentionResult(tuple(dropped), deleted_samples, deleted_rollups)


_SQLITE_DELETE = text(
    "DELETE FROM samples WHERE rowid IN (SELECT rowid FROM samples WHERE started_at < :cutoff LIMIT :chunk)"
).bindparams(bindparam("cutoff", type_=UTCDateTime()))


def _sqlite_delete_samples(engine: Engine, cutoff: datetime) -> int:
    total = 0
    while True:
        with engine.begin() as conn:
            deleted = conn.execute(_SQLITE_DELETE, {"cutoff": cutoff, "chunk": _SQLITE_CHUNK}).rowcount
        total += deleted
        if deleted < _SQLITE_CHUNK:
            return total
