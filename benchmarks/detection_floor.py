"""The statistical floor of detection delay (DESIGN §7): an optimal CUSUM tuned to the same false-alarm rate.

The optimal detector of a known shift in known Gaussian noise is Page's
CUSUM on the log-likelihood ratio; nothing detects that shift faster at the
same false-alarm rate (Lorden, Moustakides). For a 2x shift in log space
(mu = ln 2) with noise sd sigma, each sample adds (mu / sigma^2)(x - mu/2).
Its threshold is set here, by simulation, so that the chart raises
`per_month` false alarms per target-month at the sampling interval, and its
delay is measured the way `benchmarks.detection.scoring.score` measures the detector's: samples
after the first shifted one (0 = that sample raised it), median over runs
started from the chart's resting state. It knows the shift size, the noise
and the level exactly, and sees no spikes, no daily cycle: the floor, not a
rival.
"""

from __future__ import annotations

import math
import random
import statistics

MONTH_S = 30 * 86400.0


def _alarms(d: float, h: float, n: int, rng: random.Random) -> int:
    """False alarms of the standardized CUSUM (increments N(-d^2/2, d^2)) over n null samples."""
    s, count, mean = 0.0, 0, -d * d / 2
    for _ in range(n):
        s = max(0.0, s + rng.gauss(mean, d))
        if s > h:
            count, s = count + 1, 0.0
    return count


def threshold(d: float, per_month: float, interval_s: float, seed: int = 1) -> float:
    """The h that gives `per_month` false alarms per target-month (bisection on simulated months)."""
    months = 40
    n = round(months * MONTH_S / interval_s)
    lo, hi = 0.5, 30.0
    for _ in range(22):
        mid = (lo + hi) / 2
        rate = _alarms(d, mid, n, random.Random(seed)) / months
        lo, hi = (mid, hi) if rate > per_month else (lo, mid)
    return hi


def floor_delay(sigma: float, interval_s: float = 300.0, factor: float = 2.0, per_month: float = 1.0,
                runs: int = 4000, seed: int = 2) -> float:  # fmt: skip
    """Median delay, in samples after the first shifted one, of the optimal CUSUM for a `factor` shift."""
    d = math.log(factor) / sigma
    h = threshold(d, per_month, interval_s)
    rng = random.Random(seed)
    delays = []
    for _ in range(runs):
        s = 0.0
        for _ in range(200):  # the resting state before the shift: a stretch of null samples
            s = max(0.0, s + rng.gauss(-d * d / 2, d))
            if s > h:
                s = 0.0
        k = 0
        while True:
            s = max(0.0, s + rng.gauss(d * d / 2, d))
            if s > h:
                break
            k += 1
        delays.append(k)
    return statistics.median(delays)


if __name__ == "__main__":
    for sigma in (0.1, 0.2, 0.3, 0.4):
        print(f"sigma {sigma:g}: optimal CUSUM 2x delay p50 {floor_delay(sigma):g} samples (5 min, 1 false/month)")
