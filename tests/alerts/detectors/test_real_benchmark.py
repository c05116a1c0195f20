"""benchmarks/detection_real.py: the shipped real series load with their labels, and each detector it
compares is scored the same way."""

from __future__ import annotations

import math
import random

import pytest
import river  # noqa: F401  (the dev extra's peers: missing, this file fails rather than skips)

from benchmarks import detection_real as real


@pytest.fixture(scope="module")
def series():
    return real.load(real.DEFAULT_DATA)


def test_the_shipped_series_load_with_their_labelled_windows(series):
    assert [s.name for s in series] == ["TravelTime_387", "TravelTime_451", "ec2_request_latency_system_failure"]
    for s in series:
        assert len(s.times) == len(s.values) > 2000 and all(b >= a for a, b in zip(s.times, s.times[1:], strict=False))
        assert s.windows and all(lo <= p < hi for (lo, hi), p in zip(s.windows, s.points, strict=True))
    shifts = [round(x, 2) for s in series for x in s.shifts]
    assert sum(x >= real.ELIGIBLE_SHIFT for x in shifts) == 4 and len(shifts) == 7


def quiet_step(n: int = 600, at: int = 400, factor: float = 2.0) -> real.RealSeries:
    rng = random.Random(3)
    times = tuple(1_400_000_000.0 + 300.0 * i for i in range(n))
    values = tuple(45.0 * math.exp(rng.gauss(0.0, 0.04)) * (factor if i >= at else 1.0) for i in range(n))
    return real.RealSeries("step", times, values, ((at, n),), (at,), (factor,))


@pytest.mark.parametrize("who,setting", [("firsttoken", 0.2), ("PageHinkley", 5.0), ("ADWIN", 0.01),
                                         ("median CUSUM", 10.0)])  # fmt: skip
def test_every_detector_catches_a_clean_step_and_is_scored_on_it(who, setting):
    s = quiet_step()
    alarms = real.alarms_on(s, who, setting)
    tally = real.tally([s], [alarms])
    assert tally.detected == 1 and tally.eligible == 1, (who, alarms)
    before, inside = [a for a in alarms if a < 400], [a for a in alarms if a >= 400]
    assert tally.fp == len(before) + len(inside) - 1  # an alarm before the step, or a second page for it
    assert tally.delays == (inside[0] - 400,)


def test_peers_are_calibrated_to_no_more_false_alarms_than_the_budget(series):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        setting = real.calibrate(series, "median CUSUM", 2, pool)
    found = [real.alarms_on(s, "median CUSUM", setting) for s in series]
    assert real.tally(series, found).fp <= 2
    grid = real.PEERS["median CUSUM"][1]
    looser = grid[grid.index(setting) - 1] if grid.index(setting) else None
    if looser is not None:  # the next more sensitive setting breaks the budget
        assert real.tally(series, [real.alarms_on(s, "median CUSUM", looser) for s in series]).fp > 2
