"""Hourly rollups: per (target, agent, hour) counts, error counts, token sums and
mergeable latency histograms, recomputed from raw samples (DESIGN §9).

`rollup_hours` is an idempotent upsert, one hour per statement. The leader
calls `rollup_recent` every minute: it recomputes every hour from the stored
watermark (`job_state.rollups.done_until`) up to `hour_floor(now - GRACE)`, so
a new leader catches up on hours its predecessor never finished, moves the
watermark there, recomputes the hours still open (the current one, and the last
within its grace) when OPEN_HOURS_EVERY_S have passed since it last did
(`job_state.rollups.updated_at`), and recomputes the hours writers marked dirty
(late batches, spool replays, another agent's backlog) on every run. So the
current hour's rollup is at most ~6 minutes behind; views shorter than a day
read raw samples and are never behind. The grace covers
samples committed just after an hour ends and agents' clocks disagreeing.
Rows are only ever upserted, never deleted: once retention has dropped an
hour's raw samples, recomputing it finds nothing and leaves the rollup alone.

Daily rollups (`rollups_daily`, migration 0008) are the merge of a UTC day's
hourly rows, so a 30-day window reads ~30 rows a target instead of 720. Every
path that writes hours rebuilds the completed days they fall in (`rollup_days`:
`rollup_hours` itself, `rollup_dirty` once per day, retention for the day its
cutoff cuts): for every day up to the newest daily row, the daily rows equal the
merge of that day's hourly rows. The current day is not kept (the minute job
would rebuild a growing day every minute); readers take its hours.

PostgreSQL aggregates server-side in one GROUP BY (`rollups_pg.py`); SQLite
reads the few needed columns and aggregates here.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from monitor.storage import histogram
from monitor.storage.models import (
    ALL_ROLLUP_METRICS,
    CACHE_ROLLUP_SUMS,
    PACKED_METRICS,
    ROLLUP_SUMS,
    JobState,
    RollupDaily,
    RollupDirtyHour,
    RollupHourly,
    SampleRow,
    rollup_source,
)
from monitor.storage.rollups_pg import aggregate as aggregate_pg
from monitor.storage.rollups_pg import upsert as upsert_pg

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
GRACE = timedelta(minutes=15)
OPEN_HOURS_EVERY_S = 300.0  # the current hour (and the last, in its grace) is redone at most this often
# A leader returning after a long gap catches up at most this far back.
MAX_CATCHUP = timedelta(days=31)
JOB = "rollups"
_TABLE = RollupHourly.__table__
_DAILY = RollupDaily.__table__
_KEY = ("target", "hour", "agent")


def hour_floor(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def day_floor(moment: datetime) -> datetime:
    return hour_floor(moment).replace(hour=0)


@dataclass(frozen=True, slots=True)
class RollupRun:
    hours: tuple[datetime, ...]  # recomputed from the watermark
    dirty_hours: tuple[datetime, ...]  # recomputed because writers marked them
    rows: int


def rollup_hours(
    engine: Engine, start_hour: datetime, end_hour: datetime, *, now: datetime | None = None, days: bool = True
) -> int:
    """Recompute every hour in [hour_floor(start_hour), end_hour); returns rows upserted.

    Then (unless `days` is False: the caller rebuilds them itself) the daily rows of the
    completed days those hours fall in."""
    now = now or datetime.now(UTC)
    first = hour_floor(start_hour)
    total, hour = 0, hour_floor(start_hour)
    while hour < end_hour:
        with engine.begin() as conn:
            if engine.dialect.name == "postgresql":
                total += upsert_pg(conn, aggregate_pg(conn, hour, now))
            else:
                rows = _aggregate_python(conn, hour, hour + HOUR, now)
                if rows:
                    conn.execute(_upsert(sqlite_insert), rows)
                total += len(rows)
        hour += HOUR
    if days:
        rollup_days(engine, first, end_hour, now=now)
    return total


def rollup_days(engine: Engine, start: datetime, end: datetime, *, now: datetime | None = None) -> int:
    """Rebuild the daily rows of every completed UTC day (`day + 1 day <= now`) that overlaps
    [start, end) from its hourly rows; returns rows written. A day whose hours are all gone
    loses its rows."""
    now = now or datetime.now(UTC)
    day, last = day_floor(start), min(end, day_floor(now))  # completed: day < day_floor(now)
    total = 0
    h, d = _TABLE.c, _DAILY.c
    while day < last:
        with engine.begin() as conn:
            rows = (
                conn.execute(select(_TABLE).where(h.hour >= day, h.hour < day + DAY).order_by(h.hour)).mappings().all()
            )
            groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
            for row in rows:
                groups[(row["target"], row["agent"])].append(row)
            merged = [merge_rows(target, day, agent, hours, now) for (target, agent), hours in groups.items()]
            conn.execute(_DAILY.delete().where(d.day == day))
            if merged:
                conn.execute(_DAILY.insert(), merged)
        total += len(merged)
        day += DAY
    return total


def merge_rows(target: str, day: datetime, agent: str, rows: list[Any], now: datetime) -> dict[str, Any]:
    """One daily row from hourly rows (mappings of rollups_hourly columns; pure): counts and
    sums added, minima and maxima taken, histograms and error counts merged."""
    errors: dict[str, int] = defaultdict(int)
    for r in rows:
        for kind, n in (r["error_counts"] or {}).items():
            errors[kind] += n
    out: dict[str, Any] = {
        "target": target,
        "day": day,
        "agent": agent,
        "error_counts": dict(sorted(errors.items())),
        "updated_at": now,
    }
    for column in (*ROLLUP_SUMS, *CACHE_ROLLUP_SUMS):
        out[column] = sum(r[column] or 0 for r in rows)
    for metric in ALL_ROLLUP_METRICS:
        hist = histogram.merge(histogram.from_json(r[f"{metric}_hist"]) for r in rows)
        out[f"{metric}_hist"] = {str(b): n for b, n in sorted(hist.items()) if n}
        if metric in PACKED_METRICS:
            out[f"{metric}_packed"] = histogram.pack(hist)
        out[f"{metric}_count"] = sum(r[f"{metric}_count"] or 0 for r in rows)
        for part, fn in (("sum", sum), ("min", min), ("max", max)):
            values = [v for r in rows if (v := r[f"{metric}_{part}"]) is not None]
            out[f"{metric}_{part}"] = fn(values) if values else None
    return out


def rollup_recent(engine: Engine, now: datetime | None = None) -> RollupRun:
    """The leader's periodic job (see the module docstring)."""
    now = now or datetime.now(UTC)
    current = hour_floor(now)
    state = JobState.__table__
    with engine.connect() as conn:
        row = conn.execute(select(state.c.done_until, state.c.updated_at).where(state.c.name == JOB)).first()
    done, refreshed_at = row if row is not None else (None, None)
    start = max(done or current - HOUR, current - MAX_CATCHUP)
    until = hour_floor(now - GRACE)
    # Hours the watermark leaves now are redone once more, final. The open ones (this hour, and
    # the last while its grace runs) only every OPEN_HOURS_EVERY_S: redoing the current hour is
    # a GROUP BY over everything it holds so far, ~0.9 s and a core's worth of CPU at 5,000
    # targets by mid-hour, and every minute that burst cost the probes beside it.
    refresh = refreshed_at is None or now - refreshed_at >= timedelta(seconds=OPEN_HOURS_EVERY_S)
    hours = _hours(start, min(until, current + HOUR)) + (_hours(max(start, until), current + HOUR) if refresh else [])
    rows = sum(rollup_hours(engine, hour, hour + HOUR, now=now, days=False) for hour in hours)
    # A day is built once, when the watermark leaves it (its hours are final, GRACE past
    # midnight), not on every run while its last hour is still being redone: at thousands of
    # targets a day's merge is seconds of CPU. Until then readers take its hours.
    rollup_days(engine, start, day_floor(until), now=now)
    if refresh or until != done:
        stmt = (pg_insert if engine.dialect.name == "postgresql" else sqlite_insert)(state)
        stmt = stmt.values(name=JOB, done_until=until, updated_at=now if refresh else refreshed_at)
        stmt = stmt.on_conflict_do_update(
            index_elements=["name"],
            set_={"done_until": stmt.excluded.done_until, "updated_at": stmt.excluded.updated_at},
        )
        with engine.begin() as conn:
            conn.execute(stmt)
    dirty = rollup_dirty(engine, now=now)
    return RollupRun(tuple(hours), tuple(dirty), rows)


def _hours(start: datetime, end: datetime) -> list[datetime]:
    out, hour = [], start
    while hour < end:
        out.append(hour)
        hour += HOUR
    return out


def rollup_dirty(engine: Engine, now: datetime | None = None) -> list[datetime]:
    """Recompute the hours marked dirty by writers; returns them.

    A mark is cleared only if its version is unchanged since we read it: a batch
    committed for that hour meanwhile re-marks it and it is done again next time.
    """
    table = RollupDirtyHour.__table__
    with engine.connect() as conn:
        marks = conn.execute(select(table.c.hour, table.c.version).order_by(table.c.hour)).all()
    for hour, _ in marks:
        rollup_hours(engine, hour, hour + HOUR, now=now, days=False)
    for day in sorted({day_floor(hour) for hour, _ in marks}):  # each day once, before its marks go
        rollup_days(engine, day, day + DAY, now=now)
    for hour, version in marks:
        with engine.begin() as conn:
            conn.execute(table.delete().where(table.c.hour == hour, table.c.version == version))
    return [hour for hour, _ in marks]


def _upsert(insert_fn) -> Any:
    stmt = insert_fn(_TABLE)
    columns = [c.name for c in _TABLE.columns if c.name not in _KEY]
    return stmt.on_conflict_do_update(index_elements=list(_KEY), set_={c: stmt.excluded[c] for c in columns})


def _aggregate_python(conn: Connection, start: datetime, end: datetime, now: datetime) -> list[dict[str, Any]]:
    s = SampleRow.__table__.c
    cols = [s.target, s.agent, s.started_at, s.ok, s.error_kind, s.input_tokens, s.output_tokens, s.cost_usd]
    cols += [s[m] for m in dict.fromkeys(rollup_source(m)[0] for m in ALL_ROLLUP_METRICS)]
    cols += [s.cache_state, s.cache_hit, s.cache_read_tokens, s.cache_write_tokens]
    query = select(*cols).where(s.started_at >= start, s.started_at < end)
    groups: dict[tuple[str, datetime, str], list[Any]] = defaultdict(list)
    for row in conn.execute(query):
        groups[(row.target, hour_floor(row.started_at), row.agent)].append(row)
    return [rollup_row(key, rows, now) for key, rows in groups.items()]


def _kept(cache_state: str | None, wanted: str | None) -> bool:
    """A metric's rollup keeps one half of the cache probes (`wanted`), or, for the plain metrics,
    every probe but the warm halves: a cache target's TTFT is its cold one, as in alerts and /metrics."""
    return cache_state == wanted if wanted else cache_state != "warm"


def rollup_row(key: tuple[str, datetime, str], rows: list[Any], now: datetime) -> dict[str, Any]:
    """One rollup row from raw rows with the attributes selected above (pure)."""
    target, hour, agent = key
    errors: dict[str, int] = defaultdict(int)
    for r in rows:
        if not r.ok:
            errors[r.error_kind or "unknown"] += 1
    out: dict[str, Any] = {
        "target": target,
        "hour": hour,
        "agent": agent,
        "samples": len(rows),
        "ok_count": sum(1 for r in rows if r.ok),
        "error_counts": dict(sorted(errors.items())),
        "input_tokens_sum": sum(r.input_tokens or 0 for r in rows),
        "output_tokens_sum": sum(r.output_tokens or 0 for r in rows),
        "cost_usd_sum": sum(r.cost_usd or 0.0 for r in rows),
        "cache_hits": sum(1 for r in rows if r.cache_hit),
        "cache_judged": sum(1 for r in rows if r.cache_hit is not None),
        "cache_read_tokens_sum": sum(r.cache_read_tokens or 0 for r in rows),
        "cache_write_tokens_sum": sum(r.cache_write_tokens or 0 for r in rows),
        "updated_at": now,
    }
    for metric in ALL_ROLLUP_METRICS:
        column, state = rollup_source(metric)
        values = [v for r in rows if r.ok and _kept(r.cache_state, state) and (v := getattr(r, column)) is not None]
        out[f"{metric}_hist"] = {str(b): n for b, n in sorted(histogram.from_values(values).items())}
        out[f"{metric}_count"] = len(values)
        out[f"{metric}_sum"] = sum(values) if values else None
        out[f"{metric}_min"] = min(values) if values else None
        out[f"{metric}_max"] = max(values) if values else None
    return out
