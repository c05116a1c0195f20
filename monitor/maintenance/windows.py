"""Maintenance windows as concrete intervals (DESIGN §16), pure: no database, no clock.

A config window is one-off (`start`, `end`) or recurring (`rrule`, `duration`, in `timezone`).
`occurrences` turns one into the [start, end) UTC intervals that overlap a range; `expand` makes
them `ActiveWindow` values, the one shape the engine, the SLO readers, the CLI and the status site
take, whatever the source:

- `config`: the config file's `maintenance:` (edit the file to change them);
- `database`: `firsttoken maintenance add` (ended early with `maintenance end ID`);
- `provider`: a provider's own scheduled maintenance, read from its Statuspage beside the summary.

What a window does: it mutes the pages of the scopes it matches (`mutes`, recorded `muted:
maintenance`), marks the probes taken inside it, and leaves them out of SLO budgets (`Coverage`).
A provider's window does none of that: it is the provider's plan, not ours, shown on the status
site only (`ours` is False). To mute pages through it, add a window of our own over it.

RRULE semantics. The config's RRULE has no DTSTART: occurrences are counted from Monday
2000-01-03 00:00 local time, so a BYHOUR / BYMINUTE / BYSECOND left out is 0, a weekly rule without
BYDAY falls on Mondays, and `INTERVAL=2` weeks alternates from that week. Occurrences are wall-clock
times in the window's `timezone` (dateutil.rrule on naive local times, then zoneinfo): 02:00 on
Sundays in Europe/Berlin is 01:00 UTC in winter and 00:00 UTC in summer. A local time that does not
exist (the hour skipped in spring) is read with the offset before the change, and one that occurs
twice (the hour repeated in autumn) is the first, as RFC 5545 says. The duration is elapsed time.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo

from monitor.config.selectors import scope_matches

CONFIG, DATABASE, PROVIDER = "config", "database", "provider"
KIND = "maintenance"  # what `muted` says of an alert a window mutes (DESIGN §15)
ANCHOR = datetime(2000, 1, 3)  # a Monday, 00:00 local: where a config RRULE counts from
MARGIN = timedelta(days=2)  # local and UTC days differ by at most a day or so either way
# Rules that repeat by a fixed wall-clock step restart from a nearer anchor (a whole number of steps
# later: the same occurrences) instead of iterating from 2000; dateutil.rrule constants.
_STEP = {2: timedelta(weeks=1), 3: timedelta(days=1), 4: timedelta(hours=1), 5: timedelta(minutes=1)}


@dataclass(frozen=True, slots=True)
class ActiveWindow:
    """One concrete window: [starts_at, ends_at) UTC over the scopes `match` takes."""

    name: str
    match: Mapping[str, str] = field(hash=False)
    starts_at: datetime
    ends_at: datetime
    note: str = ""
    source: str = CONFIG  # config | database | provider
    id: int | None = None  # database and provider windows only
    created_by: str | None = None
    recurring: bool = False  # one occurrence of a config RRULE

    kind = KIND

    @property
    def ours(self) -> bool:
        """Our own planned work (config or CLI): it mutes pages and leaves SLO minutes out. A
        provider's scheduled maintenance is only shown."""
        return self.source != PROVIDER

    def active(self, now: datetime) -> bool:
        return self.starts_at <= now < self.ends_at

    def overlaps(self, start: datetime, end: datetime) -> bool:
        return self.starts_at < end and start < self.ends_at

    def matches(self, provider: str | None, model=None, region=None, prompt=None) -> bool:
        """Does the window cover this target (or wider scope: None is a label it does not have)?"""
        return scope_matches(self.match, provider=provider, model=model, region=region, prompt=prompt)

    def covers(self, target: Any) -> bool:
        """`target`: anything with provider/model/region/prompt (a config Target, a Sample)."""
        return self.matches(target.provider, target.model, target.region, target.prompt)

    def mutes(self, scope: Any) -> bool:
        """The mute stage's question (monitor.alerts.muting): does it mute this alert scope's pages?"""
        return self.ours and scope_matches(self.match, **scope.labels())

    def state(self, now: datetime) -> str:
        return "active" if self.active(now) else ("ended" if self.ends_at <= now else "upcoming")

    def to_dict(self, now: datetime | None = None) -> dict[str, Any]:
        out = {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "match": dict(self.match),
            "starts_at": _iso(self.starts_at),
            "ends_at": _iso(self.ends_at),
            "note": self.note,
            "mutes": self.ours,
            "created_by": self.created_by,
        }
        if now is not None:
            out["state"] = self.state(now)
        return out


def occurrences(window: Any, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """A config `MaintenanceWindow`'s [start, end) UTC intervals that overlap [start, end), in order."""
    if window.rrule is None:
        if window.start is None or window.end is None:
            return []
        return [(window.start, window.end)] if window.start < end and start < window.end else []
    duration = timedelta(seconds=window.duration_s or 0.0)
    zone = ZoneInfo(window.timezone)
    rule = parse_rrule(window.rrule)
    low = _local(start - duration, zone) - MARGIN
    high = _local(end, zone) + MARGIN
    rule = _nearer(rule, low)
    out = []
    for local in rule.between(low, high, inc=True):
        begins = local.replace(tzinfo=zone).astimezone(UTC)
        ends = begins + duration
        if begins < end and start < ends:
            out.append((begins, ends))
    return out


def parse_rrule(text: str):
    """The config's RRULE (optionally prefixed `RRULE:`) counted from ANCHOR, as dateutil reads it."""
    from dateutil.rrule import rrulestr

    return rrulestr(text.strip().removeprefix("RRULE:"), dtstart=ANCHOR)


def _nearer(rule, low: datetime):
    """The same rule restarted a whole number of its steps after ANCHOR, just before `low`: dateutil
    iterates from DTSTART, which would be 230,000 steps for an hourly rule by 2026. Rules with a
    COUNT (which counts from the start), UNTIL or a month or year step are left as they are."""
    step = _STEP.get(rule._freq)
    if step is None or rule._count is not None or rule._until is not None or low <= ANCHOR:
        return rule
    period = step * rule._interval
    whole = (low - ANCHOR) // period
    return rule.replace(dtstart=ANCHOR + whole * period) if whole > 0 else rule


def _local(moment: datetime, zone: ZoneInfo) -> datetime:
    return moment.astimezone(zone).replace(tzinfo=None)


def expand(windows: Iterable[Any], start: datetime, end: datetime) -> list[ActiveWindow]:
    """Every occurrence of the config's windows overlapping [start, end), as `ActiveWindow`s."""
    out = []
    for w in windows:
        match = MappingProxyType(dict(w.match))
        for begins, ends in occurrences(w, start, end):
            out.append(ActiveWindow(w.name, match, begins, ends, w.note, CONFIG, recurring=w.rrule is not None))
    return sorted(out, key=lambda a: (a.starts_at, a.name))


def merged(spans: Iterable[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """Spans in order, overlapping or touching ones joined."""
    out: list[tuple[datetime, datetime]] = []
    for begins, ends in sorted(spans):
        if out and begins <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], ends))
        else:
            out.append((begins, ends))
    return out


class Coverage:
    """Which targets our windows cover, and when: per target id, its merged [start, end) spans.

    What the SLO readers and the sample marking ask: `covers(target, at)` (a probe taken inside a
    window), `spans(target)`. Provider windows are left out (`ActiveWindow.ours`)."""

    def __init__(self, spans: Mapping[str, Sequence[tuple[datetime, datetime]]]) -> None:
        self._spans = {t: merged(s) for t, s in spans.items() if s}
        self._starts = {t: [b for b, _ in s] for t, s in self._spans.items()}

    @classmethod
    def of(cls, windows: Iterable[ActiveWindow], targets: Iterable[Any], key: str = "id") -> Coverage:
        """`targets`: anything with provider/model/region/prompt and its target id in `key` (a config
        Target's `id`; a Sample's is `target`)."""
        ours = [w for w in windows if w.ours]
        spans: dict[str, list[tuple[datetime, datetime]]] = {}
        if ours:
            for t in targets:
                spans[getattr(t, key)] = [(w.starts_at, w.ends_at) for w in ours if w.covers(t)]
        return cls(spans)

    def __bool__(self) -> bool:
        return bool(self._spans)

    def spans(self, target: str) -> list[tuple[datetime, datetime]]:
        return list(self._spans.get(target, ()))

    def targets(self) -> list[str]:
        return sorted(self._spans)

    def covers(self, target: str, at: datetime) -> bool:
        starts = self._starts.get(target)
        if not starts:
            return False
        i = bisect.bisect_right(starts, at) - 1
        return i >= 0 and at < self._spans[target][i][1]

    def clipped(self, start: datetime, end: datetime) -> dict[str, list[tuple[datetime, datetime]]]:
        """Per target, its spans cut to [start, end) (empty ones dropped)."""
        out = {}
        for target, spans in self._spans.items():
            cut = [(max(b, start), min(e, end)) for b, e in spans if b < end and start < e]
            if cut:
                out[target] = cut
        return out


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


__all__ = [
    "CONFIG",
    "DATABASE",
    "KIND",
    "PROVIDER",
    "ActiveWindow",
    "Coverage",
    "expand",
    "merged",
    "occurrences",
    "parse_rrule",
]
