"""A fourth series generator, written after the detector's last change was chosen and never tuned on.

`synthetic_c.py` was run to report twice; a detector change judged on it
again would start to be tuned on it. This one was written for the next
judgement (issue 21 item 7), shares no model with the others (only labelled.py's containers), and models
what none of them does:

- noise: Laplace (double exponential) in log space, heavier-shouldered
  than a normal, with clustered volatility: the sd follows a slow random
  walk in log between 0.7x and 1.6x `sigma` (a GARCH-like regime, not
  fixed volatile hours);
- a daily shape with a lunch dip and an evening peak (three harmonics,
  +-18%), a weekly morning bump (Sunday UTC, by the day formula below: meant
  as Monday's, kept as reported), and a slow creep of the level over the
  month (up to +12%, never labelled);
- spike runs: 0.6% of samples start a run of 1-4 slow probes at 2-8x;
- improvements that are not events: a few 0.6-0.8x dips lasting hours
  (the return from one must not page);
- shifts of 1.5-3x (log-uniform) lasting 1 hour to a day, 8 hours to 2
  days apart, reached as a step or over a ramp of up to 12 samples, some
  with the noise 1.3x wider while shifted;
- sampling every 5 minutes with +-20 s of jitter, 0.4% failed probes and
  now and then an hour or two with no samples at all (the agent was down).
"""

from __future__ import annotations

import math
import random

from benchmarks.detection.labelled import Series, Step, plan_steps

EPOCH_S = 1_769_904_000.0  # 2026-02-01T00:00Z, a Sunday
DAY_S = 86400.0


def plan_steps_d(
    seed: int,
    n: int,
    interval_s: float,
    *,
    factors: tuple[float, float] = (1.5, 3.0),
    durations_s: tuple[float, float] = (3600.0, DAY_S),
    gaps_s: tuple[float, float] = (8 * 3600.0, 2 * DAY_S),
    max_ramp: int = 12,
) -> tuple[Step, ...]:
    rng = random.Random(f"d-steps-{seed}")
    return plan_steps(
        rng, n, interval_s, first_s=1.5 * DAY_S, factors=factors, durations_s=durations_s, gaps_s=gaps_s,
        ramp=lambda r: r.choice((0, 0, r.randint(1, max_ramp))) if max_ramp else 0,
    )  # fmt: skip


def generate_d(seed: int, n: int, interval_s: float, sigma: float, steps: tuple[Step, ...] = ()) -> Series:
    rng = random.Random(f"d-series-{seed}")
    base = math.log(rng.uniform(120.0, 2500.0))
    shift, wider = [0.0] * n, [1.0] * n
    for s in steps:
        widen = 1.3 if rng.random() < 0.3 else 1.0
        for k in range(s.start, min(s.end, n)):
            shift[k] = math.log(s.factor) * min(1.0, (k - s.start + 1) / (s.ramp + 1))
            wider[k] = widen
    dips = [0.0] * n
    for _ in range(rng.randint(1, 4)):
        at, length = rng.randrange(n), int(rng.uniform(2, 10) * 3600 / interval_s)
        depth = math.log(rng.uniform(0.6, 0.8))
        for k in range(at, min(n, at + length)):
            if shift[k] == 0.0:
                dips[k] = depth
    down = set()
    for _ in range(rng.randint(0, 3)):
        at = rng.randrange(n)
        down.update(range(at, min(n, at + int(rng.uniform(1, 2) * 3600 / interval_s))))
    creep = rng.uniform(0.0, math.log(1.12))
    phase = rng.uniform(0, 2 * math.pi)
    vol, spike_left = 0.0, 0
    times, values, levels, sds = [], [], [], []
    for k in range(n):
        t_s = EPOCH_S + k * interval_s + rng.uniform(-20.0, 20.0)
        day = (t_s % DAY_S) / DAY_S * 2 * math.pi
        shape = 0.1 * math.sin(day + phase) - 0.05 * math.cos(2 * day + phase) + 0.03 * math.sin(3 * day)
        weekday = int((t_s // DAY_S + 4) % 7)  # 0 = Sunday (1970-01-01, a Thursday, is 4)
        hour = (t_s % DAY_S) / 3600.0
        bump = 0.08 if weekday == 0 and 7.0 <= hour < 10.0 else 0.0
        level = base + shape + bump + creep * k / n + dips[k]
        vol = min(math.log(1.6), max(math.log(0.7), vol + rng.gauss(0.0, 0.03)))
        sd = sigma * math.exp(vol) * wider[k]
        noise = rng.choice((-1.0, 1.0)) * rng.expovariate(1.0) * sd / math.sqrt(2.0)  # Laplace with sd `sd`
        log_value = level + shift[k] + noise
        if spike_left == 0 and rng.random() < 0.006:
            spike_left = rng.randint(1, 4)
        if spike_left:
            log_value += math.log(rng.uniform(2.0, 8.0))
            spike_left -= 1
        if k in down:
            continue
        times.append(t_s)
        values.append(None if rng.random() < 0.004 else math.exp(log_value))
        levels.append(level)
        sds.append(sd)
    # Indices of the kept samples: steps are re-stated against them so that events line up with values.
    kept = [k for k in range(n) if k not in down]
    position = {k: i for i, k in enumerate(kept)}

    def index(k: int) -> int:
        while k < n and k not in position:
            k += 1
        return position.get(k, len(kept))

    restated = tuple(Step(index(s.start), index(s.end), s.factor, s.ramp) for s in steps)
    return Series(interval_s, tuple(times), tuple(values), restated, tuple(levels), tuple(sds))
