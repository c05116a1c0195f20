"""An eighth series generator, written before the detector's next change and never tuned on.

It shares no model with the others (only labelled.py's containers and step placement) and
models what none of them does, from how a hosted model's latency is made:

- a serving fleet of two pools: each probe lands on the slower pool
  (1.15-1.6x) with a probability that drifts slowly through the day
  (0.1-0.45), so the noise is a two-humped mixture whose weight moves;
- noise that follows load: AR(2) noise in log space (phi1 0.3-1.1,
  phi2 chosen so the process stays stationary) on Student-t innovations
  (3-8 degrees of freedom), its sd swelling smoothly with a daily load
  curve (peak 1.3-2.2x the trough, at a per-series hour) instead of
  switching between regimes;
- queueing episodes: a few times a day a spike that decays
  exponentially (peak 1.5-4x, half-life 2-5 minutes), so one probe is
  slow and the next one or two a little slow: never labelled;
- a level with a slow random walk, a weekend 5-20% lower, and 0-3
  unlabelled "rollouts" a month that move it by 5-25% either way for good;
- shifts of 1.5-4x lasting 20 minutes to 2 days, 10 hours to 3 days
  apart, a third reached over 2-20 samples, the noise 0.8-1.6x as wide
  while shifted;
- sampling every 5 minutes with +-45 s jitter, 1% failed probes and,
  rarely, an hour of failures (the provider or the probe's path down).

`level_log` (the noise-free level, the pools' mean offset included, shifts excluded) and `sd`
(each sample's marginal noise sd, the pools' spread included) are what the oracle of
`detection_ceiling.py` is told.
"""

from __future__ import annotations

import math
import random

from benchmarks.detection.labelled import Series, Step, plan_steps

EPOCH_S = 1_793_491_200.0  # 2026-11-01T00:00Z, a Sunday
DAY_S = 86400.0


def plan_steps_h(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factors: tuple[float, float] = (1.5, 4.0),
    durations_s: tuple[float, float] = (1200.0, 2 * DAY_S),
    gaps_s: tuple[float, float] = (10 * 3600.0, 3 * DAY_S),
    max_ramp: int = 20,
) -> tuple[Step, ...]:
    rng = random.Random(f"h-steps-{seed}")
    return plan_steps(
        rng, n, interval_s, first_s=DAY_S, factors=factors, durations_s=durations_s, gaps_s=gaps_s,
        ramp=lambda r: r.randint(2, max_ramp) if max_ramp >= 2 and r.random() < 1 / 3 else 0,
    )  # fmt: skip


def _ar2(rng: random.Random) -> tuple[float, float, float]:
    """(phi1, phi2, marginal sd per unit innovation) of a stationary AR(2)."""
    phi1 = rng.uniform(0.3, 1.1)
    # Stationary when |phi2| < 1, phi2 < 1 - |phi1|; keep a margin so the process is not near a unit root.
    phi2 = rng.uniform(-0.3, min(0.2, 0.85 - phi1))
    rho1 = phi1 / (1.0 - phi2)
    gamma0 = 1.0 / (1.0 - phi1 * rho1 - phi2 * (phi1 * rho1 + phi2))
    return phi1, phi2, math.sqrt(gamma0)


def _student_t(rng: random.Random, df: float) -> float:
    """A Student-t draw scaled to unit variance."""
    z = rng.gauss(0.0, 1.0)
    chi2 = rng.gammavariate(df / 2.0, 2.0)
    return z / math.sqrt(chi2 / df) * math.sqrt((df - 2.0) / df)


def _rollouts(rng: random.Random, n: int) -> list[tuple[int, float]]:
    """Unlabelled permanent moves of the level: (first sample, log size)."""
    return sorted(
        (rng.randrange(n), (1 if rng.random() < 0.5 else -1) * math.log1p(rng.uniform(0.05, 0.25)))
        for _ in range(rng.randint(0, 3))
    )


def _outages(rng: random.Random, n: int, interval_s: float) -> set[int]:
    """An hour of failed probes, in about one series-month out of three."""
    out: set[int] = set()
    if rng.random() < 1 / 3:
        start = rng.randrange(n)
        out.update(range(start, min(n, start + int(3600.0 / interval_s))))
    return out


def generate_h(seed: int, n: int, interval_s: float, sigma: float, steps: tuple[Step, ...] = ()) -> Series:
    """`sigma`: the AR(2) noise sd in log at mean load (the pools and the load curve add to it)."""
    rng = random.Random(f"h-series-{seed}")
    base = math.log(rng.uniform(80.0, 4000.0))
    phi1, phi2, unit = _ar2(rng)
    df = rng.uniform(3.0, 8.0)
    pool_log = math.log(rng.uniform(1.15, 1.6))
    pool_low, pool_high = sorted((rng.uniform(0.1, 0.45), rng.uniform(0.1, 0.45)))
    pool_peak_h = rng.uniform(0.0, 24.0)
    load_swing = rng.uniform(1.3, 2.2)  # noise sd at the load peak over that at the trough
    load_peak_h = rng.uniform(0.0, 24.0)
    weekend = -math.log1p(rng.uniform(0.05, 0.2))
    episodes_a_day = rng.uniform(1.0, 5.0)
    rollouts = _rollouts(rng, n)
    outages = _outages(rng, n, interval_s)
    shift = [0.0] * n
    wider = [1.0] * n
    for s in steps:
        noise_ratio = rng.uniform(0.8, 1.6)
        for k in range(s.start, min(s.end, n)):
            shift[k] = math.log(s.factor) * min(1.0, (k - s.start + 1) / (s.ramp + 1))
            wider[k] = noise_ratio
    walk, x1, x2, queue, queue_half_life_min = 0.0, 0.0, 0.0, 0.0, 1.0
    times, values, levels, sds = [], [], [], []
    for k in range(n):
        t_s = EPOCH_S + k * interval_s + rng.uniform(-45.0, 45.0)
        hour = (t_s % DAY_S) / 3600.0
        weekday = int((t_s // DAY_S + 3) % 7)  # 0 = Monday
        walk += rng.gauss(0.0, 0.004)
        level = base + walk + (weekend if weekday >= 5 else 0.0)
        level += sum(size for at, size in rollouts if at <= k)
        # Load: 1 at the trough, load_swing at the peak; the noise sd follows it, normalised to 1 at mean load.
        load = 1.0 + (load_swing - 1.0) * 0.5 * (1.0 + math.cos(2 * math.pi * (hour - load_peak_h) / 24.0))
        sd_ar = sigma * load / (0.5 * (1.0 + load_swing)) * wider[k]
        p_slow = pool_low + (pool_high - pool_low) * 0.5 * (1.0 + math.cos(2 * math.pi * (hour - pool_peak_h) / 24.0))
        e = _student_t(rng, df) * sd_ar / unit
        x1, x2 = phi1 * x1 + phi2 * x2 + e, x1
        slow_pool = rng.random() < p_slow
        queue *= 0.5 ** (interval_s / 60.0 / queue_half_life_min)
        if rng.random() < episodes_a_day * interval_s / DAY_S:
            queue, queue_half_life_min = math.log(rng.uniform(1.5, 4.0)), rng.uniform(2.0, 5.0)
        log_value = level + shift[k] + x1 + (pool_log if slow_pool else 0.0) + queue
        failed = k in outages or rng.random() < 0.01
        times.append(t_s)
        values.append(None if failed else math.exp(log_value))
        levels.append(level + p_slow * pool_log)
        sds.append(math.sqrt(sd_ar * sd_ar + p_slow * (1.0 - p_slow) * pool_log * pool_log))
    return Series(interval_s, tuple(times), tuple(values), steps, tuple(levels), tuple(sds))
