"""The noise's daily shape (hourly_noise.py): a series noisier at its peak hours is weighed against that
wider noise there, and a series without a daily shape is not widened at random hours."""

from __future__ import annotations

import math
import random

from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector
from monitor.alerts.detectors.hourly_noise import HourlyNoise

EPOCH_S = 1_775_001_600.0  # midnight UTC
STEP_S = 300.0
PEAK_HOURS = range(12, 16)


def noise_sd(ts: float, sd: float, peak: float) -> float:
    return sd * (peak if int(ts // 3600) % 24 in PEAK_HOURS else 1.0)


def test_an_hour_twice_as_noisy_reads_wider_and_a_quiet_one_does_not():
    rng, hourly = random.Random(1), HourlyNoise()
    for i in range(7 * 288):
        ts = EPOCH_S + i * STEP_S
        hourly.add(ts, abs(rng.gauss(0.0, noise_sd(ts, 0.1, 2.0))))
    assert hourly.ratio(EPOCH_S + 13.5 * 3600) > 1.4
    assert hourly.ratio(EPOCH_S + 3.5 * 3600) == 1.0


def test_noise_without_a_daily_shape_is_not_widened_at_random_hours():
    rng, hourly = random.Random(2), HourlyNoise()
    for i in range(7 * 288):
        hourly.add(EPOCH_S + i * STEP_S, abs(rng.gauss(0.0, 0.1)))
    ratios = [hourly.ratio(EPOCH_S + (h + 0.5) * 3600) for h in range(24)]
    assert sum(r == 1.0 for r in ratios) >= 20, ratios
    assert max(ratios) < 1.1


def test_an_empty_or_foreign_checkpoint_starts_it_empty():
    hourly = HourlyNoise()
    hourly.load([[0.1] * 5, [3] * 5])
    assert hourly.counts == [0] * 24 and hourly.ratio(EPOCH_S) == 1.0


def peak_hours_paged(seeds: range) -> int:
    """Alarms over ten days of AR(1) noise (sd 12%) that is 2.2x as wide four hours a day, no shift."""
    alarms = 0
    for seed in seeds:
        rng, x = random.Random(seed), 0.0
        det = SeriesDetector(DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5))
        for i in range(10 * 288):
            ts = EPOCH_S + i * STEP_S
            x = 0.3 * x + math.sqrt(1 - 0.09) * rng.gauss(0.0, noise_sd(ts, 0.12, 2.2))
            alarms += det.observe(ts, 800.0 * math.exp(x)).alarm_started
    return alarms


def test_a_series_noisier_at_its_peak_hours_pages_less_on_them(monkeypatch):
    shaped = peak_hours_paged(range(12))
    monkeypatch.setattr(HourlyNoise, "ratio", lambda self, ts: 1.0)
    flat = peak_hours_paged(range(12))
    assert shaped <= 0.7 * flat, f"{shaped} alarms with the daily shape, {flat} without"
