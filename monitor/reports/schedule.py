"""Report periods and when a scheduled report is due (DESIGN §17). Pure: moments in, moments out.

A weekly report covers an ISO week in its entry's time zone: Monday 00:00 to the next Monday 00:00,
local time (167 or 169 hours in a week whose clocks change). An entry `every: "MON 09:00"` is due at
the first such local moment at or after its week's end: the report for 2026-W48 in Europe/Berlin is
due on Monday 2026-11-30 09:00 CET (08:00 UTC). At any moment exactly one week is the one an entry
owes (`owed_week`): the newest whose due moment has passed. A leader that was away for three weeks
sends that one once when it returns, not the three it missed, nor one per missed minute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

_WEEK = re.compile(r"^\s*(\d{4})-?W(\d{1,2})\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True, order=True)
class Week:
    """An ISO week (`2026-W48`) in a time zone: [start, end) as aware UTC datetimes."""

    year: int
    week: int
    zone: ZoneInfo

    @property
    def label(self) -> str:
        return f"{self.year}-W{self.week:02d}"

    @property
    def monday(self) -> date:
        return date.fromisocalendar(self.year, self.week, 1)

    @property
    def start(self) -> datetime:
        return _local_midnight(self.monday, self.zone)

    @property
    def end(self) -> datetime:
        return _local_midnight(self.monday + timedelta(days=7), self.zone)

    def day_starts(self) -> list[datetime]:
        """The 8 local midnights from this Monday to the next (UTC): the edges of its 7 days."""
        return [_local_midnight(self.monday + timedelta(days=d), self.zone) for d in range(8)]

    def before(self) -> Week:
        return week_of(self.monday - timedelta(days=7), self.zone)

    def after(self) -> Week:
        return week_of(self.monday + timedelta(days=7), self.zone)


def _local_midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0, 0), tzinfo=zone).astimezone(UTC)


def week_of(day: date, zone: ZoneInfo) -> Week:
    year, week, _ = day.isocalendar()
    return Week(year, week, zone)


def week_at(moment: datetime, zone: ZoneInfo) -> Week:
    """The week that holds `moment` (aware) in `zone`."""
    return week_of(moment.astimezone(zone).date(), zone)


def parse_week(text: str, zone: ZoneInfo) -> Week:
    """`2026-W48` (or `2026W48`) in `zone`; ValueError naming what was expected."""
    found = _WEEK.match(text or "")
    if not found:
        raise ValueError(f"expected an ISO week like 2026-W48, got {text!r}")
    year, week = int(found.group(1)), int(found.group(2))
    try:
        date.fromisocalendar(year, week, 1)
    except ValueError:
        raise ValueError(f"{year} has no ISO week {week} (got {text!r})") from None
    return Week(year, week, zone)


def last_whole_week(now: datetime, zone: ZoneInfo) -> Week:
    """The newest week that has ended by `now` in `zone`: the week before the one holding `now`."""
    return week_at(now, zone).before()


def due_at(week: Week, schedule: tuple[int, int, int]) -> datetime:
    """When `week`'s report is due: the first local (weekday, hour, minute) at or after its end, in UTC.
    A wall-clock time the zone skips (a spring-forward gap) is read with the offset before the gap."""
    weekday, hour, minute = schedule
    end_local = week.end.astimezone(week.zone)
    day = end_local.date() + timedelta(days=(weekday - end_local.weekday()) % 7)
    moment = datetime.combine(day, time(hour, minute), tzinfo=week.zone)
    if moment.astimezone(UTC) < week.end:  # only when every is MON 00:00 and the days coincide
        moment += timedelta(days=7)
    return moment.astimezone(UTC)


def owed_week(now: datetime, schedule: tuple[int, int, int], zone: ZoneInfo) -> Week:
    """The newest week whose report is due by `now`: the one a scheduled entry should have sent."""
    week = last_whole_week(now, zone)
    while due_at(week, schedule) > now:
        week = week.before()
    return week


__all__ = ["Week", "due_at", "last_whole_week", "owed_week", "parse_week", "week_at", "week_of"]
