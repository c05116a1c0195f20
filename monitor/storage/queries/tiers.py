"""Which storage tier serves which part of a time range: the one rule every reader follows (pure).

The same probes are kept at three grains (DESIGN §9):

- raw samples: a row per probe, exact percentiles; a day of one target at 1/min is 1,440 rows;
- hourly rollups (`rollups_hourly`): a row per target, agent and hour, histograms mergeable;
- daily rollups (`rollups_daily`): each completed UTC day's hourly rows merged (`rollups.merge_rows`),
  so whatever a reader merges from a whole day's hours it gets the same from its daily row, at 1/24
  of the rows.

The rule, with one threshold (ROLLUP_MIN_RANGE, a day):

1. A range shorter than a day reads raw samples, whole: its figures are exact and never trail the
   rollup job. Unless its raw samples are gone (it starts before `raw_since`, the cutoff of raw
   retention): then rule 2.
2. A range of a day or more reads the rollups: the hourly rows whose hour starts inside it (a range
   not on the hour takes its last, partial hour whole and leaves its first out, as rollup reads always
   have; a reader that wants that first hour starts its read earlier, `read_from`), except every whole
   UTC day inside it that the daily tier has built (up to `days_until`), read as its daily rows. Any
   range of two days or more holds a whole day, so it reads the daily tier as soon as that day is
   built: "two days" follows from the rule, it is not a second threshold to disagree with.
3. A reader that splits its figures inside a day (a trend's 6-hour buckets, an SLO window starting at
   14:00) names those instants (`cuts`): a day with one strictly inside it is read by the hour, as a
   daily row cannot be split. A reader whose figures are built hour by hour gives no `days_until`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from monitor.storage.rollups import DAY, HOUR, day_floor, hour_floor

# Ranges at least this long read rollups, shorter ones raw samples (DESIGN §9: raw samples are never
# scanned for a range of a day or more). The only threshold: the daily tier's use follows from days.
ROLLUP_MIN_RANGE = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Span:
    """[start, end): the rows of a tier whose time (`started_at`, `hour` or `day`) falls inside."""

    start: datetime
    end: datetime


@dataclass(frozen=True, slots=True)
class Plan:
    """What serves a range: raw samples (then nothing else), or hourly rows and daily rows, each over
    spans in order that never overlap and together cover the range (a last whole day may end after
    it, within the last hour, which the rollup read takes whole)."""

    raw: Span | None = None
    hours: tuple[Span, ...] = ()
    days: tuple[Span, ...] = ()

    def day_starts(self) -> tuple[datetime, ...]:
        """The midnight of every day read from the daily tier."""
        return tuple(span.start + k * DAY for span in self.days for k in range((span.end - span.start) // DAY))


def reads_raw(start: datetime, end: datetime, *, raw_since: datetime | None = None) -> bool:
    """Rule 1: a range shorter than ROLLUP_MIN_RANGE whose raw samples are kept."""
    return end - start < ROLLUP_MIN_RANGE and (raw_since is None or start >= raw_since)


def plan(
    start: datetime,
    end: datetime,
    *,
    read_from: datetime | None = None,
    days_until: datetime | None = None,
    cuts: Iterable[datetime] = (),
    raw_since: datetime | None = None,
    raw: bool = True,
) -> Plan:
    """The tiers serving [start, end) (see the module docstring).

    `read_from`: where the read starts when the reader's first bucket begins before `start` (a trend's,
    floored to its bucket); the range's own length still decides raw or rollups. `days_until`: the end
    of the daily tier (its newest day + 1 day); None reads no day. `raw=False`: a reader whose figures
    always come from the rollups (an SLO's month, spend)."""
    first = start if read_from is None else read_from
    if raw and reads_raw(start, end) and (raw_since is None or first >= raw_since):
        return Plan(raw=Span(first, end))
    days = _whole_days(first, end, days_until, cuts)
    return Plan(hours=_between(first, end, days), days=days)


def _whole_days(start: datetime, end: datetime, days_until: datetime | None, cuts: Iterable[datetime]):
    """Runs of the UTC days whose 24 hourly rows a read of [start, end) takes, built and not cut."""
    if days_until is None:
        return ()
    day = day_floor(start)
    if day < start:
        day += DAY  # the first midnight at or after the first hour read
    # A day is whole when its last hour starts before `end`: the rollup read takes that hour whole.
    last = min(day_floor(_hour_ceil(end)), day_floor(days_until))
    split = {day_floor(c) for c in cuts if c != day_floor(c)}  # a cut at midnight splits no day
    runs: list[Span] = []
    while day < last:
        if day not in split:
            if runs and runs[-1].end == day:
                runs[-1] = Span(runs[-1].start, day + DAY)
            else:
                runs.append(Span(day, day + DAY))
        day += DAY
    return tuple(runs)


def _between(start: datetime, end: datetime, days: tuple[Span, ...]) -> tuple[Span, ...]:
    """What [start, end) leaves around the daily runs: the hourly tier's spans."""
    out, at = [], start
    for run in days:
        if at < run.start:
            out.append(Span(at, run.start))
        at = run.end
    if at < end:
        out.append(Span(at, end))
    return tuple(out)


def _hour_ceil(moment: datetime) -> datetime:
    floor = hour_floor(moment)
    return floor if floor == moment else floor + HOUR
