"""A sixth series generator, written before the detector's noise-burst change and never tuned on.

It shares no model with the others (only labelled.py's containers and step placement) and
models what none of them does:

- noise: AR(1) in log space (phi 0.1-0.8 per series) whose innovations
  have a volatility that clusters (GARCH(1,1): a large move makes the next
  ones larger, and calm returns over an hour or two), on Laplace shocks:
  noisy spells are not blocks of a fixed width but grow and fade, as a
  provider's load does;
- a level with two daily peaks (morning and evening, per-series sizes
  5-30% and hours), a quieter weekend by a per-series 0-20%, a slow
  drift of up to 25% across the month either way, and 1-4 "deploys" a
  month: lasting level changes of 8-30% either way, below any
  min_change the benchmarks run with, so never a page;
- slow-probe blips: 1 or 2 probes in a row at 2-8x, on 0.6% of samples,
  and rarer single probes at 10-30x (a timeout retried): shorter than the
  default min_duration, so never a page;
- gaps: the agent away for 1-6 hours, 0-2 times a month (the detector
  resumes after them), and 1% failed probes;
- shifts of 1.5-4x (log-uniform) lasting 20 minutes to two days, 8 hours
  to 3 days apart; 40% reached over a ramp of 2-10 samples; while
  shifted the noise sd is multiplied by 0.7-2 (a slower provider may be
  steadier or jitterier);
- sampling every 5 minutes with up to +-60 s of jitter, a probe now and
  then late by half an interval, values rounded to the millisecond.

`level_log` (the noise-free level: peaks, weekend, drift and deploys,
shifts excluded) and `sd` (each sample's conditional noise sd) are what
the oracle of `detection_ceiling.py` is told.
"""

from __future__ import annotations

import math
import random

from benchmarks.detection.labelled import Series, Step, plan_steps

EPOCH_S = 1_788_220_800.0  # 2026-09-01T00:00Z, a Tuesday
DAY_S = 86400.0
# GARCH(1,1) on the innovations' variance: v' = w + a * shock^2 + b * v, with a + b < 1 so that the
# long-run variance is w / (1 - a - b); the per-series (a, b) decide how bursty the noise is.
GARCH_A = (0.05, 0.2)
GARCH_PERSISTENCE = (0.85, 0.97)  # a + b


def plan_steps_f(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factors: tuple[float, float] = (1.5, 4.0),
    durations_s: tuple[float, float] = (1200.0, 2 * DAY_S),
    gaps_s: tuple[float, float] = (8 * 3600.0, 3 * DAY_S),
    max_ramp: int = 10,
) -> tuple[Step, ...]:
    rng = random.Random(f"f-steps-{seed}")
    return plan_steps(
        rng, n, interval_s, first_s=DAY_S, factors=factors, durations_s=durations_s, gaps_s=gaps_s,
        ramp=lambda r: r.randint(2, max_ramp) if max_ramp >= 2 and r.random() < 0.4 else 0,
    )  # fmt: skip


def _laplace(rng: random.Random) -> float:
    """A Laplace draw with unit variance."""
    u = rng.random() - 0.5
    return -math.copysign(1.0, u) * math.log(1.0 - 2.0 * abs(u)) / math.sqrt(2.0)


def _daily(t_s: float, peaks: tuple[tuple[float, float, float], ...]) -> float:
    """Log-level of the daily peaks at `t_s`: each (size, hour, width in hours) a bump on the clock."""
    hour = (t_s % DAY_S) / 3600.0
    total = 0.0
    for size, at, width in peaks:
        distance = min(abs(hour - at), 24.0 - abs(hour - at))
        total += size * math.exp(-0.5 * (distance / width) ** 2)
    return total


def generate_f(seed: int, n: int, interval_s: float, sigma: float, steps: tuple[Step, ...] = ()) -> Series:
    rng = random.Random(f"f-series-{seed}")
    base = math.log(rng.uniform(120.0, 6000.0))
    phi = rng.uniform(0.1, 0.8)
    a = rng.uniform(*GARCH_A)
    b = rng.uniform(*GARCH_PERSISTENCE) - a
    w = 1.0 - a - b  # long-run innovation variance 1 (scaled to sigma below)
    peaks = (
        (math.log1p(rng.uniform(0.05, 0.3)), rng.uniform(7.0, 11.0), rng.uniform(1.0, 3.0)),
        (math.log1p(rng.uniform(0.05, 0.3)), rng.uniform(16.0, 21.0), rng.uniform(1.0, 3.0)),
    )
    weekend = math.log(1.0 - rng.uniform(0.0, 0.2))
    drift_per_sample = rng.uniform(-1.0, 1.0) * math.log(1.25) / n
    deploys = sorted(rng.randrange(n) for _ in range(rng.randint(1, 4)))
    deploy_sizes = [math.log(rng.uniform(1.08, 1.30)) * rng.choice((-1.0, 1.0)) for _ in deploys]
    gaps = []
    for _ in range(rng.randint(0, 2)):
        at = rng.randrange(n)
        gaps.append((at, at + int(rng.uniform(3600.0, 6 * 3600.0) / interval_s)))
    shift, widen = [0.0] * n, [1.0] * n
    for s in steps:
        factor_sd = math.exp(rng.uniform(math.log(0.7), math.log(2.0)))
        for k in range(s.start, min(s.end, n)):
            shift[k] = math.log(s.factor) * min(1.0, (k - s.start + 1) / (s.ramp + 1))
            widen[k] = factor_sd
    ar, variance, shock, ar_variance = 0.0, 1.0, 0.0, 1.0
    blip_left = 0
    times, values, levels, sds = [], [], [], []
    for k in range(n):
        late = 0.5 * interval_s if rng.random() < 0.003 else 0.0
        t_s = EPOCH_S + k * interval_s + rng.uniform(-60.0, 60.0) + late
        weekday = int((t_s // DAY_S + 3) % 7)  # 1970-01-01 was a Thursday: 0 = Monday
        level = base + _daily(t_s, peaks) + (weekend if weekday >= 5 else 0.0) + drift_per_sample * k
        level += sum(size for at, size in zip(deploys, deploy_sizes, strict=True) if k >= at)
        variance = w + a * shock * shock + b * variance
        sd_innovation = math.sqrt(variance)
        shock = sd_innovation * _laplace(rng)
        ar = phi * ar + math.sqrt(1.0 - phi * phi) * shock
        ar_variance = phi * phi * ar_variance + (1.0 - phi * phi) * variance  # what the oracle is told
        sd = sigma * widen[k] * math.sqrt(ar_variance)
        log_value = level + shift[k] + sigma * widen[k] * ar
        if blip_left == 0 and rng.random() < 0.006:
            blip_left = rng.randint(1, 2)
        if blip_left:
            log_value += math.log(rng.uniform(2.0, 8.0))
            blip_left -= 1
        elif rng.random() < 0.0005:
            log_value += math.log(rng.uniform(10.0, 30.0))
        away = any(start <= k < end for start, end in gaps)
        failed = rng.random() < 0.01
        times.append(t_s)
        values.append(None if away or failed else max(1.0, round(math.exp(log_value))))
        levels.append(level)
        sds.append(sd)
    kept = [i for i in range(n) if not any(start <= i < end for start, end in gaps)]
    return Series(
        interval_s,
        tuple(times[i] for i in kept),
        tuple(values[i] for i in kept),
        tuple(_reindex(s, kept) for s in steps if _reindex(s, kept) is not None),
        tuple(levels[i] for i in kept),
        tuple(sds[i] for i in kept),
    )


def _reindex(step: Step, kept: list[int]) -> Step | None:
    """A step's indices once the agent's gaps are cut out of the series (None: it fell inside one)."""
    inside = [j for j, i in enumerate(kept) if step.start <= i < step.end]
    if not inside:
        return None
    return Step(inside[0], inside[-1] + 1, step.factor, step.ramp)
