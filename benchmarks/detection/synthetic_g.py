"""A seventh series generator, written before the detector's volatility change and never tuned on.

It shares no model with the others (only labelled.py's containers and step placement) and
models what none of them does:

- noise regimes: a hidden two-state Markov chain, calm or noisy, each
  spell lasting 20 minutes to 8 hours (geometric), the noisy state's
  sd 1.5-3x the calm one's per series; within a state, ARMA(1,1) noise in
  log space (phi 0.3-0.85, theta -0.3..0.3) on skew-normal innovations
  (slow tail heavier than fast: latency is bounded below);
- a level with a weekly shape (each weekday its own 0-15% offset) and a
  daily cycle with a sharp edge (a traffic step of 10-40% at a per-series
  hour, ramped over 30 minutes, back 6-12 hours later): never labelled;
- provider-side slow probes: a Poisson 0.5% of probes at 1.5-4x and,
  rarer, a burst of 2 probes at 5-20x;
- shifts of 1.5-3.5x lasting 15 minutes to 30 hours, 10 hours to 4 days
  apart, a quarter reached over 3-15 samples; while shifted the regime
  chain keeps running (a shift in a noisy spell is harder, as in life);
- sampling every 5 minutes, +-15 s jitter, 2% failed probes in clumps (a
  failure makes the next one 30% likely).

`level_log` (the noise-free level, shifts excluded) and `sd` (each sample's
marginal noise sd in its regime) are what the oracle of
`detection_ceiling.py` is told.
"""

from __future__ import annotations

import math
import random

from benchmarks.detection.labelled import Series, Step, plan_steps

EPOCH_S = 1_793_491_200.0  # 2026-11-01T00:00Z, a Sunday
DAY_S = 86400.0
SKEW = 3.0  # skew-normal shape: the slow side's tail is the heavier


def plan_steps_g(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factors: tuple[float, float] = (1.5, 3.5),
    durations_s: tuple[float, float] = (900.0, 30 * 3600.0),
    gaps_s: tuple[float, float] = (10 * 3600.0, 4 * DAY_S),
    max_ramp: int = 15,
) -> tuple[Step, ...]:
    rng = random.Random(f"g-steps-{seed}")
    return plan_steps(
        rng, n, interval_s, first_s=DAY_S, factors=factors, durations_s=durations_s, gaps_s=gaps_s,
        ramp=lambda r: r.randint(3, max_ramp) if max_ramp >= 3 and r.random() < 0.25 else 0,
    )  # fmt: skip


_SKEW_DELTA = SKEW / math.sqrt(1.0 + SKEW * SKEW)
_SKEW_MEAN = _SKEW_DELTA * math.sqrt(2.0 / math.pi)
_SKEW_SD = math.sqrt(1.0 - _SKEW_MEAN * _SKEW_MEAN)


def _skew_normal(rng: random.Random) -> float:
    """A skew-normal draw (shape SKEW), centred and scaled to unit variance."""
    u, v = rng.gauss(0.0, 1.0), rng.gauss(0.0, 1.0)
    draw = _SKEW_DELTA * abs(u) + math.sqrt(1.0 - _SKEW_DELTA * _SKEW_DELTA) * v
    return (draw - _SKEW_MEAN) / _SKEW_SD


def _regimes(rng: random.Random, n: int, interval_s: float) -> list[bool]:
    """Noisy (True) or calm per sample: spells of 20 minutes to 8 hours, a third of the time noisy."""
    out, noisy = [], False
    while len(out) < n:
        mean_s = rng.uniform(1200.0, 8 * 3600.0) * (0.5 if noisy else 1.0)
        length = max(1, int(rng.expovariate(interval_s / mean_s)))
        out.extend([noisy] * length)
        noisy = not noisy
    return out[:n]


def generate_g(seed: int, n: int, interval_s: float, sigma: float, steps: tuple[Step, ...] = ()) -> Series:
    """`sigma`: the calm-state noise sd in log."""
    rng = random.Random(f"g-series-{seed}")
    base = math.log(rng.uniform(100.0, 5000.0))
    phi, theta = rng.uniform(0.3, 0.85), rng.uniform(-0.3, 0.3)
    noisy_ratio = rng.uniform(1.5, 3.0)
    weekly = [math.log1p(rng.uniform(0.0, 0.15)) for _ in range(7)]
    edge_size = math.log1p(rng.uniform(0.1, 0.4))
    edge_on_h = rng.uniform(0.0, 24.0)
    edge_hours = rng.uniform(6.0, 12.0)
    # ARMA(1,1) x' = phi x + e' + theta e: marginal variance (1 + 2 phi theta + theta^2) / (1 - phi^2) per unit innovation.
    unit = math.sqrt((1.0 + 2.0 * phi * theta + theta * theta) / (1.0 - phi * phi))
    noisy = _regimes(rng, n, interval_s)
    shift = [0.0] * n
    for s in steps:
        for k in range(s.start, min(s.end, n)):
            shift[k] = math.log(s.factor) * min(1.0, (k - s.start + 1) / (s.ramp + 1))
    x, e_prev, failed_prev = 0.0, 0.0, False
    burst_left = 0
    times, values, levels, sds = [], [], [], []
    for k in range(n):
        t_s = EPOCH_S + k * interval_s + rng.uniform(-15.0, 15.0)
        hour = (t_s % DAY_S) / 3600.0
        since_edge = (hour - edge_on_h) % 24.0
        edge = edge_size * min(1.0, since_edge / 0.5) if since_edge < edge_hours else 0.0
        weekday = int((t_s // DAY_S + 3) % 7)  # 0 = Monday
        level = base + weekly[weekday] + edge
        sd = sigma * (noisy_ratio if noisy[k] else 1.0)
        e = _skew_normal(rng) * sd / unit
        x = phi * x + e + theta * e_prev
        e_prev = e
        log_value = level + shift[k] + x
        if burst_left:
            log_value += math.log(rng.uniform(5.0, 20.0))
            burst_left -= 1
        elif rng.random() < 0.0008:
            burst_left = 1
            log_value += math.log(rng.uniform(5.0, 20.0))
        elif rng.random() < 0.005:
            log_value += math.log(rng.uniform(1.5, 4.0))
        failed = rng.random() < (0.3 if failed_prev else 0.014)
        failed_prev = failed
        times.append(t_s)
        values.append(None if failed else math.exp(log_value))
        levels.append(level)
        sds.append(sd)
    return Series(interval_s, tuple(times), tuple(values), steps, tuple(levels), tuple(sds))
