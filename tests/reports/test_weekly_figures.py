"""The weekly report's pure core (monitor.reports.weekly.figures): each figure's change, arrow and word
at its threshold, and a provider's verdict."""

from __future__ import annotations

import pytest

from monitor.reports.weekly.figures import FIGURES, WeekFigures, changes, compare, verdict

BY_KEY = {f.key: f for f in FIGURES}
BASE = WeekFigures(
    probes=1000, failed=10, probed_h=168, down_h=0, ttft_p50_ms=400, ttft_p90_ms=800, tps_p50=50, spend_usd=2
)


def week(**values) -> WeekFigures:
    fields = {k: getattr(BASE, k) for k in WeekFigures.__slots__}
    return WeekFigures(**{**fields, **values})


@pytest.mark.parametrize(
    ("key", "now", "word", "arrow", "delta"),
    [
        ("ttft_p50_ms", dict(ttft_p50_ms=440), "worse", "↑", "+10%"),  # exactly the 10% threshold
        ("ttft_p50_ms", dict(ttft_p50_ms=439), "steady", "→", "+10%"),  # 9.75% rounds to +10% but is steady
        ("ttft_p50_ms", dict(ttft_p50_ms=300), "better", "↓", "-25%"),
        ("tps_p50", dict(tps_p50=40), "worse", "↓", "-20%"),
        ("uptime", dict(down_h=168 * 0.0005), "worse", "↓", "-0.05 pp"),
        ("uptime", dict(down_h=168 * 0.0004), "steady", "→", "-0.04 pp"),
        ("error_rate", dict(failed=15), "worse", "↑", "+0.50 pp"),
        ("error_rate", dict(failed=14), "steady", "→", "+0.40 pp"),
        ("spend_usd", dict(spend_usd=3), "more", "↑", "+50%"),
        ("probes", dict(probes=500, failed=5), "less", "↓", "-50%"),
    ],
)
def test_a_change_is_a_word_only_beyond_its_threshold(key, now, word, arrow, delta):
    change = compare(BY_KEY[key], week(**now), BASE)
    assert (change.word, change.arrow, change.delta_text) == (word, arrow, delta)


def test_nothing_to_compare_with_is_said_plainly():
    change = compare(BY_KEY["ttft_p50_ms"], week(ttft_p50_ms=None), BASE)
    assert (change.now_text, change.word, change.arrow, change.delta_text) == ("—", "", "", "")


def test_the_verdict_is_worse_if_any_figure_is_else_better_if_any_is():
    slower_cheaper = week(ttft_p90_ms=1000, spend_usd=1)
    assert verdict(slower_cheaper, BASE, changes(slower_cheaper, BASE)) == "worse"
    faster = week(tps_p50=70)
    assert verdict(faster, BASE, changes(faster, BASE)) == "better"
    same = week(spend_usd=5)  # spend is neither better nor worse
    assert verdict(same, BASE, changes(same, BASE)) == "steady"
    assert verdict(WeekFigures(), BASE, changes(WeekFigures(), BASE)) == "no data"
    assert verdict(BASE, WeekFigures(), changes(BASE, WeekFigures())) == "new"


def test_uptime_and_error_rate_come_from_hours_and_probes():
    assert week(down_h=1.5).uptime == pytest.approx(1 - 1.5 / 168)
    assert BASE.error_rate == 0.01
    assert WeekFigures().uptime is None and WeekFigures().error_rate is None
