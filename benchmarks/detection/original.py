"""The original suite (DESIGN §7, issue 5): every alert kind on the first generator, `synthetic_a`.

    .venv/bin/python -m benchmarks.detection --suite original [--quick] [--jobs N] [--sigma 0.25] [--seed 1]

About 170 s of CPU: 1.5 minutes on 2 idle cores (`--quick` is a quarter of it).
Every rule uses the `DetectorSettings` defaults apart from what is listed below.

Series (`synthetic_a`, the generator the detector was tuned on, seeded): lognormal noise (sigma 0.25
in log), 2% independent spikes of 3-15x in the metric's bad direction, a
±25% daily cycle, a 0.5% base error rate; sampled every 1 and every 5
minutes. Each alert kind is run through `SeriesDetector` exactly as the
service runs it, one observation at a time:

- regression ttft_ms: level shifts up by 1.3-4x (log-uniform) lasting
  20 minutes to a day (log-uniform), starting 1-2 days apart; rule
  min_change 50%.
- regression tps: the same shifts, downwards (tps / factor).
- threshold ttft_ms: p90 over 15 minutes (the example config's rule) and
  over 4 hours above 2000 ms, on series whose true p90 (noise and spikes
  together) peaks at 2000 / 1.3 ms; the same shifts push it over.
- error_rate threshold: error rate over 15 minutes above 20%, with error
  bursts of 10-100% lasting 20 minutes to 4 hours.
- error_rate regression: the same bursts; min_change 50%, floor 5 points.
At 5-minute sampling a 15-minute window holds 3 probes, fewer than
min_samples (5), so there the windows are 1 hour.

Scored by `scoring.score` (its docstring says how), per kind and cadence, with:
- recall over eligible events only: shifts of 1.5x or more (threshold:
  a true p90 at least 1.1x the bound; error rules: a rate of 30% or more,
  1.5x the bound) lasting at least 12 samples. Smaller events are "don't
  care": an alarm there is not false, a miss is not counted.
- 2x delay from a separate set of exactly-2x shifts one hour long, 4-8 hours
  apart.
- false alarms per target-month on series with no shift and no burst (noise,
  spikes, the daily cycle and the base error rate only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

from benchmarks.detection.scoring import GRACE, MONTH_S, Case, Event, Score, fmt, run_case, score
from benchmarks.detection.synthetic_a import DAY_S, Noise, Series, generate, random_bursts, random_shifts
from monitor.alerts.detectors.detect import DetectorSettings

MIN_FACTOR = 1.5
MIN_SAMPLES_LONG = 12
GAP_S = DAY_S  # shifts and bursts start 1-2 days apart: often for a real target, and each has a baseline
BOUND_MS = 2000.0
ERROR_BOUND = 0.2


@dataclass(frozen=True)
class Scale:
    shifted_months: float
    two_x_months: float
    free_months: float


FULL = {60: Scale(9, 2, 10), 300: Scale(14, 6, 36)}
QUICK = {60: Scale(2, 1, 3), 300: Scale(3, 2, 8)}


# ------------------------------------------------------------------ cases
def window_s(interval_s: float) -> float:
    return max(900.0, MIN_SAMPLES_LONG * interval_s)


def chunks(months: float, interval_s: float) -> list[tuple[int, int]]:
    """`months` of samples as series of at most 30 days each: (index, samples)."""
    total, per = round(months * MONTH_S / interval_s), round(MONTH_S / interval_s)
    return [(i, min(per, total - start)) for i, start in enumerate(range(0, total, per))]


def regression_case(metric: str, interval_s: float, which: str, i: int, n: int, seed: int, noise: Noise) -> Case:
    noise = replace(noise, bad_up=metric != "tps", level=500.0 if metric != "tps" else 80.0)
    settings = DetectorSettings(metric=metric, kind="regression", min_change=0.5)
    if which == "free":
        return Case(which, generate(seed + 500 + i, n, interval_s, noise), settings, (), 0)
    if which == "two_x":
        shifts = random_shifts(seed + 300 + i, n, interval_s, factor_range=(2.0, 2.0), duration_range_s=(3600, 3600))
        series = generate(seed + 400 + i, n, interval_s, noise, shifts)
        return Case(which, series, settings, tuple(Event(s.start, s.end, True) for s in shifts), 0)
    shifts = random_shifts(seed + 100 + i, n, interval_s, gap_s=GAP_S)
    events = tuple(Event(s.start, s.end, s.factor >= MIN_FACTOR and s.length >= MIN_SAMPLES_LONG) for s in shifts)
    return Case(which, generate(seed + 200 + i, n, interval_s, noise, shifts), settings, events, GRACE)


def threshold_case(window_h: float, interval_s: float, which: str, i: int, n: int, seed: int, noise: Noise) -> Case:
    q90 = p90_factor(noise)
    noise = replace(noise, level=BOUND_MS / (1.3 * (1 + noise.daily_amplitude) * q90))
    window = window_h * 3600 or window_s(interval_s)
    settings = DetectorSettings(metric="ttft_ms", kind="threshold", percentile=90, above=BOUND_MS, window_s=window)
    if which == "free":
        return Case(which, generate(seed + 800 + i, n, interval_s, noise), settings, (), 0)
    series = generate(seed + 700 + i, n, interval_s, noise, random_shifts(seed + 600 + i, n, interval_s, gap_s=GAP_S))
    return Case(which, series, settings, breach_events(series, q90), GRACE + round(window / interval_s))


def error_case(kind: str, interval_s: float, which: str, i: int, n: int, seed: int, noise: Noise) -> Case:
    window = window_s(interval_s)
    if kind == "threshold":
        settings = DetectorSettings(metric="error_rate", kind="threshold", above=ERROR_BOUND, window_s=window)
    else:
        settings = DetectorSettings(metric="error_rate", kind="regression", min_change=0.5, window_s=window)
    if which == "free":
        return Case(which, generate(seed + 1100 + i, n, interval_s, noise), settings, (), 0)
    bursts = random_bursts(seed + 900 + i, n, interval_s, gap_s=GAP_S)
    events = tuple(
        Event(b.start, b.end, b.error_rate >= MIN_FACTOR * ERROR_BOUND and b.length >= MIN_SAMPLES_LONG) for b in bursts
    )
    series = generate(seed + 1000 + i, n, interval_s, noise, bursts=bursts)
    return Case(which, series, settings, events, GRACE + round(window / interval_s))


def p90_factor(noise: Noise) -> float:
    """The true p90 of noise x spike, as a multiple of the level (bisection on the mixture's CDF)."""
    lo, hi = math.log(noise.spike_min), math.log(noise.spike_max)

    def cdf(q: float) -> float:
        spikes = sum(_phi((math.log(q) - (lo + (hi - lo) * (k + 0.5) / 200)) / noise.sigma) for k in range(200)) / 200
        return (1 - noise.spike_rate) * _phi(math.log(q) / noise.sigma) + noise.spike_rate * spikes

    a, b = 1.0, 10.0
    for _ in range(60):
        mid = (a + b) / 2
        a, b = (mid, b) if cdf(mid) < 0.9 else (a, mid)
    return a


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def breach_events(series: Series, q90: float) -> tuple[Event, ...]:
    """Stretches where the true p90 (level x cycle x shift x q90) is over the bound.

    Eligible when at least 12 of its samples have a true p90 of 1.1x the bound or more.
    """
    events, start, clear = [], None, 0
    for i, level in enumerate([*series.typical_levels(), 0.0]):
        p90 = level * q90
        if p90 > BOUND_MS:
            if start is None:
                start, clear = i, 0
            clear += p90 >= 1.1 * BOUND_MS
        elif start is not None:
            events.append(Event(start, i, clear >= MIN_SAMPLES_LONG))
            start = None
    return tuple(events)


Builder = Callable[..., Case]
KINDS: tuple[tuple[str, Builder, tuple[str, ...]], ...] = (
    ("regression ttft_ms", partial(regression_case, "ttft_ms"), ("shifted", "two_x", "free")),
    ("regression tps (down)", partial(regression_case, "tps"), ("shifted", "two_x", "free")),
    ("threshold ttft_ms p90 > 2 s, 15 min", partial(threshold_case, 0.0), ("shifted", "free")),
    ("threshold ttft_ms p90 > 2 s, 4 h", partial(threshold_case, 4.0), ("shifted", "free")),
    ("threshold error_rate > 20%", partial(error_case, "threshold"), ("shifted", "free")),
    ("regression error_rate", partial(error_case, "regression"), ("shifted", "free")),
)


def plan(
    scales: dict[int, Scale], seed: int, noise: Noise, kinds=KINDS
) -> list[tuple[str, int, list[Callable[[], Case]]]]:
    """Every (kind, cadence) with the recipes of its cases: built in the worker, so only recipes are pickled."""
    out: list[tuple[str, int, list[Callable[[], Case]]]] = []
    for name, builder, sets in kinds:
        for interval_s, scale in scales.items():
            months = {"shifted": scale.shifted_months, "two_x": scale.two_x_months, "free": scale.free_months}
            recipes = [
                partial(builder, interval_s, which, i, n, seed, noise)
                for which in sets
                for i, n in chunks(months[which], interval_s)
            ]
            out.append((name, interval_s, recipes))
    return out


def run(scales: dict[int, Scale], jobs: int = 2, sigma: float = 0.25, seed: int = 1, kinds=KINDS, tuning=()):
    """[(kind, sampling interval, Score)] for every kind at every cadence."""
    work = partial(run_case, tuning=tuple(tuning))
    planned = plan(scales, seed, Noise(sigma=sigma), kinds)
    recipes = [r for _, _, rs in planned for r in rs]
    if jobs > 1:
        # The longest series first, so no worker is left alone with a big one at the end.
        order = sorted(range(len(recipes)), key=lambda k: -recipes[k].args[-3])  # (..., i, n, seed, noise)
        with ProcessPoolExecutor(jobs) as pool:
            done = dict(zip(order, pool.map(work, [recipes[k] for k in order], chunksize=1), strict=True))
        results = [done[k] for k in range(len(recipes))]
    else:
        results = [work(r) for r in recipes]
    out, at = [], 0
    for name, interval_s, rs in planned:
        out.append((name, interval_s, score(results[at : at + len(rs)])))
        at += len(rs)
    return out


def table(rows: Sequence[tuple[str, int, Score]]) -> str:
    lines = [
        "| alert kind | sampling | precision | recall | F1 | eligible events | delay p50 | delay p90 "
        "| 2x delay p50 | 2x delay p90 | 2x within 3 | false alarms / target-month |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, interval_s, s in rows:
        within = s.two_x_within_3
        lines.append(
            f"| {name} | {interval_s // 60} min | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} | {s.eligible} "
            f"| {fmt(s.delay(0.5))} | {fmt(s.delay(0.9))} | {fmt(s.delay(0.5, True))} | {fmt(s.delay(0.9, True))} "
            f"| {'—' if within is None else f'{100 * within:.0f}%'} "
            f"| {s.false_per_month:.2f} ({s.false_alarms} in {s.months:.0f}) |"
        )
    return "\n".join(lines)
