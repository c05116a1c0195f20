"""Report periods and due moments (monitor.reports.schedule): ISO weeks in a time zone, DST weeks,
the week an entry owes at any moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from monitor.config.reports import parse_every
from monitor.reports.schedule import due_at, last_whole_week, owed_week, parse_week, week_at

BERLIN = ZoneInfo("Europe/Berlin")
UTC_ZONE = ZoneInfo("UTC")


def test_a_week_in_berlin_runs_from_monday_midnight_local_time():
    week = parse_week("2026-W48", BERLIN)
    assert week.label == "2026-W48"
    assert week.start == datetime(2026, 11, 22, 23, 0, tzinfo=UTC)  # Monday 23 Nov 00:00 CET
    assert week.end == datetime(2026, 11, 29, 23, 0, tzinfo=UTC)
    assert week.before().label == "2026-W47" and week.after().label == "2026-W49"
    assert len(week.day_starts()) == 8 and week.day_starts()[-1] == week.end


def test_the_week_clocks_go_back_has_169_hours_and_the_one_they_go_forward_167():
    autumn = week_at(datetime(2026, 10, 25, 12, tzinfo=UTC), BERLIN)  # DST ends Sunday 25 Oct 2026
    spring = week_at(datetime(2026, 3, 29, 12, tzinfo=UTC), BERLIN)  # DST starts Sunday 29 Mar 2026
    assert autumn.end - autumn.start == timedelta(hours=169)
    assert spring.end - spring.start == timedelta(hours=167)
    assert parse_week("2026-W48", UTC_ZONE).end - parse_week("2026-W48", UTC_ZONE).start == timedelta(days=7)


def test_the_last_week_of_a_year_can_be_week_53_and_belong_to_the_year_before():
    assert week_at(datetime(2027, 1, 1, 12, tzinfo=UTC), UTC_ZONE).label == "2026-W53"
    assert last_whole_week(datetime(2027, 1, 5, tzinfo=UTC), UTC_ZONE).label == "2026-W53"


@pytest.mark.parametrize("text", ["2026-48", "W48", "2026-W54", "2025-W53", "", "2026-W00"])
def test_a_bad_week_is_refused_with_what_was_expected(text):
    with pytest.raises(ValueError, match="ISO week"):
        parse_week(text, UTC_ZONE)


def test_week_48_is_due_monday_nine_oclock_berlin_of_the_next_week():
    week = parse_week("2026-W48", BERLIN)
    assert due_at(week, parse_every("MON 09:00")) == datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    assert due_at(week, parse_every("SUN 18:00")) == datetime(2026, 12, 6, 17, 0, tzinfo=UTC)
    assert due_at(week, parse_every("MON 00:00")) == week.end


def test_the_owed_week_changes_exactly_at_the_due_moment():
    every = parse_every("MON 09:00")
    due = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    assert owed_week(due - timedelta(seconds=1), every, BERLIN).label == "2026-W47"
    assert owed_week(due, every, BERLIN).label == "2026-W48"
    # A leader away for three weeks owes only the newest week when it returns.
    assert owed_week(due + timedelta(days=20), every, BERLIN).label == "2026-W50"
