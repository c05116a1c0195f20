"""Daily partitions of `samples` on PostgreSQL (DESIGN §9).

Choice: no DEFAULT partition. A partition is created before the first insert
into its day — ahead of time by the leader (today … +2 days) and on demand by
the writer for any other day (a spool replay of last week). A DEFAULT
partition would accept such rows silently but then block creating that day's
partition ("would be violated by some row") until the rows were moved, which
is a heavier and riskier operation than creating the partition first.

Partitions are named `samples_pYYYYMMDD` and cover one UTC day. Creation and
dropping both take a strong lock on `samples`, so they run in short
transactions with a lock timeout: waiting behind a long dashboard query would
otherwise queue every writer behind this statement.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import Connection, Engine, text

PARTITION_PREFIX = "samples_p"
_NAME = re.compile(r"^samples_p(\d{8})$")
# pg_advisory_xact_lock key: two agents creating the same day must not race.
_LOCK_KEY = 0x66745F70617274  # "ft_part"
LOCK_TIMEOUT = "5s"


def is_partition_name(name: str) -> bool:
    return bool(_NAME.match(name))


def partition_name(day: date) -> str:
    return f"{PARTITION_PREFIX}{day:%Y%m%d}"


def partition_day(name: str) -> date | None:
    match = _NAME.match(name)
    return datetime.strptime(match.group(1), "%Y%m%d").date() if match else None


def day_of(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def list_partitions(conn: Connection | Engine) -> dict[date, str]:
    sql = text(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'samples'::regclass"
    )
    if isinstance(conn, Engine):
        with conn.connect() as c:
            names = c.execute(sql).scalars().all()
    else:
        names = conn.execute(sql).scalars().all()
    return {day: name for name in names if (day := partition_day(name)) is not None}


def ensure_partitions(engine: Engine, days: Iterable[date]) -> list[str]:
    """Create the missing day partitions; returns the names created."""
    wanted = sorted(set(days))
    if not wanted or engine.dialect.name != "postgresql":
        return []
    created = []
    with engine.begin() as conn:
        conn.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
        existing = list_partitions(conn)
        for day in wanted:
            if day in existing:
                continue
            start, end = _day_start(day), _day_start(day + timedelta(days=1))
            # Bounds are literals: DDL takes no bind parameters.
            conn.execute(
                text(
                    f"CREATE TABLE {partition_name(day)} PARTITION OF samples "
                    f"FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
                )
            )
            created.append(partition_name(day))
    return created


def ensure_partitions_ahead(engine: Engine, now: datetime, days_ahead: int = 2) -> list[str]:
    today = day_of(now)
    return ensure_partitions(engine, (today + timedelta(days=n) for n in range(days_ahead + 1)))


def drop_partitions_before(engine: Engine, cutoff: datetime) -> list[str]:
    """Drop every partition whose whole day ends at or before `cutoff`.

    A partition straddling the cutoff is kept until the next run after its
    day ends, so raw samples live up to one day longer than `retention.raw`.
    """
    if engine.dialect.name != "postgresql":
        return []
    dropped = []
    with engine.begin() as conn:
        conn.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
        for day, name in sorted(list_partitions(conn).items()):
            if _day_start(day + timedelta(days=1)) <= cutoff:
                conn.execute(text(f"DROP TABLE {name}"))
                dropped.append(name)
    return dropped


class PartitionCache:
    """Days known to have a partition, so the writer asks the catalog once per day.

    `forget()` after a "no partition for row" error: retention may have dropped
    a day this process still believed in.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._known: set[date] = set()
        self._lock = threading.Lock()

    def ensure_for(self, moments: Iterable[datetime]) -> None:
        self.ensure_days({day_of(m) for m in moments})

    def ensure_days(self, days: set[date]) -> None:
        if self.engine.dialect.name != "postgresql":
            return
        with self._lock:
            missing = days - self._known
        if missing:
            ensure_partitions(self.engine, missing)
            with self._lock:
                self._known |= missing

    def forget(self) -> None:
        with self._lock:
            self._known.clear()
