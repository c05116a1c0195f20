"""A fifth series generator, written before the detector's latest change was judged, and never tuned on.

It shares no model with the others (only labelled.py's containers and step placement) and
models what none of them does:

- noise: AR(1) in log space, phi drawn per series from 0.2 to 0.7, on
  Student-t innovations (4 degrees of freedom, scaled to the wanted sd):
  neighbouring probes alike, as on a real provider whose load moves slower
  than the sampling, with heavy tails;
- a level that drifts: a daily cycle whose amplitude (5-25%) and phase are
  per series, a weekend 10% lower, and a random walk of the level itself
  (sd 0.4% a sample, pulled back to the cycle): never labelled;
- noise bursts: 1-3 a day, 10-60 minutes where the noise sd is 2x with no
  change of level (a noisy spell is not an incident);
- slow-probe blips: 1 or 2 probes in a row at 1.5-6x, on 0.8% of samples:
  shorter than any `min_duration` the benchmarks run with (10 minutes at
  5-minute sampling), so never a page;
- shifts of 1.5-3x (log-uniform) lasting 30 minutes to a day, 6 hours to
  2 days apart, some reached over a ramp of up to 6 samples; the noise
  while shifted keeps its sd in log (a slower provider is as jittery in
  relative terms) or, for a third of them, widens 1.5x;
- sampling every 5 minutes with +-30 s of jitter, 0.5% failed probes.

`level_log` (the noise-free level, drift included, shifts excluded) and
`sd` (each sample's marginal noise sd) are what the oracle of
`detection_ceiling.py` is told.
"""

from __future__ import annotations

import math
import random

from benchmarks.detection.labelled import Series, Step, plan_steps

EPOCH_S = 1_775_001_600.0  # 2026-04-01T00:00Z
DAY_S = 86400.0
T_DF = 4.0  # Student-t degrees of freedom of the innovations
T_SCALE = math.sqrt((T_DF - 2.0) / T_DF)  # a t with 4 df scaled by this has unit variance


def plan_steps_e(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factors: tuple[float, float] = (1.5, 3.0),
    durations_s: tuple[float, float] = (1800.0, DAY_S),
    gaps_s: tuple[float, float] = (6 * 3600.0, 2 * DAY_S),
    max_ramp: int = 6,
) -> tuple[Step, ...]:
    rng = random.Random(f"e-steps-{seed}")
    return plan_steps(
        rng, n, interval_s, first_s=DAY_S, factors=factors, durations_s=durations_s, gaps_s=gaps_s,
        ramp=lambda r: r.randint(1, max_ramp) if max_ramp and r.random() < 0.3 else 0,
    )  # fmt: skip


def _student_t(rng: random.Random) -> float:
    """A Student-t draw with T_DF degrees of freedom, unit variance."""
    chi2 = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(int(T_DF)))
    return rng.gauss(0.0, 1.0) / math.sqrt(chi2 / T_DF) * T_SCALE


def generate_e(seed: int, n: int, interval_s: float, sigma: float, steps: tuple[Step, ...] = ()) -> Series:
    rng = random.Random(f"e-series-{seed}")
    base = math.log(rng.uniform(150.0, 4000.0))
    phi = rng.uniform(0.2, 0.7)
    amplitude, phase = rng.uniform(0.05, 0.25), rng.uniform(0.0, 2 * math.pi)
    shift, wider = [0.0] * n, [1.0] * n
    for s in steps:
        widen = 1.5 if rng.random() < 1 / 3 else 1.0
        for k in range(s.start, min(s.end, n)):
            shift[k] = math.log(s.factor) * min(1.0, (k - s.start + 1) / (s.ramp + 1))
            wider[k] = widen
    burst = [1.0] * n
    per_day = int(DAY_S / interval_s)
    for day in range(n // per_day + 1):
        for _ in range(rng.randint(1, 3)):
            at = day * per_day + rng.randrange(per_day)
            for k in range(at, min(n, at + int(rng.uniform(600.0, 3600.0) / interval_s))):
                burst[k] = 2.0
    walk, ar = 0.0, 0.0
    blip_left = 0
    times, values, levels, sds = [], [], [], []
    for k in range(n):
        t_s = EPOCH_S + k * interval_s + rng.uniform(-30.0, 30.0)
        day = (t_s % DAY_S) / DAY_S * 2 * math.pi
        weekday = int((t_s // DAY_S + 3) % 7)  # 2026-04-01 is a Wednesday: 0 = Monday
        weekend = math.log(0.9) if weekday >= 5 else 0.0
        walk = 0.98 * walk + rng.gauss(0.0, 0.004)
        level = base + amplitude * math.sin(day + phase) + weekend + walk
        sd = sigma * burst[k] * wider[k]
        # AR(1) with marginal sd `sd`: innovations of sd sd * sqrt(1 - phi^2).
        ar = phi * ar + math.sqrt(1.0 - phi * phi) * sd * _student_t(rng)
        log_value = level + shift[k] + ar
        if blip_left == 0 and rng.random() < 0.008:
            blip_left = rng.randint(1, 2)
        if blip_left:
            log_value += math.log(rng.uniform(1.5, 6.0))
            blip_left -= 1
        times.append(t_s)
        values.append(None if rng.random() < 0.005 else math.exp(log_value))
        levels.append(level)
        sds.append(sd)
    return Series(interval_s, tuple(times), tuple(values), steps, tuple(levels), tuple(sds))
