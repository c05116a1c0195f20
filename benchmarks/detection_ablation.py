"""What each of the regression detector's safeguards costs and buys (issue 21 item 7).

    .venv/bin/python -m benchmarks.detection_ablation [--months M] [--jobs N]

The detector is slower than an oracle on small shifts (detection_ceiling.py).
This loosens one safeguard at a time and measures both sides of the trade:

- `for_evaluations 1`: a chart's first crossing fires (no second evaluation);
- `spike prior 1%`: the noise model's spike share 0.01 instead of 0.05;
- `no phi discount`: evidence not discounted for autocorrelated residuals;
- `effect gate 0.5`: an alarm needs half of min_change in the median since
  the change began, not 0.8;
- `h_slow 9.5`: the small-shift charts' threshold 9.5 nats instead of 11;
- `true level`: the baseline's level replaced by the generator's true level
  (what a perfect level model would give to the charts; the noise scale
  and autocorrelation are still learned against the detector's own level);
- `true level, white noise`: and no autocorrelation discount, which is its
  right value here (the noise is white around the true level): what a
  perfect level model would give to the noise model too. The detector's
  own phi reads its level's errors and the shifts it has not caught yet as
  correlated noise (phi > 0 in 82% of evaluations on `synthetic_c.py`'s
  shifted months at sd 0.3, 2% on its shift-free ones).

The true level exists only for this world: on `synthetic_b` those two rows
print no false-alarm figure.

Gain is measured on a world generated here (spikes, a two-harmonic daily
cycle, quieter weekends, a quarter of the hours 1.4x noisier: the structure
of `synthetic_c.py`, with other seeds and exactly-1.5x and exactly-2x
two-hour steps); cost is false alarms per target-month on that world's
shift-free months and on the second tune generator's (`synthetic_b`: AR(1)
Student-t noise, drift, a business-hours plateau), the one every threshold
was set on.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from benchmarks.detection.synthetic_b import Conditions, generate_b
from monitor.alerts.detectors import regression
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector

INTERVAL_S = 300.0
DAY_S = 86400.0
N = 8640  # a month of 5-minute samples
EPOCH_S = 1_767_225_600.0
STEP = 24  # two hours
SHIPPED_EFFECT_SHARE = regression.EFFECT_SHARE  # the variant patches the module's constant; this restores it
VARIANTS = ("as shipped", "for_evaluations 1", "spike prior 1%", "no phi discount", "effect gate 0.5", "h_slow 9.5",
            "true level", "true level, white noise")  # fmt: skip
TRUTH = ("true level", "true level, white noise")


def world(seed: int, sigma: float, factor: float | None):
    """(values, true log level, step starts); `factor` None: a shift-free month."""
    rng = random.Random(f"ablation-{seed}-{sigma}-{factor}")
    starts, shift, at = [], [0.0] * N, int(DAY_S / INTERVAL_S)
    while factor is not None:
        at += rng.randint(72, 144)
        if at + STEP >= N:
            break
        starts.append(at)
        shift[at : at + STEP] = [math.log(factor)] * STEP
        at += STEP
    base, phase = math.log(rng.uniform(200.0, 2000.0)), rng.uniform(0.0, 2 * math.pi)
    hot = {h for h in range(N // 12 + 1) if rng.random() < 0.25}
    values, level = [], []
    for k in range(N):
        t = EPOCH_S + k * INTERVAL_S
        day = (t % DAY_S) / DAY_S * 2 * math.pi
        lv = base + 0.12 * math.sin(day + phase) + 0.08 * math.sin(2 * day + 0.7 * phase)
        lv -= 0.1 if int((t // DAY_S + 4) % 7) >= 5 else 0.0
        x = lv + shift[k] + rng.gauss(0.0, sigma * (1.4 if k // 12 in hot else 1.0))
        if rng.random() < 0.01:
            x += math.log(min(25.0, rng.paretovariate(1.6)))
        values.append(math.exp(x))
        level.append(lv)
    return values, level, starts


def alarms(variant: str, points, level=None) -> list[int]:
    settings = DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5)
    settings = {
        "for_evaluations 1": replace(settings, for_evaluations=1),
        "spike prior 1%": replace(settings, spike_weight=0.01),
        "h_slow 9.5": replace(settings, h_slow=9.5),
    }.get(variant, settings)
    det = SeriesDetector(settings)
    impl = det._impl
    if variant in ("no phi discount", "true level, white noise"):
        impl.base.autocorrelation = lambda: 0.0
    if variant in TRUTH and level is not None:
        truth = {EPOCH_S + k * INTERVAL_S: lv for k, lv in enumerate(level)}
        own = impl.base.level
        impl.base.level = lambda ts: truth.get(ts, own(ts))
    regression.EFFECT_SHARE = 0.5 if variant == "effect gate 0.5" else SHIPPED_EFFECT_SHARE
    return [i for i, (t, v) in enumerate(points) if det.observe(t, v).alarm_started]


def job(args):
    variant, kind, sigma, month, factor = args
    if kind == "tune-b":
        points = list(generate_b(6000 + month, N, INTERVAL_S, Conditions(sigma=sigma)).points())
        return len(alarms(variant, points)), None
    values, level, starts = world(month if factor else 300 + month, sigma, factor)
    points = [(EPOCH_S + k * INTERVAL_S, v) for k, v in enumerate(values)]
    found = alarms(variant, points, level)
    if factor is None:
        return len(found), None
    delays = []
    for s in starts:
        hit = next((a for a in found if s <= a < s + STEP + 3), None)
        delays.append(None if hit is None else hit - s)
    return None, delays


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--months", type=int, default=3, help="months of steps per size; twice that shift-free")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    print(
        "| σ | variant | 1.5x caught | 2x caught | 2x delay p50 | false alarms / month, this world | on synthetic_b |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for sigma in (0.3, 0.4):
        for variant in VARIANTS:
            jobs = [(variant, "steps", sigma, m, f) for m in range(args.months) for f in (1.5, 2.0)]
            jobs += [(variant, "free", sigma, m, None) for m in range(2 * args.months)]
            if variant not in TRUTH:  # synthetic_b's true level is not known here
                jobs += [(variant, "tune-b", sigma, m, None) for m in range(2 * args.months)]
            with ProcessPoolExecutor(args.jobs) as pool:
                results = list(pool.map(job, jobs))
            caught = {1.5: [], 2.0: []}
            free = {"free": 0, "tune-b": 0}
            for (_, kind, _, _, factor), (count, delays) in zip(jobs, results, strict=True):
                if delays is not None:
                    caught[factor] += delays
                else:
                    free[kind] += count
            got2 = [d for d in caught[2.0] if d is not None]
            cells = [f"{sum(d is not None for d in caught[f])}/{len(caught[f])}" for f in (1.5, 2.0)]
            months = 2 * args.months
            on_b = "—" if variant in TRUTH else f"{free['tune-b'] / months:.2f}"
            print(
                f"| {sigma:g} | {variant} | {cells[0]} | {cells[1]} | {statistics.median(got2) if got2 else '—'} "
                f"| {free['free'] / months:.2f} | {on_b} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
