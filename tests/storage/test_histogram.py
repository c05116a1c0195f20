import json
import math

import numpy as np
import pytest

from monitor.storage import histogram as h

BOUND = h.MAX_RELATIVE_ERROR


def test_bound_is_inside_the_two_percent_budget():
    assert BOUND <= 0.02


@pytest.mark.parametrize(("low", "high"), [(0.1, 600_000.0), (0.1, 100_000.0)])  # ms over 10 min; tokens/s
def test_every_value_is_represented_within_the_bound(low, high):
    values = np.geomspace(low, high, 30_000)
    for v in values:
        b = h.bucket_of(float(v))
        lo, hi = h.bucket_bounds(b)
        assert lo * (1 - 1e-12) <= v < hi * (1 + 1e-12)
        assert abs(h.bucket_value(b) - v) / v <= BOUND + 1e-12


def test_exact_octave_edges_and_clamping():
    for e in range(-10, 30):
        v = 2.0**e
        assert abs(h.bucket_value(h.bucket_of(v)) - v) / v <= BOUND
    assert h.bucket_of(0.0) == h.bucket_of(-5.0) == h.bucket_of(h.MIN_VALUE)
    assert h.from_values([None, math.nan, math.inf]) == {}


def test_bucket_count_over_the_ranges_stays_small():
    ms = {h.bucket_of(v) for v in np.geomspace(0.1, 600_000, 100_000)}
    tps = {h.bucket_of(v) for v in np.geomspace(0.1, 100_000, 100_000)}
    assert len(ms) < 32 * 24 and len(tps) < 32 * 21


@pytest.mark.parametrize("sigma", [0.3, 0.8, 1.5])
def test_merged_hourly_histograms_give_numpy_percentiles_within_the_bound(sigma):
    rng = np.random.default_rng(42)
    hours = [rng.lognormal(mean=5.5, sigma=sigma, size=int(n)) for n in rng.integers(20, 400, size=72)]
    merged = h.merge(h.from_values(chunk.tolist()) for chunk in hours)
    everything = np.concatenate(hours)
    assert h.count(merged) == everything.size
    for q in (0.0, 0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0):
        exact = float(np.percentile(everything, q * 100))
        approx = h.quantile(merged, q)
        assert abs(approx - exact) / exact <= BOUND + 1e-9, (q, approx, exact)


def test_merge_is_addition_and_order_free():
    a, b = h.from_values([1.0, 2.0, 3.0]), h.from_values([3.0, 400.0])
    assert h.merge([a, b]) == h.merge([b, a]) == h.from_values([1.0, 2.0, 3.0, 3.0, 400.0])


def test_json_is_compact_and_round_trips():
    hist = h.from_values([0.2, 5.0, 5.0, 12345.0])
    text = h.to_json(hist)
    assert " " not in text and json.loads(text)
    assert h.from_json(text) == hist
    assert h.from_json(json.loads(text)) == hist
    assert h.from_json(None) == {}


def test_quantile_edge_cases():
    assert h.quantile({}, 0.5) is None
    one = h.from_values([250.0])
    assert abs(h.quantile(one, 0.99) - 250.0) / 250.0 <= BOUND
    with pytest.raises(ValueError):
        h.quantile(one, 1.5)
