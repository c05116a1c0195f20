"""The newest detection generators (benchmarks/detection/synthetic_f.py … synthetic_i.py) keep their labels
true: the same seed gives the same series, a labelled shift is where the samples moved (also after f's
agent gaps and i's skipped slots are cut out), and the noise is as wide as asked."""

from __future__ import annotations

import math
import statistics
from itertools import pairwise

import pytest

from benchmarks.detection.synthetic_f import generate_f, plan_steps_f
from benchmarks.detection.synthetic_g import generate_g, plan_steps_g
from benchmarks.detection.synthetic_h import generate_h, plan_steps_h
from benchmarks.detection.synthetic_i import generate_i, plan_steps_i

N = 8640  # a month at 5-minute sampling
INTERVAL_S = 300.0
GENERATORS = pytest.mark.parametrize(
    "plan,generate",
    [(plan_steps_f, generate_f), (plan_steps_g, generate_g), (plan_steps_h, generate_h), (plan_steps_i, generate_i)],
    ids=["f", "g", "h", "i"],
)


@GENERATORS
def test_same_seed_same_series(plan, generate):
    steps = plan(3, N, INTERVAL_S)
    assert generate(3, N, INTERVAL_S, 0.3, steps) == generate(3, N, INTERVAL_S, 0.3, steps)
    assert generate(4, N, INTERVAL_S, 0.3, steps).values != generate(3, N, INTERVAL_S, 0.3, steps).values


@GENERATORS
def test_labelled_shifts_are_where_the_samples_moved(plan, generate):
    """Inside a label the samples sit log(factor) above the level (the noise is wider there, so most,
    not all); just before and after it they do not (the labels line up, across the cut-out gaps)."""
    inside_off, edges = [], []
    for seed in range(1, 4):
        steps = plan(seed, N, INTERVAL_S, max_ramp=0)
        series = generate(seed, N, INTERVAL_S, 0.2, steps)
        assert series.steps and all(0 <= s.start < s.end <= len(series.values) for s in series.steps)

        def residuals(lo, hi, series=series):
            pairs = zip(series.values[lo:hi], series.level_log[lo:hi], strict=True)
            return [math.log(v) - level for v, level in pairs if v is not None]

        for step in series.steps:
            inside = residuals(step.start, step.end)
            if len(inside) >= 5:
                inside_off.append(abs(statistics.median(inside) - math.log(step.factor)))
            before, after = residuals(step.start - 6, step.start), residuals(step.end, step.end + 6)
            if before and after:
                edges.append(max(statistics.median(before), statistics.median(after)) < 0.5 * math.log(step.factor))
    assert sum(off < 0.3 for off in inside_off) >= 0.9 * len(inside_off)
    assert sum(edges) >= 0.9 * len(edges)


@GENERATORS
def test_noise_is_as_wide_as_asked_and_times_increase(plan, generate):
    for sigma in (0.2, 0.4):
        series = generate(11, N, INTERVAL_S, sigma)
        residuals = [math.log(v) - lv for v, lv in zip(series.values, series.level_log, strict=True) if v is not None]
        center = statistics.median(residuals)
        spread = 1.4826 * statistics.median(abs(r - center) for r in residuals)
        assert 0.6 * sigma < spread < 1.4 * sigma
        assert all(b > a for a, b in pairwise(series.times))
        assert len(series.values) == len(series.level_log) == len(series.sd)
