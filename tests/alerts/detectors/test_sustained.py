"""The regression detector's fast path for large sustained shifts, its effect gate, and the plateau-shaped cycle.

Issue 13 item 7: on the second generator's correlated noise a 2x step took five samples to page, because
each sample's evidence is discounted for correlation and capped as a possible spike.
"""

from __future__ import annotations

import math
import random
import statistics

from benchmarks.detection.synthetic_a import DAY_S, EPOCH_S
from benchmarks.detection.synthetic_b import Change, Conditions, _business_hours, generate_b, plan_changes
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector
from monitor.alerts.detectors.seasonal import DailyProfile
from monitor.alerts.detectors.sustained import sustained_shift

REGRESSION = DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5)
STEP_S = 300.0
FLOOR = 0.8 * math.log(1.5)


def _alarms(values, step_s: float = STEP_S) -> list[int]:
    det = SeriesDetector(REGRESSION)
    return [i for i, v in enumerate(values) if det.observe(EPOCH_S + i * step_s, v).alarm_started]


def _two_x_delays(sigma: float, seed: int) -> list[int | None]:
    """Delay of each exactly-2x one-hour step on the second generator (None: missed), as the benchmark counts it."""
    n = 14 * 288
    changes = plan_changes(
        seed, n, STEP_S, factor_range=(2.0, 2.0), duration_range_s=(3600.0, 3600.0),
        gap_range_s=(6 * 3600.0, 12 * 3600.0), max_ramp=0, max_widen=1.0,
    )  # fmt: skip
    alarms = _alarms(generate_b(seed, n, STEP_S, Conditions(sigma=sigma), changes).values)
    return [next((a - c.start for a in alarms if c.start <= a < c.end), None) for c in changes]


# ------------------------------------------------------------ the rule itself
def test_three_alike_samples_above_the_band_are_a_shift():
    assert sustained_shift([0.7, 0.68, 0.72], 0.1, FLOOR)
    assert not sustained_shift([0.7, 0.68], 0.1, FLOOR)  # too few
    assert not sustained_shift([0.0, 0.7, 0.7], 0.1, FLOOR)  # the oldest is still at the baseline
    assert not sustained_shift([0.25, 0.26, 0.27], 0.1, FLOOR)  # 2.5 sds up, but under 0.8 x min_change
    assert not sustained_shift([0.5, 0.55, 0.6], 0.3, FLOOR)  # over min_change, but under 2 noise sds
    assert not sustained_shift([0.4, 0.75, 0.95], 0.1, FLOOR)  # not one level: 5.5 sds apart


def test_a_spike_on_a_shifted_level_is_allowed_but_not_a_run_of_spikes():
    assert sustained_shift([0.7, 2.0, 0.72], 0.1, FLOOR)  # one 7x sample on top of a 2x shift
    assert not sustained_shift([1.6, 2.1, 0.7], 0.1, FLOOR)  # two spikes and one shifted-looking sample
    assert not sustained_shift([1.6, 1.65, 1.7], 0.1, FLOOR)  # three 5x samples that agree: a spike run


# ------------------------------------------------------------ the detector
def test_a_2x_step_on_correlated_noise_pages_within_3_or_4_samples():
    # The charts alone take 5 samples at sd 0.1 and 4 at sd 0.2. The fast path's band rises with the
    # noise's autocorrelation (phi 0.25 here: 2.5 sds instead of 2), so at sd 0.2, where a 2x step is
    # 3.5 sds, it takes a sample more than on independent noise.
    for sigma, most in ((0.1, 3), (0.2, 4)):
        delays = [d for seed in (11, 12) for d in _two_x_delays(sigma, seed)]
        assert len(delays) >= 30 and None not in delays, sigma
        assert statistics.median(delays) <= most, (sigma, sorted(delays))


def test_the_band_rises_with_autocorrelation():
    # Four samples in a row 2.6 sds up: a shift on independent noise, ordinary on noise with phi 0.5.
    residuals, scale = [0.26, 0.27, 0.265], 0.1
    assert sustained_shift(residuals, scale, floor=0.2)
    assert not sustained_shift(residuals, scale, floor=0.2, phi=0.5)
    assert sustained_shift([0.31, 0.32, 0.33], scale, floor=0.2, phi=0.5)


def test_single_and_two_sample_spikes_never_page_on_correlated_noise():
    n = 10 * 288
    calm = Conditions(sigma=0.1, spike_rate=0.0, error_rate=0.0)
    values = list(generate_b(21, n, STEP_S, calm).values)
    rng = random.Random(5)
    for i in range(300, n - 2, 23):
        values[i] *= rng.uniform(2.0, 12.0)  # a spike every 23 samples, 2x (a shift's size) to 12x
        if i % 3 == 0:
            values[i + 1] *= rng.uniform(2.0, 12.0)  # a third of them run on into the next sample
    assert _alarms(values) == []


def test_a_step_under_min_change_does_not_page_once_the_cycle_is_learned():
    # A 1.3x step at low noise is overwhelming evidence of *a* change, but under min_change (50%): the
    # charts reach their thresholds within a few samples; the effect gate (0.8 x min_change) holds them.
    n = 4 * 288
    change = Change(start=3 * 288 + 100, length=36, factor=1.3)
    quiet = Conditions(sigma=0.05, spike_rate=0.0, error_rate=0.0, drift_sd=0.0, amplitude_range=(0.2, 0.2))
    assert _alarms(generate_b(31, n, STEP_S, quiet, (change,)).values) == []
    bigger = Change(start=change.start, length=36, factor=1.6)
    assert len(_alarms(generate_b(31, n, STEP_S, quiet, (bigger,)).values)) == 1


# ------------------------------------------------------------ the cycle
def test_a_business_hours_plateau_is_learned_to_its_edges():
    # Two daily harmonics round a plateau with one-hour edges off by 0.16 in log at 40% height: at
    # low noise that alone read as a regression twice a day. Up to six harmonics follow it to 0.11.
    p, rng, amplitude, tz_h = DailyProfile(), random.Random(3), 0.4, 0.3
    for day in range(20000, 20003):
        for k in range(288):
            ts = day * DAY_S + k * STEP_S
            hour = (ts % DAY_S / 3600 + tz_h) % 24
            p.add(ts, math.log1p(amplitude * _business_hours(hour, 1.0)) + rng.gauss(0, 0.05))
    p.add(20003 * DAY_S, 0.0)
    truth = [math.log1p(amplitude * _business_hours((k * STEP_S / 3600 + tz_h) % 24, 1.0)) for k in range(288)]
    fitted = [p.offset(20004 * DAY_S + k * STEP_S) for k in range(288)]
    gap = statistics.mean(truth) - statistics.mean(fitted)
    assert max(abs(t - f - gap) for t, f in zip(truth, fitted, strict=True)) < 0.11
