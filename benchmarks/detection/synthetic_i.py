"""A ninth series generator, written before the detector's change after the spell's autocorrelation, never
tuned on.

It shares no model with the others (only labelled.py's containers and step placement) and
models what none of them does:

- stochastic volatility: the log of the noise sd follows its own slow
  AR(1) (a memory of 2-10 hours, swinging the sd by 1.2-2x either way),
  so the noise neither switches between regimes nor clusters on shocks
  but wanders;
- noise as the sum of a fast AR(1) (phi 0.1-0.6) and a slow one (phi
  0.95-0.99, 10-40% of the variance): short memory with a long tail;
- a level that wanders smoothly: three sinusoids of 2-12 hours' period
  (5-20% in all) and a daily shape of two harmonics, never labelled;
- slow probes that excite each other (a Hawkes process: 0.3% of probes
  start a cluster at 1.5-5x, each slow probe making the next one slow
  with probability 0.3-0.5, at most four in a row);
- a scheduler that sometimes skips (2% of slots missing, now and then
  half an hour) and sometimes probes twice a minute apart;
- shifts of 1.5-3x lasting 30 minutes to a day, 12 hours to 4 days apart,
  a fifth reached over 3-12 samples, with 3% failed probes while shifted
  (0.5% otherwise).

`level_log` (the noise-free level, shifts excluded) and `sd` (each sample's marginal noise sd)
are what the oracle of `detection_ceiling.py` is told.
"""

from __future__ import annotations

import math
import random

from benchmarks.detection.labelled import Series, Step, plan_steps

EPOCH_S = 1_793_491_200.0  # 2026-11-01T00:00Z, a Sunday
DAY_S = 86400.0
MAX_CLUSTER = 4


def plan_steps_i(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factors: tuple[float, float] = (1.5, 3.0),
    durations_s: tuple[float, float] = (1800.0, DAY_S),
    gaps_s: tuple[float, float] = (12 * 3600.0, 4 * DAY_S),
    max_ramp: int = 12,
) -> tuple[Step, ...]:
    rng = random.Random(f"i-steps-{seed}")
    return plan_steps(
        rng, n, interval_s, first_s=DAY_S, factors=factors, durations_s=durations_s, gaps_s=gaps_s,
        ramp=lambda r: r.randint(3, max_ramp) if max_ramp >= 3 and r.random() < 0.2 else 0,
    )  # fmt: skip


def generate_i(seed: int, n: int, interval_s: float, sigma: float, steps: tuple[Step, ...] = ()) -> Series:
    """`sigma`: the noise's marginal sd in log where its volatility is at its median."""
    rng = random.Random(f"i-series-{seed}")
    base = math.log(rng.uniform(100.0, 3000.0))
    phi_fast, phi_slow = rng.uniform(0.1, 0.6), rng.uniform(0.95, 0.99)
    slow_share = rng.uniform(0.1, 0.4)
    vol_phi = math.exp(-interval_s / rng.uniform(2 * 3600.0, 10 * 3600.0))
    vol_sd = math.log(rng.uniform(1.2, 2.0))  # marginal sd of the log volatility
    waves = [
        (rng.uniform(2.0, 12.0) * 3600.0, rng.uniform(0.0, 2 * math.pi), a)
        for a in _split(rng, math.log1p(rng.uniform(0.05, 0.2)), 3)
    ]
    day = [(rng.uniform(0.0, 0.1), rng.uniform(0.0, 2 * math.pi)) for _ in range(2)]
    excite = rng.uniform(0.3, 0.5)
    shift = [0.0] * n
    for s in steps:
        for k in range(s.start, min(s.end, n)):
            shift[k] = math.log(s.factor) * min(1.0, (k - s.start + 1) / (s.ramp + 1))
    log_vol, fast, slow, cluster = 0.0, 0.0, 0.0, 0
    skip_left = 0
    times, values, levels, sds = [], [], [], []
    for k in range(n):
        log_vol = vol_phi * log_vol + math.sqrt(1.0 - vol_phi * vol_phi) * vol_sd * rng.gauss(0.0, 1.0)
        sd = sigma * math.exp(log_vol)
        fast = phi_fast * fast + math.sqrt(1.0 - phi_fast**2) * math.sqrt(1.0 - slow_share) * sd * rng.gauss(0.0, 1.0)
        slow = phi_slow * slow + math.sqrt(1.0 - phi_slow**2) * math.sqrt(slow_share) * sd * rng.gauss(0.0, 1.0)
        if cluster and cluster < MAX_CLUSTER and rng.random() < excite:
            cluster += 1
        elif rng.random() < 0.003:
            cluster = 1
        else:
            cluster = 0
        spike = math.log(rng.uniform(1.5, 5.0)) if cluster else 0.0
        if skip_left:
            skip_left -= 1
            continue
        if rng.random() < 0.02:
            skip_left = rng.choice((0, 0, 0, 5))  # this slot, or the next half hour, missing
            continue
        t_s = EPOCH_S + k * interval_s + rng.uniform(-10.0, 10.0)
        level = base + sum(a * math.sin(2 * math.pi * t_s / period + phase) for period, phase, a in waves)
        hour_angle = 2 * math.pi * (t_s % DAY_S) / DAY_S
        level += sum(a * math.sin((h + 1) * hour_angle + phase) for h, (a, phase) in enumerate(day))
        failed = rng.random() < (0.03 if shift[k] else 0.005)
        value = None if failed else math.exp(level + shift[k] + fast + slow + spike)
        probes = 2 if rng.random() < 0.01 else 1  # the scheduler probed twice, a minute apart
        for p in range(probes):
            times.append(t_s + 60.0 * p)
            values.append(value if p == 0 else math.exp(level + shift[k] + fast + slow + sd * 0.3 * rng.gauss(0, 1)))
            levels.append(level)
            sds.append(sd)
    return Series(
        interval_s, tuple(times), tuple(values), _reindex(steps, times, interval_s), tuple(levels), tuple(sds)
    )


def _split(rng: random.Random, total: float, parts: int) -> list[float]:
    """`total` split at random into `parts` shares."""
    cuts = sorted(rng.random() for _ in range(parts - 1))
    return [total * (b - a) for a, b in zip([0.0, *cuts], [*cuts, 1.0], strict=True)]


def _reindex(steps: tuple[Step, ...], times: list[float], interval_s: float) -> tuple[Step, ...]:
    """Steps are planned on the slot grid; after skipped slots and doubled probes they index the samples."""
    slots = [round((t - EPOCH_S) / interval_s) for t in times]
    out = []
    for s in steps:
        start = next((i for i, k in enumerate(slots) if k >= s.start), len(slots))
        end = next((i for i, k in enumerate(slots) if k >= s.end), len(slots))
        if end > start:
            out.append(Step(start, end, s.factor, s.ramp))
    return tuple(out)
