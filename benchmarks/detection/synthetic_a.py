"""Labelled synthetic metric series for judging the detector (DESIGN §7).

The first generator, the one the detector was tuned on. Shared by `benchmarks.detection` and
the tests, pure standard library and seeded, so a figure in docs/benchmarks.md can be reproduced
bit for bit.

What a series is made of, all multiplicative on the metric's level:
- lognormal noise (`sigma` is the standard deviation of the log; 0.25 puts
  p90 at 1.38× the median, a steady provider seen from one vantage point);
- spikes: 2% of samples hit by a factor drawn log-uniformly from 3–15×,
  independently, so pairs and triples of neighbouring spikes happen at their
  natural rate — the case that breaks naive detectors;
- a ±25% daily cycle (sine, random phase per series);
- labelled level shifts (`Shift`), 1.3–4× for 20 minutes to a day;
- failed probes (value None): a base error rate plus labelled error bursts.

Spikes and shifts move the metric in its *bad* direction: up for latency,
down for `tps` (`bad_up=False` divides instead of multiplying).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from monitor.alerts.detectors.base import DAY_S

# 2026-01-05T00:00:00Z, a Monday: series start at midnight so the cycle phase is explicit.
EPOCH_S = 1_767_571_200.0


@dataclass(frozen=True)
class Shift:
    """Samples [start, start + length) have their level multiplied by `factor` (> 1 = worse)."""

    start: int
    length: int
    factor: float

    @property
    def end(self) -> int:
        return self.start + self.length


@dataclass(frozen=True)
class Burst:
    """Samples [start, start + length) fail with probability `error_rate`."""

    start: int
    length: int
    error_rate: float

    @property
    def end(self) -> int:
        return self.start + self.length


@dataclass(frozen=True)
class Noise:
    level: float = 500.0
    sigma: float = 0.25
    spike_rate: float = 0.02
    spike_min: float = 3.0
    spike_max: float = 15.0
    daily_amplitude: float = 0.25
    error_rate: float = 0.005
    bad_up: bool = True  # False for tps: shifts and spikes lower it


@dataclass(frozen=True)
class Series:
    interval_s: float
    values: tuple[float | None, ...]
    shifts: tuple[Shift, ...] = ()
    bursts: tuple[Burst, ...] = ()
    noise: Noise = field(default_factory=Noise)
    phase: float = 0.0  # of the daily cycle, radians at the series' first sample
    start_s: float = EPOCH_S

    def points(self):
        """(timestamp_s, value or None) in order, as a probe agent would record them."""
        for i, value in enumerate(self.values):
            yield self.start_s + i * self.interval_s, value

    def typical_levels(self) -> list[float]:
        """The noise-free level of every sample: level x daily cycle x shifts (for tps, shifts divide)."""
        shift = [1.0] * len(self.values)
        for s in self.shifts:
            for i in range(max(s.start, 0), min(s.end, len(shift))):
                shift[i] *= s.factor
        omega = 2 * math.pi * self.interval_s / DAY_S
        amp, level = self.noise.daily_amplitude, self.noise.level
        return [
            level * (1.0 + amp * math.sin(omega * i + self.phase)) * (f if self.noise.bad_up else 1.0 / f)
            for i, f in enumerate(shift)
        ]


def generate(
    seed: int,
    n: int,
    interval_s: float,
    noise: Noise = Noise(),
    shifts: tuple[Shift, ...] = (),
    bursts: tuple[Burst, ...] = (),
) -> Series:
    rng = random.Random(seed)
    phase = rng.uniform(0, 2 * math.pi)
    factor = [1.0] * n
    for s in shifts:
        for i in range(max(s.start, 0), min(s.end, n)):
            factor[i] *= s.factor
    fail_p = [noise.error_rate] * n
    for b in bursts:
        for i in range(max(b.start, 0), min(b.end, n)):
            fail_p[i] = max(fail_p[i], b.error_rate)
    log_lo, log_hi = math.log(noise.spike_min), math.log(noise.spike_max)
    omega = 2 * math.pi * interval_s / DAY_S
    values: list[float | None] = []
    for i in range(n):
        # Draw every random number every time so adding a shift never reshuffles the noise.
        z = rng.gauss(0.0, noise.sigma)
        spike = math.exp(rng.uniform(log_lo, log_hi)) if rng.random() < noise.spike_rate else 1.0
        failed = rng.random() < fail_p[i]
        if failed:
            values.append(None)
            continue
        bad = factor[i] * spike
        level = noise.level * (1.0 + noise.daily_amplitude * math.sin(omega * i + phase)) * math.exp(z)
        values.append(level * bad if noise.bad_up else level / bad)
    return Series(interval_s, tuple(values), tuple(shifts), tuple(bursts), noise, phase)


def random_shifts(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factor_range: tuple[float, float] = (1.3, 4.0),
    duration_range_s: tuple[float, float] = (1200.0, DAY_S),
    warmup_s: float = 4 * 3600.0,
    gap_s: float = 4 * 3600.0,
) -> tuple[Shift, ...]:
    """Non-overlapping shifts, factor and duration log-uniform, at least `gap_s` apart.

    The gap lets the trailing baseline settle back to normal between shifts;
    the warm-up gives the detector a baseline before the first one.
    """
    rng = random.Random(seed)
    shifts, i = [], _samples(warmup_s, interval_s)
    while True:
        i += rng.randrange(_samples(gap_s, interval_s), 2 * _samples(gap_s, interval_s))
        length = _samples(math.exp(rng.uniform(*map(math.log, duration_range_s))), interval_s)
        if i + length >= n:
            return tuple(shifts)
        shifts.append(Shift(i, length, round(math.exp(rng.uniform(*map(math.log, factor_range))), 3)))
        i += length


def random_bursts(
    seed: int,
    n: int,
    interval_s: float,
    *,
    rate_range: tuple[float, float] = (0.1, 1.0),
    duration_range_s: tuple[float, float] = (1200.0, 4 * 3600.0),
    warmup_s: float = 4 * 3600.0,
    gap_s: float = 4 * 3600.0,
) -> tuple[Burst, ...]:
    """Error bursts: failure probability uniform in `rate_range`, duration log-uniform."""
    rng = random.Random(seed)
    bursts, i = [], _samples(warmup_s, interval_s)
    while True:
        i += rng.randrange(_samples(gap_s, interval_s), 2 * _samples(gap_s, interval_s))
        length = _samples(math.exp(rng.uniform(*map(math.log, duration_range_s))), interval_s)
        if i + length >= n:
            return tuple(bursts)
        bursts.append(Burst(i, length, round(rng.uniform(*rate_range), 3)))
        i += length


def _samples(seconds: float, interval_s: float) -> int:
    return max(1, round(seconds / interval_s))
