"""The tier plan (`queries.tiers`): which of raw samples, hourly and daily rollups serves which span
of a range. Pure: no database."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

import pytest

from monitor.storage.queries.tiers import ROLLUP_MIN_RANGE, Plan, Span, plan, reads_raw
from monitor.storage.rollups import DAY, HOUR, day_floor, hour_floor

D0 = datetime(2026, 5, 4, tzinfo=UTC)  # a midnight
BUILT = D0 + 40 * DAY  # the daily tier's end: far enough not to matter unless a test says so
MIN = timedelta(minutes=1)


def hours(*spans) -> Plan:
    return Plan(hours=tuple(Span(a, b) for a, b in spans))


def test_under_a_day_reads_raw_and_a_day_or_more_the_rollups():
    assert ROLLUP_MIN_RANGE == DAY
    start = D0 + 9 * HOUR + 30 * MIN
    assert plan(start, start + DAY - MIN, days_until=BUILT) == Plan(raw=Span(start, start + DAY - MIN))
    assert reads_raw(start, start + DAY - MIN)
    # Exactly one day: the rollups, hours only (no whole day fits between 09:30 and 09:30).
    assert not reads_raw(start, start + DAY)
    assert plan(start, start + DAY, days_until=BUILT) == hours((start, start + DAY))


def test_exactly_one_aligned_day_is_one_daily_read():
    assert plan(D0, D0 + DAY, days_until=BUILT) == Plan(days=(Span(D0, D0 + DAY),))
    # Not built yet (the current day, or the job is behind): its hours.
    assert plan(D0, D0 + DAY, days_until=D0) == hours((D0, D0 + DAY))
    assert plan(D0, D0 + DAY) == hours((D0, D0 + DAY))  # a reader built hour by hour: no days


def test_two_days_hold_a_whole_day_wherever_they_start():
    for minutes in range(0, 24 * 60, 7):
        start = D0 + minutes * MIN
        got = plan(start, start + 2 * DAY, days_until=BUILT)
        assert got.raw is None and got.days, start
        assert got.day_starts()[0] >= start and got.day_starts()[-1] + DAY <= hour_floor(start + 2 * DAY) + HOUR


def test_ranges_not_on_the_hour_keep_the_rollup_reads_hours():
    """The hourly rows read are those whose hour starts in the range: the first partial hour is left
    out, the last taken whole; a day is whole when its last hour starts before the end."""
    start, end = D0 + 30 * MIN, D0 + 3 * DAY - 30 * MIN  # 00:30 on day 0 to 23:30 on day 2
    got = plan(start, end, days_until=BUILT)
    assert got == Plan(hours=(Span(start, D0 + DAY),), days=(Span(D0 + DAY, D0 + 3 * DAY),))
    # Ending exactly at 23:00 leaves that hour out, so its day is not whole.
    got = plan(start, D0 + 3 * DAY - HOUR, days_until=BUILT)
    assert got.days == (Span(D0 + DAY, D0 + 2 * DAY),)
    assert got.hours == (Span(start, D0 + DAY), Span(D0 + 2 * DAY, D0 + 3 * DAY - HOUR))


def test_a_range_ending_at_midnight_and_one_running_past_the_built_days():
    assert plan(D0 + 12 * HOUR, D0 + 3 * DAY, days_until=BUILT) == Plan(
        hours=(Span(D0 + 12 * HOUR, D0 + DAY),), days=(Span(D0 + DAY, D0 + 3 * DAY),)
    )
    now = D0 + 5 * DAY + 10 * HOUR + 7 * MIN  # today is day 5; yesterday's day is not built yet
    got = plan(now - 5 * DAY, now, days_until=D0 + 4 * DAY)
    assert got.days == (Span(D0 + DAY, D0 + 4 * DAY),)
    assert got.hours == (Span(now - 5 * DAY, D0 + DAY), Span(D0 + 4 * DAY, now))


def test_cuts_inside_a_day_read_it_by_the_hour_and_cuts_at_midnight_split_nothing():
    start, end = D0, D0 + 5 * DAY
    got = plan(start, end, days_until=BUILT, cuts=[D0 + 2 * DAY + 14 * HOUR, D0 + 4 * DAY])
    assert got.days == (Span(D0, D0 + 2 * DAY), Span(D0 + 3 * DAY, D0 + 5 * DAY))
    assert got.hours == (Span(D0 + 2 * DAY, D0 + 3 * DAY),)
    # A trend's 6-hour buckets cut every day: hours only.
    edges = [D0 + k * 6 * HOUR for k in range(1, 20)]
    assert plan(start, end, days_until=BUILT, cuts=edges) == hours((start, end))


def test_raw_retention_sends_a_short_range_whose_samples_are_gone_to_the_rollups():
    raw_since = D0 + 10 * DAY  # retention.raw's cutoff
    inside = D0 + 12 * DAY + 3 * HOUR
    assert plan(inside, inside + HOUR, raw_since=raw_since) == Plan(raw=Span(inside, inside + HOUR))
    before = raw_since - 2 * HOUR
    assert plan(before, before + HOUR, raw_since=raw_since, days_until=BUILT) == hours((before, before + HOUR))
    across = raw_since - 30 * MIN  # half of it gone: the rollups, whole
    assert plan(across, across + HOUR, raw_since=raw_since).raw is None
    assert not reads_raw(across, across + HOUR, raw_since=raw_since)


def test_rollup_only_readers_and_a_read_from_before_the_range():
    start = D0 + 9 * HOUR + 30 * MIN
    assert plan(start, start + HOUR, raw=False) == hours((start, start + HOUR))
    # A trend's first bucket starts before the range: read from there, the range's length decides.
    first = D0 + 6 * HOUR
    assert plan(start, start + 20 * HOUR, read_from=first) == Plan(raw=Span(first, start + 20 * HOUR))
    assert plan(start, start + 2 * DAY, read_from=D0, days_until=BUILT).days == (Span(D0, D0 + 2 * DAY),)


def test_spans_cover_the_range_in_order_and_apart():
    rng = random.Random(7)
    for _ in range(500):
        start = D0 + timedelta(minutes=rng.randrange(0, 5 * 24 * 60))
        end = start + timedelta(minutes=rng.randrange(0, 12 * 24 * 60))
        built = D0 + rng.randrange(0, 20) * DAY
        cuts = [D0 + timedelta(hours=rng.randrange(0, 20 * 24)) for _ in range(rng.randrange(0, 3))]
        got = plan(start, end, days_until=built, cuts=cuts)
        if got.raw is not None:
            assert end - start < DAY and got == Plan(raw=Span(start, end))
            continue
        spans = sorted(got.hours + got.days, key=lambda s: s.start)
        assert all(s.start < s.end for s in spans)
        if end > start:
            assert spans[0].start == start
            # A last whole day may end after the range, within its last hour (read whole).
            assert spans[-1].end == end or (spans[-1] in got.days and spans[-1].end == hour_floor(end) + HOUR)
        assert all(a.end == b.start for a, b in itertools.pairwise(spans))  # contiguous, no overlap
        for day in got.day_starts():
            assert day == day_floor(day) and start <= day and day + DAY <= built
            assert day + DAY - HOUR < end  # its last hour is one the range reads
            assert not any(day < c < day + DAY for c in cuts)
        if end - start >= 2 * DAY and built >= end + DAY and not cuts:
            assert got.days  # two days or more: the daily tier


@pytest.mark.parametrize("end_minus_start", [timedelta(0), -HOUR])
def test_an_empty_range_reads_nothing(end_minus_start):
    assert plan(D0 + DAY, D0 + DAY + end_minus_start, days_until=BUILT, raw=False) == Plan()
