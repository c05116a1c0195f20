"""Silences (DESIGN §5): the config's, read-only, and the database's, from `firsttoken silence`.

A silence mutes notifications for the scopes it matches while it is active;
detection and alert state go on underneath. Both kinds become the same
`ActiveSilence` value so the engine and the CLI treat them alike.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType

from sqlalchemy import Connection, insert, select, update

from monitor.alerts.scope import Scope
from monitor.config import SCOPE_LABELS, scope_matches
from monitor.storage.models import Silence as SilenceRow

SILENCES = SilenceRow.__table__
CONFIG, DATABASE = "config", "database"
LINK = "link"  # `created_by` of a silence made from a notification's one-click link (DESIGN §18)
ONE_CLICK = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class ActiveSilence:
    match: Mapping[str, str] = field(hash=False)
    starts_at: datetime | None
    ends_at: datetime
    reason: str = ""
    source: str = DATABASE  # config | database
    id: int | None = None  # database silences only
    created_by: str | None = None

    kind = "silence"  # what `muted` says of an alert it mutes (DESIGN §15)

    def active(self, now: datetime) -> bool:
        return (self.starts_at is None or self.starts_at <= now) and now < self.ends_at

    def mutes(self, scope: Scope) -> bool:
        return scope_matches(self.match, **scope.labels())


def from_config(silences: Iterable) -> list[ActiveSilence]:
    return [
        ActiveSilence(MappingProxyType(dict(s.match)), s.starts, s.until, s.reason, source=CONFIG) for s in silences
    ]


def _from_row(row) -> ActiveSilence:
    m = row._mapping
    match = MappingProxyType({str(k): str(v) for k, v in (m["match"] or {}).items()})
    return ActiveSilence(match, m["starts_at"], m["ends_at"], m["reason"] or "", DATABASE, m["id"], m["created_by"])


def load_db_silences(conn: Connection, now: datetime | None = None) -> list[ActiveSilence]:
    """Database silences, oldest first; with `now`, only those not yet ended."""
    query = select(SILENCES).order_by(SILENCES.c.id)
    if now is not None:
        query = query.where(SILENCES.c.ends_at > now)
    return [_from_row(r) for r in conn.execute(query)]


def active_silences(conn: Connection, config_silences: Iterable, now: datetime) -> list[ActiveSilence]:
    every = [*from_config(config_silences), *load_db_silences(conn, now)]
    return [s for s in every if s.active(now)]


def validate_match(match: Mapping[str, str]) -> None:
    """A silence must name something: an empty match would mute every page there is."""
    if not match:
        raise ValueError("a silence needs at least one of " + ", ".join(SCOPE_LABELS))
    for key, value in match.items():
        if key not in SCOPE_LABELS:
            raise ValueError(f"unknown label {key!r}; expected one of {', '.join(SCOPE_LABELS)}")
        if not value:
            raise ValueError(f"empty value for {key}")


def match_for(scope: Mapping[str, str | None]) -> dict[str, str] | None:
    """The silence match that mutes exactly an alert's scope (DESIGN §18's one-click silence): its
    labels that are set. None when no silence can name it (an agent's path, an SLO over every
    target): a match that named nothing would mute every page there is. A vantage alert's agent is
    no silence label, so its silence mutes the target from every vantage point."""
    match = {k: glob.escape(str(scope[k])) for k in SCOPE_LABELS if scope.get(k) is not None}
    return match or None


def add_silence(
    conn: Connection,
    match: Mapping[str, str],
    *,
    starts_at: datetime,
    ends_at: datetime,
    reason: str = "",
    created_by: str | None = None,
    now: datetime,
) -> int:
    validate_match(match)
    if ends_at <= starts_at:
        raise ValueError("the silence would end before it starts")
    values = dict(
        match=dict(match), starts_at=starts_at, ends_at=ends_at, reason=reason, created_by=created_by, created_at=now
    )
    return int(conn.execute(insert(SILENCES).values(**values).returning(SILENCES.c.id)).scalar_one())


def expire_silence(conn: Connection, silence_id: int, now: datetime) -> bool | None:
    """End a silence now: True if it was active, False if it had already ended, None if unknown."""
    row = conn.execute(select(SILENCES.c.ends_at).where(SILENCES.c.id == silence_id)).first()
    if row is None:
        return None
    if row.ends_at <= now:
        return False
    conn.execute(update(SILENCES).where(SILENCES.c.id == silence_id).values(ends_at=now))
    return True


def silence_from_link(
    conn: Connection, match: Mapping[str, str], *, alert_id: int, rule: str, now: datetime
) -> tuple[int, datetime, bool]:
    """The one-click silence of an alert's scope: (its id, when it ends, whether it is new). An
    active one-click silence of the same scope is that silence: a second click, or a colleague's,
    makes no second one."""
    for active in load_db_silences(conn, now):
        if active.created_by == LINK and dict(active.match) == dict(match) and active.active(now):
            return int(active.id or 0), active.ends_at, False
    reason = f"one-click silence from alert #{alert_id} ({rule})"
    silence_id = add_silence(
        conn, match, starts_at=now, ends_at=now + ONE_CLICK, reason=reason, created_by=LINK, now=now
    )
    return silence_id, now + ONE_CLICK, True
