"""The pure core against brute force: sliding counts, the window pairs scaled to a period, the quorum."""

from __future__ import annotations

import random

import numpy as np
import pytest

from monitor.config.vantage import required_agents
from monitor.slo.budget import Budget, period_probes
from monitor.slo.counts import WindowCounts
from monitor.slo.windows import burn_windows


def test_sliding_counts_equal_brute_force_through_compaction():
    rng = random.Random(3)
    lengths = (7.0, 60.0, 600.0)
    counts = WindowCounts(lengths)
    seen: list[tuple[float, bool]] = []
    t = 0.0
    for _ in range(5000):
        t += rng.choice((0.0, 0.5, 1.0, 3.0, 13.0))  # ties and gaps included
        bad = rng.random() < 0.2
        counts.add(t, bad)
        seen.append((t, bad))
        for length in lengths:
            inside = [b for ts, b in seen if t - length < ts <= t]
            assert counts.counts(length) == (sum(inside), len(inside))
    assert counts.history() == [(ts, b) for ts, b in seen if ts > t - 600.0]
    with pytest.raises(ValueError):
        counts.add(t - 1, False)


def test_the_workbooks_pairs_for_30_days_and_scaled():
    pairs = [(w.severity, w.factor, w.name) for w in burn_windows(30 * 86400)]
    assert pairs == [
        ("page", 14.4, "1h/5m"),
        ("page", 6.0, "6h/30m"),
        ("ticket", 3.0, "1d/2h"),
        ("ticket", 1.0, "3d/6h"),
    ]
    assert [w.name for w in burn_windows(7 * 86400)] == ["14m/1m10s", "1h24m/7m", "5h36m/28m", "16h48m/1h24m"]


@pytest.mark.parametrize(("voters", "needed"), [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4)])
def test_quorum_more_than_half_and_two_whenever_two_probed(voters, needed):
    assert required_agents(None, voters) == needed  # the detectors' quorum, which SLO burn rates share


def test_budget_figures():
    b = Budget(probes=43200, good=43200 - 108, objective=0.995)
    assert b.allowed_bad == pytest.approx(216)
    assert b.remaining == pytest.approx(0.5)
    assert b.attainment == pytest.approx(1 - 108 / 43200)
    assert b.exhausts_in_s(burn_rate=2.0, period_s=30 * 86400) == pytest.approx(0.5 * 30 * 86400 / 2)
    assert b.exhausts_in_s(burn_rate=0.0, period_s=86400) is None
    assert Budget(100, 90, 0.99).exhausts_in_s(5.0, 86400) == 0.0
    assert Budget(0, 0, 0.99).remaining is None


def test_a_young_budget_is_the_whole_periods_at_the_pace_seen():
    """One day of 5-minute probes under a 30-day 99.9% SLO, one of them bad: 12% of the period's
    budget spent (8.64 bad probes), not 347% of the 0.288 the day's probes alone allow."""
    day, month = 86400, 30 * 86400
    expected = period_probes(288, day, month)
    assert expected == pytest.approx(8640)
    young = Budget(288, 287, 0.999, expected)
    assert young.allowed_bad == pytest.approx(8.64)
    assert young.remaining == pytest.approx(1 - 1 / 8.64)
    assert Budget(288, 287, 0.999).remaining == pytest.approx(1 - 1 / 0.288)  # the probes seen alone
    # Never under the formula over the probes seen, whatever the estimate says.
    assert Budget(288, 287, 0.999, 100.0).allowed_bad == pytest.approx(0.288)
    # The data spans the period, or no time at all (one probe tells no pace): the probes seen.
    assert period_probes(8640, month, month) == period_probes(8640, 2 * month, month) == 8640
    assert period_probes(1, 0.0, month) == 1 and period_probes(0, day, month) == 0
    # The burn-down: one budget for every point, so the line only falls and ends at `remaining`.
    line = young.remaining_after(np.array([0.0, 1.0, 1.0]))
    assert line.tolist() == pytest.approx([1.0, 1 - 1 / 8.64, young.remaining])
