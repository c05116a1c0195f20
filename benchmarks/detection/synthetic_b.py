"""A second generator of labelled series, written apart from `synthetic_a.py`.

The detector was tuned on `synthetic_a.py`'s series; figures on those alone
would flatter it. This generator shares no code or shape with that one, so
`benchmarks.detection` can report how the detector does on data it was
not shaped around (issue 13). Later the detector's settings were chosen on its "tune" seeds too
(1-999); its "held-out" seeds (1001-1999) are only reported (`conditions.py`). What it models:

- noise: AR(1) in log space (neighbouring probes are alike, phi 0.25) with
  Student-t innovations (5 degrees of freedom, heavier tails than a
  lognormal), scaled so the log's standard deviation is `sigma`;
- a slow mean-reverting drift of the level (sd 0.05 in log, about a day to
  revert): never labelled, never an event;
- spikes: `spike_rate` of samples (1.5%) start a spike of 3-12x
  (log-uniform); one in five spikes runs on into the next sample;
- a business-hours cycle instead of a sine: a plateau from 09:00 to 18:00 in
  a random time zone, `amplitude` 15-50% above the night, half as tall on
  weekends;
- shifts of 1.5-3x (log-uniform) lasting 1 hour to a day (log-uniform),
  reached over 0-3 samples (a ramp), with the noise up to 1.3x wider while
  shifted;
- failed probes (None) at 0.5%.

Pure standard library, seeded: same seed, same series.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from benchmarks.detection.synthetic_a import EPOCH_S
from monitor.alerts.detectors.base import DAY_S

HOUR_S = 3600.0
T_DOF = 5
AR_PHI = 0.25
DRIFT_SD = 0.05
DRIFT_TAU_S = DAY_S


@dataclass(frozen=True)
class Conditions:
    sigma: float = 0.25  # sd of the log noise
    level: float = 500.0
    spike_rate: float = 0.015
    spike_range: tuple[float, float] = (3.0, 12.0)
    spike_run_on: float = 0.2
    error_rate: float = 0.005
    ar_phi: float = AR_PHI
    t_dof: int | None = T_DOF  # None: gaussian innovations
    drift_sd: float = DRIFT_SD
    weekend: float = 0.5  # the cycle's height on Saturday and Sunday
    amplitude_range: tuple[float, float] = (0.15, 0.5)


@dataclass(frozen=True)
class Change:
    """A labelled shift: samples [start, start + length) are `factor` times the level."""

    start: int
    length: int
    factor: float
    ramp: int = 0  # samples to reach the factor
    widen: float = 1.0  # noise sd multiplier while shifted

    @property
    def end(self) -> int:
        return self.start + self.length


@dataclass(frozen=True)
class LabelledSeries:
    interval_s: float
    values: tuple[float | None, ...]
    changes: tuple[Change, ...]
    start_s: float = EPOCH_S

    def points(self):
        for i, value in enumerate(self.values):
            yield self.start_s + i * self.interval_s, value


def plan_changes(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factor_range: tuple[float, float] = (1.5, 3.0),
    duration_range_s: tuple[float, float] = (HOUR_S, DAY_S),
    gap_range_s: tuple[float, float] = (DAY_S, 2 * DAY_S),
    warmup_s: float = DAY_S,
    max_ramp: int = 3,
    max_widen: float = 1.3,
) -> tuple[Change, ...]:
    rng = random.Random(f"changes-{seed}")
    out, i = [], round(warmup_s / interval_s)
    while True:
        i += round(rng.uniform(*gap_range_s) / interval_s)
        length = max(1, round(_log_uniform(rng, duration_range_s) / interval_s))
        if i + length >= n:
            return tuple(out)
        factor = round(_log_uniform(rng, factor_range), 3)
        out.append(Change(i, length, factor, rng.randint(0, max_ramp), round(rng.uniform(1.0, max_widen), 3)))
        i += length


def generate_b(
    seed: int, n: int, interval_s: float, conditions: Conditions, changes: tuple[Change, ...] = ()
) -> LabelledSeries:
    rng = random.Random(f"series-{seed}")
    shift_log = [0.0] * n
    widen = [1.0] * n
    for c in changes:
        for k in range(c.start, min(c.end, n)):
            ramp_share = min(1.0, (k - c.start + 1) / (c.ramp + 1))
            shift_log[k] = math.log(c.factor) * ramp_share
            widen[k] = c.widen
    # Student-t innovations scaled to unit variance, then AR(1) with a stationary sd of sigma.
    dof, phi = conditions.t_dof, conditions.ar_phi
    t_scale = math.sqrt((dof - 2) / dof) if dof else 1.0
    innovation_sd = conditions.sigma * math.sqrt(1 - phi**2)
    drift_keep = math.exp(-interval_s / DRIFT_TAU_S)
    drift_step_sd = conditions.drift_sd * math.sqrt(1 - drift_keep**2)
    tz_offset_h = rng.uniform(-12, 12)
    amplitude = rng.uniform(*conditions.amplitude_range)
    lo, hi = (math.log(v) for v in conditions.spike_range)
    ar = drift = 0.0
    spiking = False
    values: list[float | None] = []
    for k in range(n):
        t = _student_t(rng, dof) * t_scale if dof else rng.gauss(0.0, 1.0)
        ar = phi * ar + innovation_sd * t
        drift = drift_keep * drift + drift_step_sd * rng.gauss(0.0, 1.0)
        spiking = rng.random() < (conditions.spike_run_on if spiking else conditions.spike_rate)
        spike = rng.uniform(lo, hi) if spiking else 0.0
        failed = rng.random() < conditions.error_rate
        if failed:
            values.append(None)
            continue
        hour = (k * interval_s / HOUR_S + tz_offset_h) % (7 * 24)
        log_value = (
            math.log(conditions.level)
            + math.log1p(amplitude * _business_hours(hour, conditions.weekend))
            + drift
            + ar * widen[k]
            + shift_log[k]
            + spike
        )
        values.append(math.exp(log_value))
    return LabelledSeries(interval_s, tuple(values), tuple(changes))


def _business_hours(week_hour: float, weekend_height: float) -> float:
    """0 at night, 1 from 09:00 to 18:00 (an hour's smooth edge each side), half on Saturday and Sunday."""
    day, hour = divmod(week_hour, 24)
    rise = _smoothstep((hour - 8.0) / 1.0)
    fall = 1.0 - _smoothstep((hour - 18.0) / 1.0)
    weekend = day >= 5  # the series starts on a Monday (EPOCH_S)
    return min(rise, fall) * (weekend_height if weekend else 1.0)


def _smoothstep(x: float) -> float:
    x = min(1.0, max(0.0, x))
    return x * x * (3 - 2 * x)


def _student_t(rng: random.Random, dof: int) -> float:
    z = rng.gauss(0.0, 1.0)
    chi2 = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(dof))
    return z / math.sqrt(chi2 / dof)


def _log_uniform(rng: random.Random, bounds: tuple[float, float]) -> float:
    return math.exp(rng.uniform(math.log(bounds[0]), math.log(bounds[1])))
