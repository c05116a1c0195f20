"""Maintenance windows expanded into concrete UTC intervals (monitor.maintenance.windows), pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from monitor.alerts.scope import Scope
from monitor.config import load_config_text
from monitor.maintenance.windows import (
    CONFIG,
    PROVIDER,
    ActiveWindow,
    Coverage,
    expand,
    merged,
    occurrences,
)


def window(**kw):
    """A config `MaintenanceWindow`, through the loader as a user's file would give it."""
    entry = {"name": "w", "match": {"provider": "openai"}, **kw}
    spec = {
        "database": "sqlite:///unused.db",
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}},
        "providers": {
            "openai": {"protocol": "openai-chat", "regions": {"us": "http://127.0.0.1:9/v1"}, "models": ["m"]}
        },
        "maintenance": [entry],
    }
    import json

    return load_config_text(json.dumps(spec)).maintenance[0]


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


SUNDAY_2AM_BERLIN = {
    "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0",
    "duration": "1h",
    "timezone": "Europe/Berlin",
}


def test_weekly_rrule_follows_the_wall_clock_across_the_spring_dst_change():
    """02:00 Berlin on Sundays: 01:00 UTC in winter (CET), 00:00 UTC in summer (CEST). On the night
    of the change 02:00 does not exist: read with the offset before the change, 01:00 UTC (RFC 5545)."""
    w = window(**SUNDAY_2AM_BERLIN)
    got = occurrences(w, utc(2026, 3, 16), utc(2026, 4, 10))
    assert got == [
        (utc(2026, 3, 22, 1), utc(2026, 3, 22, 2)),
        (utc(2026, 3, 29, 1), utc(2026, 3, 29, 2)),  # the change: 02:00 CET that never shows on a clock
        (utc(2026, 4, 5, 0), utc(2026, 4, 5, 1)),
    ]


def test_weekly_rrule_across_the_autumn_dst_change():
    """02:00 Berlin happens twice on 2026-10-25: the first (CEST, 00:00 UTC) is the occurrence."""
    w = window(**SUNDAY_2AM_BERLIN)
    got = occurrences(w, utc(2026, 10, 17), utc(2026, 11, 2))
    assert got == [
        (utc(2026, 10, 18, 0), utc(2026, 10, 18, 1)),
        (utc(2026, 10, 25, 0), utc(2026, 10, 25, 1)),
        (utc(2026, 11, 1, 1), utc(2026, 11, 1, 2)),
    ]


def test_one_off_window_and_range_edges():
    w = window(start="2026-12-01T06:00:00Z", end="2026-12-01T07:00:00Z")
    span = (utc(2026, 12, 1, 6), utc(2026, 12, 1, 7))
    assert occurrences(w, utc(2026, 11, 1), utc(2027, 1, 1)) == [span]
    assert occurrences(w, utc(2026, 12, 1, 6, 30), utc(2026, 12, 1, 6, 31)) == [span]  # a range inside it
    assert occurrences(w, utc(2026, 12, 1, 7), utc(2026, 12, 2)) == []  # [start, end): ends where the range starts
    assert occurrences(w, utc(2026, 11, 30), utc(2026, 12, 1, 6)) == []  # starts where the range ends
    assert occurrences(w, utc(2026, 11, 30), utc(2026, 12, 1, 6, 0, 1)) == [span]


def test_an_occurrence_overlapping_the_range_start_is_included():
    """A window that began before the range and is still on counts (the engine asks at `now`)."""
    w = window(rrule="FREQ=DAILY;BYHOUR=23;BYMINUTE=30", duration="2h", timezone="UTC")
    assert occurrences(w, utc(2026, 5, 2, 0, 15), utc(2026, 5, 2, 0, 16)) == [
        (utc(2026, 5, 1, 23, 30), utc(2026, 5, 2, 1, 30))
    ]
    assert occurrences(w, utc(2026, 5, 2, 1, 30), utc(2026, 5, 2, 23, 30)) == []


def test_fine_grained_rules_are_fast_and_counted_from_the_anchor():
    """An hourly rule in 2030 is not iterated from 2000; INTERVAL counts from Monday 2000-01-03."""
    import time

    w = window(rrule="FREQ=HOURLY;INTERVAL=5;BYMINUTE=0", duration="10m", timezone="UTC")
    began = time.perf_counter()
    got = occurrences(w, utc(2030, 1, 1), utc(2030, 1, 2))
    assert time.perf_counter() - began < 0.5
    anchor = utc(2000, 1, 3)
    assert got and all((b - anchor) % timedelta(hours=5) == timedelta(0) for b, _ in got)
    assert all(e - b == timedelta(minutes=10) for b, e in got)


def test_expand_makes_active_windows_of_every_occurrence():
    w = window(**SUNDAY_2AM_BERLIN, note="weekly")
    got = expand([w], utc(2026, 1, 1), utc(2026, 1, 15))
    assert [a.starts_at for a in got] == [utc(2026, 1, 4, 1), utc(2026, 1, 11, 1)]
    first = got[0]
    assert (first.name, first.note, first.source, first.recurring, first.kind) == (
        "w",
        "weekly",
        CONFIG,
        True,
        "maintenance",
    )
    assert first.active(utc(2026, 1, 4, 1, 30)) and not first.active(utc(2026, 1, 4, 2))


def test_mutes_and_covers():
    now = utc(2026, 1, 1)
    ours = ActiveWindow("w", {"provider": "openai"}, now, now + timedelta(hours=1))
    theirs = ActiveWindow("p", {"provider": "openai"}, now, now + timedelta(hours=1), source=PROVIDER)
    target = Scope(provider="openai", region="us", model="m", prompt="short")
    assert ours.mutes(target) and ours.mutes(target.group()) and ours.mutes(target.seen_from("a1"))
    assert not ours.mutes(Scope(provider="anthropic", region="us", model="m", prompt="short"))
    assert not ours.mutes(Scope.of_agent("a1"))  # an agent's own path is not the provider's
    assert not theirs.mutes(target)  # the provider's plan is shown, never mutes our pages
    assert ours.covers(target) and theirs.covers(target)


def test_coverage_leaves_provider_windows_out_and_merges():
    t = SimpleNamespace(id="openai/m@us:short", provider="openai", model="m", region="us", prompt="short")
    other = SimpleNamespace(id="x/m@us:short", provider="x", model="m", region="us", prompt="short")
    h = lambda n: utc(2026, 1, 1, n)  # noqa: E731
    windows = [
        ActiveWindow("a", {"provider": "openai"}, h(1), h(2)),
        ActiveWindow("b", {"model": "m", "provider": "open*"}, h(2), h(3)),
        ActiveWindow("p", {"provider": "x"}, h(1), h(5), source=PROVIDER),
    ]
    cov = Coverage.of(windows, [t, other])
    assert cov.spans(t.id) == [(h(1), h(3))]
    assert cov.spans(other.id) == []
    assert cov.covers(t.id, h(1)) and cov.covers(t.id, h(2)) and not cov.covers(t.id, h(3))
    assert not cov.covers(t.id, utc(2026, 1, 1, 0, 59))
    assert cov.clipped(utc(2026, 1, 1, 1, 30), h(9)) == {t.id: [(utc(2026, 1, 1, 1, 30), h(3))]}


@pytest.mark.parametrize(
    ("spans", "want"),
    [
        ([(1, 2), (2, 3)], [(1, 3)]),
        ([(3, 4), (1, 2)], [(1, 2), (3, 4)]),
        ([(1, 5), (2, 3)], [(1, 5)]),
    ],
)
def test_merged(spans, want):
    assert merged(spans) == want
