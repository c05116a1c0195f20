"""The Alertmanager mapping of maintenance windows (monitor.maintenance.alertmanager), pure."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitor.maintenance.alertmanager import dated_entries, recurring_entries, render, time_intervals
from monitor.maintenance.windows import ActiveWindow, expand

from .test_windows import window

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def test_a_weekly_rule_maps_to_weekdays_and_times_past_midnight_split():
    w = window(rrule="FREQ=WEEKLY;BYDAY=SU,SA;BYHOUR=23;BYMINUTE=30", duration="1h", timezone="Europe/Berlin")
    assert recurring_entries(w) == [
        {
            "weekdays": ["saturday", "sunday"],
            "times": [{"start_time": "23:30", "end_time": "24:00"}],
            "location": "Europe/Berlin",
        },
        {
            "weekdays": ["sunday", "monday"],
            "times": [{"start_time": "00:00", "end_time": "00:30"}],
            "location": "Europe/Berlin",
        },
    ]


def test_a_daily_rule_with_several_hours_is_one_range_each():
    w = window(rrule="FREQ=DAILY;BYHOUR=4,16;BYMINUTE=0", duration="15m")
    assert [e["times"][0] for e in recurring_entries(w)] == [
        {"start_time": "04:00", "end_time": "04:15"},
        {"start_time": "16:00", "end_time": "16:15"},
    ]
    assert all("weekdays" not in e for e in recurring_entries(w))


@pytest.mark.parametrize(
    ("rrule", "duration"),
    [
        ("FREQ=MONTHLY;BYMONTHDAY=1", "1h"),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", "1h"),
        ("FREQ=WEEKLY;BYDAY=1MO", "1h"),
        ("FREQ=WEEKLY;BYDAY=MO;COUNT=3", "1h"),
        ("FREQ=WEEKLY;BYDAY=MO;BYSETPOS=1", "1h"),
        ("FREQ=DAILY;BYHOUR=2;BYSECOND=30", "1h"),
        ("FREQ=DAILY;BYHOUR=2", "90s"),
        ("FREQ=WEEKLY;BYDAY=MO", "25h"),
    ],
)
def test_rules_that_do_not_map_exactly_say_so(rrule, duration):
    assert recurring_entries(window(rrule=rrule, duration=duration)) is None


def test_a_weekly_rule_without_byday_is_on_mondays_as_expanded():
    w = window(rrule="FREQ=WEEKLY;BYHOUR=6", duration="1h")
    (entry,) = recurring_entries(w)
    assert entry["weekdays"] == ["monday"]
    assert all(a.starts_at.weekday() == 0 for a in expand([w], NOW, NOW.replace(month=4)))


def test_dated_entries_split_by_utc_day_and_widen_to_the_minute():
    spans = [(datetime(2026, 3, 31, 22, 0, 30, tzinfo=UTC), datetime(2026, 4, 2, 1, 10, 5, tzinfo=UTC))]
    assert dated_entries(spans) == [
        {
            "years": ["2026"],
            "months": ["march"],
            "days_of_month": ["31"],
            "times": [{"start_time": "22:00", "end_time": "24:00"}],
            "location": "UTC",
        },
        {"years": ["2026"], "months": ["april"], "days_of_month": ["1"], "location": "UTC"},  # the whole day
        {
            "years": ["2026"],
            "months": ["april"],
            "days_of_month": ["2"],
            "times": [{"start_time": "00:00", "end_time": "01:11"}],
            "location": "UTC",
        },
    ]


def test_time_intervals_and_render():
    monthly = window(rrule="FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=3", duration="90m", timezone="America/New_York")
    later = window(start="2027-01-01T00:00:00Z", end="2027-01-01T01:00:00Z")
    ours = ActiveWindow("drill", {"provider": "y"}, NOW, NOW.replace(hour=13), id=7, source="database")
    theirs = ActiveWindow("plan", {"provider": "y"}, NOW, NOW.replace(hour=13), id=8, source="provider")
    got = time_intervals([monthly, later], [ours, theirs], NOW)
    assert [i["name"] for _, i in got] == ["w", "maintenance-7"]  # not 30 days ahead; the provider's plan
    (entry,) = got[0][1]["time_intervals"]  # 2026-04-01 03:00 in New York (EDT) is 07:00 UTC
    assert (entry["days_of_month"], entry["times"]) == (["1"], [{"start_time": "07:00", "end_time": "08:30"}])
    text = render(got, NOW)
    assert text.splitlines()[2] == "time_intervals:"
    assert '  # provider="y" (firsttoken maintenance add, id 7)' in text
    assert 'times: [{start_time: "07:00", end_time: "08:30"}]' in text
    assert render([], NOW).rstrip().endswith("time_intervals: []")
