"""Detection on real latency series, beside the online change detectors people already use.

    .venv/bin/python -m benchmarks.detection_real [--data DIR] [--min-change 0.2] [--jobs N]

Data (`--data`, default `benchmarks/detection/real/nab`): one `NAME.csv` per series
(`timestamp,value`, UTC `YYYY-MM-DD HH:MM:SS`, any sampling) and one `labels.json`:
`{NAME: {"windows": [[start, end], ...], "changes": [ts, ...], "source": "..."}}`: each
window is a labelled event, `changes` the labelled point inside it. The shipped directory holds the
three latency-like series of the Numenta Anomaly Benchmark (NAB, github.com/numenta/NAB, MIT
licence, its LICENSE.txt beside them): `realKnownCause/ec2_request_latency_system_failure`
(an EC2 request latency, 5-minute) and `realTraffic/TravelTime_387` and `_451` (road
travel times, about 10-minute), with NAB's combined windows and labels. Any directory in the
same layout runs the same way.

Two tables:

1. Labelled events. Every detector is run over each whole series. An alarm inside a
   window (or within 3 samples after it) is a true positive, the first per window; any
   other alarm is a false one. A window counts for recall when the level after its
   labelled point is up by 20% or more (median of the 12 samples from the label against
   the 24 before it: its "shift"); an alarm in another window is not false, a miss there
   is not counted. Delay: samples from the labelled point to the alarm (0 when it is at
   or before the point). False alarms per series-month: false alarms over the series' span.
2. Steps on real noise. A clean step of each size (1.2x to 3x, 2 hours long) is laid
   on each series every 12 hours, away from the labelled windows, and each detector
   continues from its state just before the step (`copy.deepcopy` of it, run on the
   untouched series up to there): delay in samples from the first shifted one, and how
   many it caught within the 2 hours and 3 samples after. The quiet series (the EC2
   latency: noise about 4%) is where a clean step must be caught fast.

Peers, fed the log of each value (latency noise is multiplicative) and, like our alerts,
silent for 2 hours after an alarm (a firing alert does not page again):

- river's `PageHinkley` (mode "up"), its threshold calibrated;
- river's `ADWIN`, its delta calibrated; an alarm counts only when the newest 5 values are
  above the median of the 24 before them (ADWIN is two-sided);
- a rolling-median CUSUM: baseline the median of 48 samples ending 12 samples back, scale
  their MAD (at least 2%), z-scores clipped at 5, drift 1 sd, threshold calibrated.

Calibration: each peer takes the most sensitive setting (on a grid) whose false alarms on the
labelled series are no more than our detector's, so they are compared at a matched
false-alarm rate. Our detector is the `regression` rule on the value with `--min-change`
(20% by default: the events are shifts of 20% or more) and the default `min_duration`.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import math
import os
import statistics
import sys
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from monitor.alerts.detectors.detect import DetectorSettings, SeriesDetector

DEFAULT_DATA = Path(__file__).parent / "detection" / "real" / "nab"
MONTH_S = 30 * 86400.0
GRACE = 3
ELIGIBLE_SHIFT = 1.2
REFRACTORY_S = 2 * 3600.0
STEP_FACTORS = (1.2, 1.5, 2.0, 2.15, 3.0)
STEP_S = 2 * 3600.0
STEP_SPACING_S = 12 * 3600.0
WARMUP_S = 2 * 86400.0


# ------------------------------------------------------------------ data
@dataclass(frozen=True)
class RealSeries:
    name: str
    times: tuple[float, ...]
    values: tuple[float, ...]
    windows: tuple[tuple[int, int], ...]  # sample indices, end exclusive
    points: tuple[int, ...]  # the labelled point of each window
    shifts: tuple[float, ...]  # level after the point / level before it


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text[:19]).replace(tzinfo=UTC).timestamp()


def load(data: Path) -> list[RealSeries]:
    labels = json.loads((data / "labels.json").read_text())
    out = []
    for name in sorted(labels):
        with (data / f"{name}.csv").open() as fh:
            rows = [(_epoch(r["timestamp"]), float(r["value"])) for r in csv.DictReader(fh)]
        times = tuple(t for t, _ in rows)
        values = tuple(v for _, v in rows)

        def index(ts: float, times=times) -> int:
            return next((i for i, t in enumerate(times) if t >= ts), len(times))

        windows = tuple((index(_epoch(a)), index(_epoch(b))) for a, b in labels[name]["windows"])
        points = []
        for start, end in windows:
            inside = [index(_epoch(c)) for c in labels[name].get("changes", []) if start <= index(_epoch(c)) < end]
            points.append(inside[0] if inside else start)
        shifts = tuple(
            statistics.median(values[p : p + 12]) / statistics.median(values[max(0, p - 24) : p]) for p in points
        )
        out.append(RealSeries(name, times, values, windows, tuple(points), shifts))
    return out


# ------------------------------------------------------------- detectors
class Ours:
    def __init__(self, min_change: float) -> None:
        self.det = SeriesDetector(DetectorSettings(metric="ttft_ms", kind="regression", min_change=min_change))

    def step(self, ts: float, value: float) -> bool:
        return self.det.observe(ts, value).alarm_started


class Refractory:
    """A peer's alarm, then 2 hours of silence and a fresh start (a firing alert pages once)."""

    def __init__(self) -> None:
        self.quiet_until = -math.inf

    def fire(self, ts: float) -> bool:
        if ts < self.quiet_until:
            return False
        self.quiet_until = ts + REFRACTORY_S
        self.reset()
        return True

    def reset(self) -> None: ...


class PageHinkleyPeer(Refractory):
    def __init__(self, threshold: float) -> None:
        super().__init__()
        self.threshold = threshold
        self.reset()

    def reset(self) -> None:
        from river.drift import PageHinkley

        self.ph = PageHinkley(min_instances=30, delta=0.005, threshold=self.threshold, mode="up")

    def step(self, ts: float, value: float) -> bool:
        if ts < self.quiet_until:
            self.ph.update(math.log(value))
            return False
        self.ph.update(math.log(value))
        return self.ph.drift_detected and self.fire(ts)


class AdwinPeer(Refractory):
    def __init__(self, delta: float) -> None:
        super().__init__()
        self.delta = delta
        self.recent: deque[float] = deque(maxlen=29)
        self.reset()

    def reset(self) -> None:
        from river.drift import ADWIN

        self.adwin = ADWIN(delta=self.delta)

    def step(self, ts: float, value: float) -> bool:
        x = math.log(value)
        self.recent.append(x)
        self.adwin.update(x)
        if not self.adwin.drift_detected or len(self.recent) < 29:
            return False
        xs = list(self.recent)
        up = min(xs[-5:]) > statistics.median(xs[:-5])
        return up and self.fire(ts)


class MedianCusumPeer(Refractory):
    def __init__(self, threshold: float) -> None:
        super().__init__()
        self.threshold = threshold
        self.history: deque[float] = deque(maxlen=60)
        self.s = 0.0

    def reset(self) -> None:
        self.s = 0.0

    def step(self, ts: float, value: float) -> bool:
        x = math.log(value)
        self.history.append(x)
        if len(self.history) < 60:
            return False
        base = list(self.history)[:48]
        med = statistics.median(base)
        scale = max(0.02, 1.4826 * statistics.median(abs(b - med) for b in base))
        z = min(5.0, (x - med) / scale)
        self.s = max(0.0, self.s + z - 1.0)
        return self.s > self.threshold and self.fire(ts)


PEERS = {
    "PageHinkley": (PageHinkleyPeer, tuple(0.05 * 1.25**k for k in range(45))),
    "ADWIN": (AdwinPeer, tuple(10.0**-k for k in range(1, 16))),
    "median CUSUM": (MedianCusumPeer, tuple(2.0 * 1.15**k for k in range(30))),
}


def make(who: str, setting: float):
    return Ours(setting) if who == "firsttoken" else PEERS[who][0](setting)


# --------------------------------------------------------------- scoring
@dataclass(frozen=True)
class Tally:
    tp: int
    fp: int
    eligible: int
    detected: int
    delays: tuple[int, ...]
    months: float
    by_shift: tuple[tuple[str, int, int, tuple[int, ...]], ...]  # (bin, eligible-or-not events, caught, delays)
    caught: tuple[tuple[str, int, int], ...] = ()  # (series, window, delay) of each eligible event caught

    @property
    def f1(self) -> float:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        recall = self.detected / self.eligible if self.eligible else 1.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


SHIFT_BINS = (("< 1.2x", 0.0, 1.2), ("1.2-2x", 1.2, 2.0), (">= 2x", 2.0, math.inf))


def alarms_on(series: RealSeries, who: str, setting: float) -> tuple[int, ...]:
    det = make(who, setting)
    return tuple(i for i, (t, v) in enumerate(zip(series.times, series.values, strict=True)) if det.step(t, v))


def tally(series_list: list[RealSeries], alarms: list[tuple[int, ...]]) -> Tally:
    tp = fp = eligible = detected = 0
    delays: list[int] = []
    caught: list[tuple[str, int, int]] = []
    months = 0.0
    bins = {label: [0, 0, []] for label, _, _ in SHIFT_BINS}
    for s, found in zip(series_list, alarms, strict=True):
        months += (s.times[-1] - s.times[0]) / MONTH_S
        first: dict[int, int] = {}
        for a in found:
            k = next((k for k, (lo, hi) in enumerate(s.windows) if lo <= a < hi + GRACE), None)
            if k is None:
                fp += 1
            elif k in first:
                fp += s.shifts[k] >= ELIGIBLE_SHIFT  # a second page for one event
            else:
                first[k] = a
                tp += s.shifts[k] >= ELIGIBLE_SHIFT
        for k, shift in enumerate(s.shifts):
            label = next(lb for lb, lo, hi in SHIFT_BINS if lo <= shift < hi)
            bins[label][0] += 1
            if k in first:
                bins[label][1] += 1
                bins[label][2].append(max(0, first[k] - s.points[k]))
            if shift >= ELIGIBLE_SHIFT:
                eligible += 1
                if k in first:
                    detected += 1
                    delays.append(max(0, first[k] - s.points[k]))
                    caught.append((s.name, k, delays[-1]))
    by_shift = tuple((lb, n, c, tuple(d)) for lb, (n, c, d) in bins.items())
    return Tally(tp, fp, eligible, detected, tuple(delays), months, by_shift, tuple(caught))


def calibrate(series_list: list[RealSeries], who: str, budget: int, pool) -> float:
    """The most sensitive setting on the peer's grid with no more false alarms than `budget`."""
    grid = PEERS[who][1]
    fits = []
    for setting in grid:
        alarms = list(pool.map(partial(alarms_on, who=who, setting=setting), series_list))
        t = tally(series_list, alarms)
        if t.fp <= budget:
            fits.append(setting)
            break  # the grid runs from most to least sensitive
    return fits[0] if fits else grid[-1]


# ------------------------------------------------------ steps on real noise
def step_delays(series: RealSeries, who: str, setting: float) -> dict[float, list[int | None]]:
    """Delay of each detector to clean steps laid on the series (None: missed)."""
    times, values = series.times, series.values
    starts, at = [], times[0] + WARMUP_S
    while at + STEP_S < times[-1]:
        i = next(k for k, t in enumerate(times) if t >= at)
        near = any(lo - 288 <= i <= hi + 288 for lo, hi in series.windows)
        if not near:
            starts.append(i)
        at += STEP_SPACING_S
    out: dict[float, list[int | None]] = {f: [] for f in STEP_FACTORS}
    det = make(who, setting)
    k = 0
    for start in starts:
        while k < start:
            det.step(times[k], values[k])
            k += 1
        end = next((j for j in range(start, len(times)) if times[j] >= times[start] + STEP_S), len(times))
        for factor in STEP_FACTORS:
            trial = copy.deepcopy(det)
            hit = None
            for j in range(start, min(len(times), end + GRACE)):
                shifted = values[j] * (factor if j < end else 1.0)
                if trial.step(times[j], shifted):
                    hit = j - start
                    break
            out[factor].append(hit)
    return out


# ------------------------------------------------------------------- main
def median_or_dash(xs) -> str:
    return "—" if not xs else f"{statistics.median(xs):g}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--min-change", type=float, default=0.2)
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    series_list = load(args.data)
    with ProcessPoolExecutor(args.jobs) as pool:
        ours = list(pool.map(partial(alarms_on, who="firsttoken", setting=args.min_change), series_list))
        mine = tally(series_list, ours)
        settings = {"firsttoken": args.min_change}
        tallies = {"firsttoken": mine}
        for who in PEERS:
            settings[who] = calibrate(series_list, who, mine.fp, pool)
            alarms = list(pool.map(partial(alarms_on, who=who, setting=settings[who]), series_list))
            tallies[who] = tally(series_list, alarms)
        steps = {
            who: list(pool.map(partial(step_delays, who=who, setting=settings[who]), series_list)) for who in settings
        }
    print(f"Labelled events ({', '.join(s.name for s in series_list)}):\n")
    print("| detector | setting | F1 | caught (shift >= 1.2x) | delay p50 | delay p50 where both caught "
          "(it / firsttoken) | false alarms | per series-month | < 1.2x caught | 1.2-2x caught, delay p50 "
          "| >= 2x caught, delay p50 |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    ours_caught = {(name, k): d for name, k, d in mine.caught}
    for who, t in tallies.items():
        cells = {lb: (n, c, d) for lb, n, c, d in t.by_shift}
        small, mid, big = (cells[lb] for lb, _, _ in SHIFT_BINS)
        both = [(d, ours_caught[(name, k)]) for name, k, d in t.caught if (name, k) in ours_caught]
        shared = f"{median_or_dash([a for a, _ in both])} / {median_or_dash([b for _, b in both])} ({len(both)})"
        print(
            f"| {who} | {settings[who]:.3g} | {t.f1:.2f} | {t.detected}/{t.eligible} | {median_or_dash(t.delays)} "
            f"| {'—' if who == 'firsttoken' else shared} | {t.fp} | {t.fp / t.months:.2f} | {small[1]}/{small[0]} "
            f"| {mid[1]}/{mid[0]}, {median_or_dash(mid[2])} | {big[1]}/{big[0]}, {median_or_dash(big[2])} |"
        )
    print("\nClean 2-hour steps on real noise: caught/laid, delay p50 (samples from the first shifted one):\n")
    print("| series | detector | " + " | ".join(f"{f:g}x" for f in STEP_FACTORS) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in STEP_FACTORS) + " |")
    for n, s in enumerate(series_list):
        for who in settings:
            by_factor = steps[who][n]
            cells = []
            for f in STEP_FACTORS:
                got = [d for d in by_factor[f] if d is not None]
                cells.append(f"{len(got)}/{len(by_factor[f])}, {median_or_dash(got)}")
            print(f"| {s.name} | {who} | " + " | ".join(cells) + " |")
    print(f"\ndata {args.data}; firsttoken: regression, min_change {args.min_change:g}; peers calibrated to "
          f"<= {mine.fp} false alarms; {args.jobs} processes, {time.perf_counter() - started:.0f} s.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
