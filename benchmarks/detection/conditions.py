"""Detection per condition on the second generator (issue 13), tuned and held-out seeds apart.

    .venv/bin/python -m benchmarks.detection --suite conditions [--seeds tune|held-out|both] [--quick] [--jobs N]

While tuning, `--seeds tune` runs the tune seeds only, so the held-out ones stay unseen.

Series from `synthetic_b.py` (AR(1) Student-t noise,
clustered 3-12x spikes on 1.5% of samples, a business-hours cycle, shifts of
1.5-3x lasting 1 hour to a day, reached over 0-3 samples), sampled every
5 minutes, one row per noise level (sd of the log 0.1 to 0.4) and seed range:

- "tune" seeds (1-999) are the ones the detector's settings were chosen on;
- "held-out" seeds (1001-1999) were run only to report: the acceptance
  figures (F1 >= 0.92, a 2x shift within 3 samples at median, <= 1 false
  alarm per target-month) are read on them.

The rule is docs/alerting.md's `regression` on ttft_ms with min_change 50%; every
shift is an event (all are >= 1.5x and >= 12 samples). Scoring is
`scoring.score`: an alarm inside a shift or within 3 samples after it is a
true positive (the first per shift), any other a false one; 2x delay comes
from a separate set of exactly-2x one-hour steps; false alarms per
target-month from series with no shift at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial

from benchmarks.detection.scoring import GRACE, MONTH_S, Case, Event, Score, fmt, run_case, score
from benchmarks.detection.synthetic_b import Conditions, generate_b, plan_changes
from monitor.alerts.detectors.detect import DetectorSettings

INTERVAL_S = 300.0
SIGMAS = (0.1, 0.2, 0.3, 0.4)
SEED_SETS = {"tune": 1, "held-out": 1001}
SAMPLES_PER_MONTH = round(MONTH_S / INTERVAL_S)


@dataclass(frozen=True)
class Months:
    shifted: int
    two_x: int
    free: int


FULL = Months(shifted=6, two_x=2, free=12)
QUICK = Months(shifted=2, two_x=1, free=3)


def build(which: str, k: int, seed: int, sigma: float) -> Case:
    conditions = Conditions(sigma=sigma)
    settings = DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5)
    series_seed = seed * 1000 + k * 10 + round(sigma * 10)
    n = SAMPLES_PER_MONTH
    if which == "free":
        return Case(which, generate_b(series_seed, n, INTERVAL_S, conditions), settings, (), 0)
    if which == "two_x":
        changes = plan_changes(
            series_seed,
            n,
            INTERVAL_S,
            factor_range=(2.0, 2.0),
            duration_range_s=(3600.0, 3600.0),
            gap_range_s=(6 * 3600.0, 12 * 3600.0),
            max_ramp=0,
            max_widen=1.0,
        )
        series = generate_b(series_seed, n, INTERVAL_S, conditions, changes)
        return Case(which, series, settings, tuple(Event(c.start, c.end, True) for c in changes), 0)
    changes = plan_changes(series_seed, n, INTERVAL_S)
    series = generate_b(series_seed, n, INTERVAL_S, conditions, changes)
    return Case(which, series, settings, tuple(Event(c.start, c.end, True) for c in changes), GRACE)


def plan(months: Months, seed_sets: Sequence[str] = tuple(SEED_SETS)) -> list[tuple[str, float, list]]:
    out = []
    for set_name in seed_sets:
        seed = SEED_SETS[set_name]
        for sigma in SIGMAS:
            recipes = [
                partial(build, which, k, seed, sigma)
                for which, count in (("shifted", months.shifted), ("two_x", months.two_x), ("free", months.free))
                for k in range(count)
            ]
            out.append((set_name, sigma, recipes))
    return out


def run(
    months: Months = FULL, jobs: int = 2, tuning=(), seed_sets: Sequence[str] = tuple(SEED_SETS)
) -> list[tuple[str, float | None, Score]]:
    """[(seed set, sigma or None for all levels together, Score)]; `seed_sets` ("tune" while tuning) picks the seeds."""
    planned = plan(months, seed_sets)
    recipes = [r for _, _, rs in planned for r in rs]
    work = partial(run_case, tuning=tuple(tuning))
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(work, recipes, chunksize=1))
    else:
        results = [work(r) for r in recipes]
    out, at, by_set = [], 0, {}
    for set_name, sigma, rs in planned:
        chunk = results[at : at + len(rs)]
        at += len(rs)
        by_set.setdefault(set_name, []).extend(chunk)
        out.append((set_name, sigma, score(chunk)))
    for set_name, chunk in by_set.items():
        out.append((set_name, None, score(chunk)))
    return out


def table(rows: Sequence[tuple[str, float | None, Score]]) -> str:
    lines = [
        "| seeds | noise sd (log) | precision | recall | F1 | shifts | delay p50 | delay p90 "
        "| 2x delay p50 | 2x within 3 | false alarms / target-month |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for set_name, sigma, s in rows:
        within = s.two_x_within_3
        label = "**held-out**" if set_name == "held-out" else set_name
        lines.append(
            f"| {label} | {'all' if sigma is None else f'{sigma:g}'} | {s.precision:.3f} | {s.recall:.3f} "
            f"| {s.f1:.3f} | {s.eligible} | {fmt(s.delay(0.5))} | {fmt(s.delay(0.9))} | {fmt(s.delay(0.5, True))} "
            f"| {'—' if within is None else f'{100 * within:.0f}%'} "
            f"| {s.false_per_month:.2f} ({s.false_alarms} in {s.months:.0f}) |"
        )
    return "\n".join(lines)
