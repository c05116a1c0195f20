"""Maintenance windows in the database (DESIGN §16), table `maintenance_windows` (migration 0015).

Two sources are stored, the config's never (they are expanded from the file every time):

- `database`: added at run time by `firsttoken maintenance add`, ended early by `maintenance end ID`,
  like silences (monitor.alerts.silences): every leader and reader sees them, no restart needed;
- `provider`: a provider's scheduled maintenance, written by the leader's status-page poll
  (monitor.official.poll), one row per (provider, its id), updated as the provider edits it.

`windows_between` and `active_windows` merge the config's windows with the stored ones into
`ActiveWindow` values: what the alert engine mutes with, the SLO readers leave out, and the status
site shows (now and the days ahead).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType

from sqlalchemy import Connection, Engine, and_, delete, insert, select, update

from monitor.config import SCOPE_LABELS
from monitor.maintenance.windows import DATABASE, PROVIDER, ActiveWindow, Coverage, expand
from monitor.storage.models import MaintenanceWindowRow

WINDOWS = MaintenanceWindowRow.__table__
MAX_NAME = 200
INSTANT = timedelta(microseconds=1)


def validate_match(match: Mapping[str, str]) -> None:
    """A window must name something: an empty match would mute every page there is."""
    if not match:
        raise ValueError("a maintenance window needs at least one of " + ", ".join(SCOPE_LABELS))
    for key, value in match.items():
        if key not in SCOPE_LABELS:
            raise ValueError(f"unknown label {key!r}; expected one of {', '.join(SCOPE_LABELS)}")
        if not value:
            raise ValueError(f"empty value for {key}")


def _from_row(row) -> ActiveWindow:
    m = row._mapping
    match = MappingProxyType({str(k): str(v) for k, v in (m["match"] or {}).items()})
    return ActiveWindow(
        m["name"], match, m["starts_at"], m["ends_at"], m["note"] or "", m["source"], m["id"], m["created_by"]
    )


def load_db_windows(conn: Connection, start: datetime | None = None, end: datetime | None = None) -> list[ActiveWindow]:
    """Stored windows (database and provider), oldest first; with `start` / `end`, those overlapping."""
    query = select(WINDOWS).order_by(WINDOWS.c.starts_at, WINDOWS.c.id)
    if start is not None:
        query = query.where(WINDOWS.c.ends_at > start)
    if end is not None:
        query = query.where(WINDOWS.c.starts_at < end)
    return [_from_row(r) for r in conn.execute(query)]


def windows_between(conn: Connection, config_windows: Iterable, start: datetime, end: datetime) -> list[ActiveWindow]:
    """Every window overlapping [start, end): each occurrence of the config's, then the stored ones,
    in order of start. The status site asks for now → 7 days ahead; the SLO readers for their period."""
    every = [*expand(config_windows, start, end), *load_db_windows(conn, start, end)]
    return sorted(every, key=lambda w: (w.starts_at, w.source, w.name))


def windows_through(conn: Connection, config_windows: Iterable, since: datetime, now: datetime) -> list[ActiveWindow]:
    """`windows_between` over [since, now], `now` included: a window starting at `now` is in effect.
    What the alert engine reads each round (since: the longest SLO period back)."""
    return windows_between(conn, config_windows, since, now + INSTANT)


def active_windows(conn: Connection, config_windows: Iterable, now: datetime) -> list[ActiveWindow]:
    """The windows in effect at `now` (provider ones too: `ActiveWindow.mutes` keeps them from muting)."""
    return [w for w in windows_between(conn, config_windows, now, now + INSTANT) if w.active(now)]


def coverage_between(
    conn: Connection, config_windows: Iterable, targets: Iterable, start: datetime, end: datetime, key: str = "id"
):
    """Which of `targets` our windows cover over [start, end] (`Coverage`: provider windows left out;
    `key`: as for `Coverage.of`)."""
    return Coverage.of(windows_through(conn, config_windows, start, end), targets, key)


def slo_coverage(engine: Engine, config_windows: Iterable, targets: Iterable, slos: Iterable, now: datetime):
    """The `Coverage` the SLO reports leave out (monitor.storage.queries.slo_report): over the longest
    SLO period up to `now`."""
    longest = max((s.period_s for s in slos), default=0.0)
    with engine.connect() as conn:
        return coverage_between(conn, config_windows, targets, now - timedelta(seconds=longest), now + INSTANT)


def add_window(
    conn: Connection,
    match: Mapping[str, str],
    *,
    starts_at: datetime,
    ends_at: datetime,
    note: str = "",
    name: str | None = None,
    created_by: str | None = None,
    now: datetime,
) -> int:
    validate_match(match)
    if ends_at <= starts_at:
        raise ValueError("the window would end before it starts")
    values = dict(
        name=(name or ",".join(f"{k}={v}" for k, v in match.items()))[:MAX_NAME],
        match=dict(match),
        starts_at=starts_at,
        ends_at=ends_at,
        note=note,
        source=DATABASE,
        created_by=created_by,
        created_at=now,
    )
    return int(conn.execute(insert(WINDOWS).values(**values).returning(WINDOWS.c.id)).scalar_one())


class ProviderWindowError(ValueError):
    """A provider's scheduled maintenance is theirs: `maintenance end` does not touch it."""


def end_window(conn: Connection, window_id: int, now: datetime) -> str | None:
    """End a database window now: `ended` (it was active), `cancelled` (it had not started: it
    becomes an empty window at `now`), `over` (it had already ended), None if there is no such id."""
    row = conn.execute(
        select(WINDOWS.c.starts_at, WINDOWS.c.ends_at, WINDOWS.c.source).where(WINDOWS.c.id == window_id)
    ).first()
    if row is None:
        return None
    if row.source == PROVIDER:
        raise ProviderWindowError(f"window {window_id} is a provider's scheduled maintenance, not ours to end")
    if row.ends_at <= now:
        return "over"
    values = {"ends_at": now} if row.starts_at <= now else {"starts_at": now, "ends_at": now}
    conn.execute(update(WINDOWS).where(WINDOWS.c.id == window_id).values(**values))
    return "ended" if row.starts_at <= now else "cancelled"


@dataclass(frozen=True, slots=True)
class ProviderMaintenance:
    """A provider's scheduled maintenance as its status page describes it (monitor.official.poll)."""

    source_id: str  # the page's id for it
    name: str
    starts_at: datetime
    ends_at: datetime
    note: str = ""


def store_provider_windows(
    conn: Connection, provider: str, maintenances: Sequence[ProviderMaintenance], now: datetime
) -> int:
    """A provider's scheduled maintenances as its status page lists them now: new ones inserted, known
    ones updated (times move, a window ends early); one it no longer lists that had not begun is
    deleted (cancelled). Past ones stay, as the page's history does. Each matches the whole provider
    (`{provider: NAME}`). Returns how many were written."""
    prefix = f"{provider}:"
    known = {
        r.source_id: r
        for r in conn.execute(
            select(WINDOWS.c.id, WINDOWS.c.source_id, WINDOWS.c.starts_at).where(
                and_(WINDOWS.c.source == PROVIDER, WINDOWS.c.source_id.like(_like_prefix(prefix), escape="\\"))
            )
        )
    }
    listed = set()
    for m in maintenances:
        source_id = f"{prefix}{m.source_id}"
        listed.add(source_id)
        values = dict(
            name=m.name[:MAX_NAME], match={"provider": provider}, starts_at=m.starts_at, ends_at=m.ends_at, note=m.note
        )
        if source_id in known:
            conn.execute(update(WINDOWS).where(WINDOWS.c.id == known[source_id].id).values(**values))
        else:
            conn.execute(insert(WINDOWS).values(**values, source=PROVIDER, source_id=source_id, created_at=now))
    gone = [r.id for sid, r in known.items() if sid not in listed and r.starts_at > now]
    if gone:
        conn.execute(delete(WINDOWS).where(WINDOWS.c.id.in_(gone)))
    return len(listed)


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


__all__ = [
    "ProviderMaintenance",
    "ProviderWindowError",
    "active_windows",
    "add_window",
    "coverage_between",
    "end_window",
    "load_db_windows",
    "slo_coverage",
    "store_provider_windows",
    "validate_match",
    "windows_between",
    "windows_through",
]
