"""What any detector could score on the third generator: an oracle beside the shipped detector (issue 21 item 7).

    .venv/bin/python -m benchmarks.detection_ceiling [--quick] [--jobs N]

`detection_fresh.py` scores the shipped detector on `detection/synthetic_c.py` (and
`detection/synthetic_d.py`, with `--generator d`). This
asks what the goals there (F1 >= 0.92, <= 1 false page per target-month)
allow at all. The oracle is told what no detector is: each sample's true
noise-free level (daily cycle and weekends included, shifts excluded) and
its true noise sd (volatile hours included). It runs a bank of Page CUSUMs
for shifts from 1.5x up (1.3x apart, as `regression.py`), each sample's
evidence clipped at 3 sds so that a spike is one sample's worth; an alarm
opens an alert that stays open until a recovery CUSUM ("back at the level"
against "still 1.5x") passes 8 nats, as the detector's alerts do. Its one
threshold is set by bisection on the generator's own shift-free months to
1 false alarm per target-month, the goal's budget. It is then scored on
the same cases as `detection_fresh.py`, by the same `benchmarks.detection.scoring.score`.

A detector that does not know the level or the noise can only do worse
than this column, so a goal the oracle misses is out of reach on this
data; the gap between the oracle and the detector is what is left to win.
"""

from __future__ import annotations

import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial

from benchmarks.detection.scoring import Result, run_case, score
from benchmarks.detection_fresh import FULL, QUICK, SIGMAS, arguments, recipes

BANK = tuple(math.log(1.5) * 1.3**k for k in range(8))  # 1.5x .. ~9x
CLIP_SDS = 3.0
RECOVER_NATS = 8.0
FALSE_PER_MONTH = 1.0


def oracle_alarms(case, h: float) -> tuple[int, ...]:
    series = case.series
    charts, firing, recovery, out = [0.0] * len(BANK), False, 0.0, []
    for k, (value, level, sd) in enumerate(zip(series.values, series.level_log, series.sd, strict=True)):
        if value is None:
            continue
        z = min(CLIP_SDS, (math.log(value) - level) / sd)
        if firing:
            d = BANK[0] / sd
            recovery = max(0.0, recovery - (d * z - d * d / 2))
            if recovery > RECOVER_NATS:
                firing, recovery = False, 0.0
            continue
        for j, mu in enumerate(BANK):
            d = mu / sd
            charts[j] = max(0.0, charts[j] + d * z - d * d / 2)
        if max(charts) > h:
            out.append(k)
            firing, charts = True, [0.0] * len(BANK)
    return tuple(out)


def oracle_result(recipe, h: float) -> Result:
    case = recipe()
    n = len(case.series.values)
    return Result(case.set, case.events, case.grace, n, case.series.interval_s, oracle_alarms(case, h))


def calibrate(free, jobs: int) -> float:
    """The oracle's threshold for FALSE_PER_MONTH on the shift-free months (bisection, 0.05 nats)."""
    lo, hi = 2.0, 40.0
    with ProcessPoolExecutor(jobs) as pool:
        while hi - lo > 0.05:
            mid = (lo + hi) / 2
            results = list(pool.map(partial(oracle_result, h=mid), free))
            if score(results).false_per_month > FALSE_PER_MONTH:
                lo = mid
            else:
                hi = mid
    return hi


def row(label: str, sigma: float, main_set, at_min) -> str:
    s, m = score(main_set), score(at_min)
    return (
        f"| {sigma:g} | {label} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} | {s.delay(0.5, True)} "
        f"| {m.two_x_caught} | {s.false_per_month:.2f} |"
    )


def main(argv=None) -> int:
    args = arguments(argv, __doc__)
    months = QUICK if args.quick else FULL
    started = time.perf_counter()
    print(
        "| noise sd (log) | who | precision | recall | F1 | 2x delay p50 | 1.5x caught | false alarms / target-month |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for sigma in SIGMAS:
        sets = recipes(sigma, months, args.generator, args.min_duration_s)
        h = calibrate(sets["free"], args.jobs)
        with ProcessPoolExecutor(args.jobs) as pool:
            oracle = {w: list(pool.map(partial(oracle_result, h=h), rs)) for w, rs in sets.items()}
            detector = {w: list(pool.map(run_case, rs, chunksize=1)) for w, rs in sets.items()}
        for label, results in ((f"oracle (h {h:.2f})", oracle), ("detector", detector)):
            main_set = results["shifted"] + results["two_x"] + results["free"]
            print(row(label, sigma, main_set, results["at_min"]))
    print(f"\ngenerator {args.generator} (benchmarks/detection/synthetic_{args.generator}.py), 5-minute sampling, "
          "the seeds of detection_fresh.py; "
          f"{args.jobs} processes, {time.perf_counter() - started:.0f} s.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
