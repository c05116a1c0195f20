"""Maintenance windows as Alertmanager `time_intervals` (DESIGN §16), pure: what
`firsttoken maintenance export --alertmanager` prints, for teams whose pages go through Alertmanager.

One named time interval per window. The mapping:

- A recurring config window whose RRULE is a plain daily or weekly rule (FREQ=DAILY or WEEKLY,
  INTERVAL 1, no COUNT or UNTIL, BYDAY weekdays without a position, BYHOUR / BYMINUTE, BYSECOND 0
  at most, nothing else) becomes `weekdays` + `times` in its `location` (the window's time zone),
  which repeat for ever as the RRULE does. Each BYHOUR x BYMINUTE start gives a time range of
  the window's duration; one that runs past midnight is split into the evening of its day and the
  morning of the next. Alertmanager reads times on the wall clock: the one night a year a clock change
  falls inside the window, its muting is an hour shorter or longer than ours (ours lasts the duration).
- Any other window (a one-off window, one from `maintenance add`, an RRULE that does not map: monthly,
  every other week, BYSETPOS, a duration over a day, a start or duration not on the minute) becomes
  its occurrences in the next 30 days as explicit dates: per UTC day it touches, `years`, `months`,
  `days_of_month` and `times` (a whole day: no times), in UTC, rounded outwards to the minute. Run
  the export again (from cron) to roll such windows forward.

Alertmanager mutes by route, not by label: reference an interval from the routes that carry the pages
of its scope (`mute_time_intervals: [openai-sunday]`); each interval's comment names its scope.
Provider windows are not exported: they never mute our pages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from monitor.maintenance.windows import ActiveWindow, occurrences

HORIZON = timedelta(days=30)
WEEKDAYS = {
    "MO": "monday",
    "TU": "tuesday",
    "WE": "wednesday",
    "TH": "thursday",
    "FR": "friday",
    "SA": "saturday",
    "SU": "sunday",
}
ORDER = list(WEEKDAYS)
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
DAY_MIN = 24 * 60
_PLAIN = {"FREQ", "INTERVAL", "BYDAY", "BYHOUR", "BYMINUTE", "BYSECOND", "WKST"}


def rrule_parts(text: str) -> dict[str, str]:
    parts = {}
    for part in text.strip().removeprefix("RRULE:").split(";"):
        key, _, value = part.partition("=")
        if key.strip():
            parts[key.strip().upper()] = value.strip().upper()
    return parts


def recurring_entries(window: Any) -> list[dict[str, Any]] | None:
    """`weekdays` / `times` entries repeating exactly as a config window's RRULE does, or None when
    the rule is not a plain daily or weekly one (see the module docstring)."""
    if window.rrule is None or window.duration_s is None:
        return None
    parts = rrule_parts(window.rrule)
    if set(parts) - _PLAIN or parts.get("FREQ") not in ("DAILY", "WEEKLY") or parts.get("INTERVAL", "1") != "1":
        return None
    try:
        days = [d for d in parts.get("BYDAY", "").split(",") if d]
        hours = sorted({int(h) for h in parts.get("BYHOUR", "0").split(",")})
        minutes = sorted({int(m) for m in parts.get("BYMINUTE", "0").split(",")})
        seconds = {int(s) for s in parts.get("BYSECOND", "0").split(",")}
    except ValueError:
        return None
    if any(d not in WEEKDAYS for d in days) or seconds != {0}:
        return None
    if not days and parts["FREQ"] == "WEEKLY":
        days = ["MO"]  # no BYDAY: the anchor's weekday (monitor.maintenance.windows.ANCHOR)
    duration_min, rest = divmod(window.duration_s, 60)
    if rest or duration_min > DAY_MIN:
        return None
    days = sorted(set(days), key=ORDER.index)
    entries: list[dict[str, Any]] = []
    for hour in hours:
        for minute in minutes:
            start = hour * 60 + minute
            end = start + int(duration_min)
            entries.append(_entry(days, start, min(end, DAY_MIN), window.timezone))
            if end > DAY_MIN:  # past midnight: the morning of the next day
                nxt = [ORDER[(ORDER.index(d) + 1) % 7] for d in days]
                entries.append(_entry(nxt, 0, end - DAY_MIN, window.timezone))
    return entries


def _entry(days: Sequence[str], start_min: int, end_min: int, location: str) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if days:
        entry["weekdays"] = [WEEKDAYS[d] for d in days]
    entry["times"] = [{"start_time": _hhmm(start_min), "end_time": _hhmm(end_min)}]
    entry["location"] = location
    return entry


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def dated_entries(spans: Iterable[tuple[datetime, datetime]]) -> list[dict[str, Any]]:
    """Explicit dates in UTC for [start, end) spans: one entry per UTC day each touches, widened to
    whole minutes."""
    entries = []
    for begins, ends in spans:
        begins = begins.astimezone(UTC).replace(second=0, microsecond=0)
        ends = ends.astimezone(UTC)
        if ends.second or ends.microsecond:
            ends = ends.replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = begins.replace(hour=0, minute=0)
        while day < ends:
            nxt = day + timedelta(days=1)
            lo = max(begins, day)
            hi = min(ends, nxt)
            entry: dict[str, Any] = {
                "years": [str(day.year)],
                "months": [MONTHS[day.month - 1]],
                "days_of_month": [str(day.day)],
            }
            if (lo, hi) != (day, nxt):
                start_min = (lo - day) // timedelta(minutes=1)
                end_min = (hi - day) // timedelta(minutes=1)
                entry["times"] = [{"start_time": _hhmm(start_min), "end_time": _hhmm(end_min)}]
            entry["location"] = "UTC"
            entries.append(entry)
            day = nxt
    return entries


def time_intervals(
    config_windows: Iterable[Any], stored: Iterable[ActiveWindow], now: datetime
) -> list[tuple[str, dict[str, Any]]]:
    """(comment, named time interval) per window that mutes: the config's (exact or dated), then the
    stored ones of our own that have not ended (dated). Windows with nothing in the next 30 days
    and no exact recurrence are left out (Alertmanager refuses an interval without a range)."""
    out = []
    for w in config_windows:
        scope = _scope(w.match)
        entries = recurring_entries(w)
        if entries is not None:
            out.append((f"{scope} ({w.rrule}, {_duration(w.duration_s)}, {w.timezone})", _named(w.name, entries)))
            continue
        spans = occurrences(w, now, now + HORIZON)
        if spans:
            how = "one-off" if w.rrule is None else f"{w.rrule}: occurrences in the next 30 days"
            out.append((f"{scope} ({how})", _named(w.name, dated_entries(spans))))
    for w in stored:
        if not w.ours or w.ends_at <= now:
            continue
        span = (max(w.starts_at, now), w.ends_at)
        out.append(
            (
                f"{_scope(w.match)} (firsttoken maintenance add, id {w.id})",
                _named(f"maintenance-{w.id}", dated_entries([span])),
            )
        )
    return out


def _named(name: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "time_intervals": entries}


def _scope(match) -> str:
    return ", ".join(f'{k}="{v}"' for k, v in match.items())


def _duration(seconds: float | None) -> str:
    minutes = int((seconds or 0) // 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m"


def render(intervals: Sequence[tuple[str, dict[str, Any]]], now: datetime) -> str:
    """The `time_intervals:` fragment as YAML, each interval preceded by a comment naming its scope.
    Written by hand in flow style, every string double-quoted (a JSON string is a YAML one): `00:30`
    unquoted would be a number to a YAML 1.1 reader."""
    lines = [
        f"# firsttoken maintenance export --alertmanager, {now.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}.",
        "# Reference each interval from the routes of its scope: mute_time_intervals: [NAME].",
    ]
    if not intervals:
        return "\n".join([*lines, "# (no maintenance windows to export)", "time_intervals: []"]) + "\n"
    lines.append("time_intervals:")
    for comment, interval in intervals:
        lines += [f"  # {comment}", f"  - name: {json.dumps(interval['name'])}", "    time_intervals:"]
        for entry in interval["time_intervals"]:
            for i, (key, value) in enumerate(entry.items()):
                lines.append(f"      {'- ' if i == 0 else '  '}{key}: {_flow(value)}")
    return "\n".join(lines) + "\n"


def _flow(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


__all__ = ["dated_entries", "recurring_entries", "render", "rrule_parts", "time_intervals"]
