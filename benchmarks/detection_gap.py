"""Where the detector's 2x delay goes, beside the optimal-CUSUM floor (issue 21 item 7).

    .venv/bin/python -m benchmarks.detection_gap [--jobs N] [--months M]

`detection_floor.py` gives the floor: Page's CUSUM for exactly a 2x shift,
knowing the level and the noise sd, on iid Gaussian noise, threshold set for
1 false alarm per target-month at 5-minute sampling. `detection_fresh.py`
scores the detector on a realistic generator. This one walks from the
floor's world to a realistic one a step at a time, so the gap between the
two can be read off ingredient by ingredient:

- `gauss`: iid Gaussian noise of sd sigma in log space, a flat level: the
  floor's own world;
- `+spikes`: 1% of samples x a Pareto(1.6) factor capped at 25x;
- `+cycle`: and a daily cycle (+-20%, two harmonics) and quieter weekends;
- `+volatile`: and a random quarter of the hours at 1.4x the noise sd.

Each world is generated here (it shares nothing with the tuned generators
or with `detection/synthetic_c.py`), and run through a ladder of CUSUMs, each given
less than the one before, each threshold re-set on this world's own
shift-free series to 1 false alarm per target-month (the floor's rule),
each sample's evidence clipped at 3 sds so one spike is one sample:

- `true level`: the floor's 2x CUSUM handed the true level (cycle
  included) and the nominal sigma: what a detector that knew the level
  could do here;
- `+ estimated level`: the same, but the level is what a detector has, the
  median of the trailing 48 samples (4 hours) before the newest 12, and
  the sd their IQR's (no cycle model: in `+cycle` worlds this column
  pays for it);
- `+ unknown size`: and the shift size unknown, so a bank of charts from
  1.5x up (1.3x apart, as `regression.py`) shares the false-alarm budget;
- `detector`: the shipped `regression` rule (min_change 50%) through
  `SeriesDetector`, exactly as the service runs it (its own thresholds,
  not re-set here), with its false alarms per target-month.

Per world and noise level: 2x delay p50 (samples after the first shifted
one; one-hour steps, 6-12 hours apart) and false alarms per target-month.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from benchmarks.detection_floor import floor_delay
from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector

INTERVAL_S = 300.0
DAY_S = 86400.0
MONTH_S = 30 * DAY_S
N = round(MONTH_S / INTERVAL_S)
EPOCH_S = 1_767_225_600.0
SIGMAS = (0.2, 0.3, 0.4)
WORLDS = ("gauss", "+spikes", "+cycle", "+volatile")
SEED = 9100  # none of the generators was ever run on this range
CLIP_SDS = 3.0


@dataclass(frozen=True)
class World:
    values: tuple[float | None, ...]
    level: tuple[float, ...]  # log of the noise-free level, cycle included, shift excluded
    starts: tuple[int, ...]  # 2x steps: first sample of each (empty: a shift-free series)
    length: int


def make_world(world: str, sigma: float, seed: int, shifted: bool) -> World:
    rng = random.Random(f"gap-{world}-{sigma}-{seed}-{shifted}")
    spikes, cycle, volatile = (WORLDS.index(world) >= k for k in (1, 2, 3))
    length = 12  # one hour
    starts, shift = [], [0.0] * N
    if shifted:
        at = round(DAY_S / INTERVAL_S)
        while True:
            at += rng.randint(72, 144)
            if at + length >= N:
                break
            starts.append(at)
            for k in range(at, at + length):
                shift[k] = math.log(2.0)
            at += length
    base = math.log(rng.uniform(200.0, 2000.0))
    phase = rng.uniform(0, 2 * math.pi)
    hot_hours = {h for h in range(N // 12 + 1) if rng.random() < 0.25}
    values, level = [], []
    for k in range(N):
        t = EPOCH_S + k * INTERVAL_S
        day = (t % DAY_S) / DAY_S * 2 * math.pi
        lv = base
        if cycle:
            lv += 0.12 * math.sin(day + phase) + 0.08 * math.sin(2 * day + 0.7 * phase)
            lv -= 0.1 if int((t // DAY_S + 4) % 7) >= 5 else 0.0
        sd = sigma * (1.4 if volatile and k // 12 in hot_hours else 1.0)
        x = lv + shift[k] + rng.gauss(0.0, sd)
        if spikes and rng.random() < 0.01:
            x += math.log(min(25.0, rng.paretovariate(1.6)))
        level.append(lv)
        values.append(math.exp(x))
    return World(tuple(values), tuple(level), tuple(starts), length)


def detector_alarms(w: World) -> list[int]:
    det = SeriesDetector(DetectorSettings(metric="ttft_ms", kind="regression", min_change=0.5))
    return [k for k, v in enumerate(w.values) if det.observe(EPOCH_S + k * INTERVAL_S, v).alarm_started]


BANK = tuple(math.log(1.5) * 1.3**k for k in range(6))  # 1.5x .. ~5.5x, as regression.shift_grid
WINDOW, RECENT = 48, 12


def residuals(w: World, sigma: float, estimated: bool) -> list[tuple[float, float]]:
    """(log value - level, sd) per sample: the true ones, or a trailing window's median and IQR sd."""
    logs = [math.log(v) for v in w.values]
    if not estimated:
        return [(x - lv, sigma) for x, lv in zip(logs, w.level, strict=True)]
    out = []
    for k, x in enumerate(logs):
        window = sorted(logs[max(0, k - RECENT - WINDOW) : max(0, k - RECENT)])
        if len(window) < WINDOW:
            out.append((0.0, sigma))
            continue
        iqr_sd = (window[3 * WINDOW // 4] - window[WINDOW // 4]) / 1.349
        out.append((x - statistics.median(window), iqr_sd))
    return out


def increments(resid: list[tuple[float, float]], mus: tuple[float, ...]) -> list[list[float]]:
    """Each chart's evidence per sample (one list per shift size mu), clipped at CLIP_SDS sds."""
    out = []
    for mu in mus:
        chart = []
        for r, sd in resid:
            d, z = mu / sd, min(CLIP_SDS, r / sd)
            chart.append(d * z - d * d / 2)
        out.append(chart)
    return out


def cusum_alarms(charts: list[list[float]], h: float) -> list[int]:
    """Alarms of a bank of CUSUMs sharing one threshold; all restart after an alarm."""
    sums, out = [0.0] * len(charts), []
    for k in range(len(charts[0])):
        sums = [max(0.0, s + c[k]) for s, c in zip(sums, charts, strict=True)]
        if max(sums) > h:
            out.append(k)
            sums = [0.0] * len(charts)
    return out


def delays(alarms: list[int], w: World) -> tuple[list[int], int]:
    got, missed = [], 0
    for start in w.starts:
        first = next((a for a in alarms if start <= a < start + w.length + 3), None)
        if first is None:
            missed += 1
        else:
            got.append(first - start)
    return got, missed


LADDER = ("true level", "+ estimated level", "+ unknown size")


def run_one(job: tuple[str, float, int, bool]):
    world, sigma, seed, shifted = job
    w = make_world(world, sigma, seed, shifted)
    true, estimated = residuals(w, sigma, False), residuals(w, sigma, True)
    two_x = (math.log(2.0),)
    ladder = {
        "true level": increments(true, two_x),
        "+ estimated level": increments(estimated, two_x),
        "+ unknown size": increments(estimated, BANK),
    }
    return job, ladder, detector_alarms(w), w.starts, w.length


def calibrate(free: list[list[list[float]]], per_month: float = 1.0) -> float:
    """The threshold for `per_month` false alarms on this world's shift-free months."""
    lo, hi = 0.5, 40.0
    for _ in range(24):
        mid = (lo + hi) / 2
        rate = sum(len(cusum_alarms(charts, mid)) for charts in free) / len(free)
        lo, hi = (mid, hi) if rate > per_month else (lo, mid)
    return hi


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--months", type=int, default=3, help="months of 2x steps and of shift-free series each")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    jobs = [
        (w, s, SEED + m, shifted)
        for w in WORLDS
        for s in SIGMAS
        for m in range(args.months)
        for shifted in (True, False)
    ]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run_one, jobs, chunksize=1))
    print(
        "| world | noise sd | floor | " + " | ".join(LADDER) + " | detector (missed) | detector false alarms / month |"
    )
    print("| --- | ---: | ---: | " + " | ".join("---:" for _ in LADDER) + " | ---: | ---: |")
    for world in WORLDS:
        for sigma in SIGMAS:
            mine = [r for r in results if r[0][0] == world and r[0][1] == sigma]
            free = [r for r in mine if not r[0][3]]
            shifted = [r for r in mine if r[0][3]]
            cells = []
            for rung in LADDER:
                h = calibrate([r[1][rung] for r in free])
                got = []
                for _, ladder, _, starts, length in shifted:
                    got += delays(cusum_alarms(ladder[rung], h), World((), (), starts, length))[0]
                cells.append(f"{statistics.median(got):g}" if got else "—")
            det, det_missed = [], 0
            for _, _, alarms, starts, length in shifted:
                got, missed = delays(alarms, World((), (), starts, length))
                det += got
                det_missed += missed
            false = sum(len(r[2]) for r in free) / len(free)
            print(f"| {world} | {sigma:g} | {floor_delay(sigma, INTERVAL_S):g} | " + " | ".join(cells)
                  + f" | {statistics.median(det) if det else '—'} ({det_missed}/{len(det) + det_missed}) | {false:.2f} |")  # fmt: skip
    print(f"\n{args.months} months per world, noise level and set; seeds from {SEED}; "
          f"{args.jobs} processes, {time.perf_counter() - started:.0f} s.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
