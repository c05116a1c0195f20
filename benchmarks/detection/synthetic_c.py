"""A third series generator, written fresh for issue 21 and never tuned on (DESIGN §7).

Nothing in `monitor/alerts/detectors/` was chosen on it: it is only run to report
(`benchmarks.detection_fresh`). It models things the first two do
not, on purpose:

- noise: Gaussian in log space with sd `sigma`, in volatility regimes (a
  random quarter of the hours run at 1.4x the sd);
- spikes: 1% of samples multiplied by a Pareto(alpha 1.6) factor, capped at
  25x (heavy-tailed rather than uniform 3-15x);
- a daily cycle of two harmonics (a morning and an afternoon peak, ±20%)
  and quieter weekends (-10%; the day formula below makes them Friday and Saturday UTC, kept as it
  is because every figure reported from this generator came from it);
- shifts of 1.5-3x (log-uniform) lasting 1 hour to a day (log-uniform),
  6 hours to 2 days apart, reached as a step or over a ramp of up to 6
  samples; exactly `min_change` (1.5x) shifts are as likely as any other
  size's share of the log-range, and a separate set tests them alone;
- 0.3% of probes fail (no value): a latency rule skips them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

EPOCH_S = 1_767_225_600.0  # 2026-01-01T00:00Z, a Thursday
DAY_S = 86400.0


@dataclass(frozen=True)
class Step:
    start: int
    end: int
    factor: float
    ramp: int  # samples to reach the full factor (0: a step)


@dataclass(frozen=True)
class SeriesC:
    interval_s: float
    values: tuple[float | None, ...]
    steps: tuple[Step, ...]
    start_s: float = EPOCH_S
    # What no detector is told, for the ceiling (detection_ceiling.py): the log of the noise-free level
    # without the shifts (cycle and weekends included) and each sample's noise sd.
    level_log: tuple[float, ...] = ()
    sd: tuple[float, ...] = ()

    def points(self):
        for i, value in enumerate(self.values):
            yield self.start_s + i * self.interval_s, value


def plan_steps(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factors: tuple[float, float] = (1.5, 3.0),
    durations_s: tuple[float, float] = (3600.0, DAY_S),
    gaps_s: tuple[float, float] = (6 * 3600.0, 2 * DAY_S),
    max_ramp: int = 6,
    warmup_s: float = DAY_S,
) -> tuple[Step, ...]:
    rng = random.Random(f"c-steps-{seed}")
    out, at = [], int(warmup_s / interval_s)
    while True:
        at += int(rng.uniform(*gaps_s) / interval_s)
        length = int(math.exp(rng.uniform(math.log(durations_s[0]), math.log(durations_s[1]))) / interval_s)
        if at + length >= n:
            break
        factor = math.exp(rng.uniform(math.log(factors[0]), math.log(factors[1])))
        out.append(Step(at, at + length, factor, rng.randint(0, max_ramp) if max_ramp else 0))
        at += length
    return tuple(out)


def generate_c(seed: int, n: int, interval_s: float, sigma: float, steps: tuple[Step, ...] = ()) -> SeriesC:
    rng = random.Random(f"c-series-{seed}")
    level_ms = rng.uniform(150.0, 1500.0)
    shift = [0.0] * n
    for s in steps:
        for k in range(s.start, min(s.end, n)):
            shift[k] = math.log(s.factor) * min(1.0, (k - s.start + 1) / (s.ramp + 1))
    hours_volatile = {h for h in range(int(n * interval_s / 3600) + 1) if rng.random() < 0.25}
    phase = rng.uniform(0, 2 * math.pi)
    values: list[float | None] = []
    levels: list[float] = []
    sds: list[float] = []
    for k in range(n):
        t_s = EPOCH_S + k * interval_s
        day = (t_s % DAY_S) / DAY_S * 2 * math.pi
        cycle = 0.12 * math.sin(day + phase) + 0.08 * math.sin(2 * day + 1.3 * phase)
        weekday = int((t_s // DAY_S + 4) % 7)  # 0 = Sunday (1970-01-01, a Thursday, is 4): 5 and 6 are Fri, Sat
        weekend = -0.1 if weekday >= 5 else 0.0
        sd = sigma * (1.4 if int(k * interval_s // 3600) in hours_volatile else 1.0)
        log_value = math.log(level_ms) + cycle + weekend + shift[k] + rng.gauss(0.0, sd)
        levels.append(math.log(level_ms) + cycle + weekend)
        sds.append(sd)
        if rng.random() < 0.01:
            log_value += math.log(min(25.0, rng.paretovariate(1.6)))
        values.append(None if rng.random() < 0.003 else math.exp(log_value))
    return SeriesC(interval_s, tuple(values), steps, level_log=tuple(levels), sd=tuple(sds))
