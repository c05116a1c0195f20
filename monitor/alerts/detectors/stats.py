"""Robust statistics for the detectors: pure functions and one bounded window.

Everything here works on plain floats and lists so detector state stays
JSON-able (the live service keeps it in the database across restarts).
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from collections.abc import Iterable, Sequence

SQRT_2PI = math.sqrt(2 * math.pi)
# IQR of a normal distribution in standard deviations: sigma = IQR / 1.349.
IQR_PER_SIGMA = 1.3489795


def median(values: Iterable[float]) -> float:
    s = sorted(values)
    if not s:
        raise ValueError("median of no values")
    return median_sorted(s)


def median_sorted(s: Sequence[float]) -> float:
    n = len(s)
    return (s[(n - 1) // 2] + s[n // 2]) / 2


def quantile_sorted(s: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default, `statistics.quantiles` inclusive)."""
    if not s:
        raise ValueError("quantile of no values")
    pos = (len(s) - 1) * min(max(q, 0.0), 1.0)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), exact (n is a window of probes: small)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    # Sum the shorter tail in log space so n in the thousands neither overflows nor underflows.
    log_p, log_q = math.log(p), math.log1p(-p)

    def term(i: int) -> float:
        return math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q)

    if k > n * p:
        return min(1.0, sum(term(i) for i in range(k, n + 1)))
    return max(0.0, 1.0 - sum(term(i) for i in range(k)))


def clipped_abs_mean_factor(clip: float) -> float:
    """1 / E[min(|Z|, clip)] for a standard normal Z.

    The detectors estimate the noise scale as a running mean of |residual|
    clipped at `clip` scales, so one spike moves it by a bounded amount; this
    factor turns that mean back into a standard deviation.
    """
    tail = 0.5 * math.erfc(clip / math.sqrt(2))
    phi = math.exp(-clip * clip / 2) / SQRT_2PI
    return 1.0 / (math.sqrt(2 / math.pi) - 2 * (phi - clip * tail))


def mixture_llr(d: float, mus: Sequence[float], scale: float, spike_weight: float, spike_density: float) -> list[float]:
    """Log-likelihood ratios of "level shifted by mu" against "no shift", for each mu.

    The noise model is a normal of sd `scale` contaminated, with probability
    `spike_weight`, by spikes above the level, spread thinly (`spike_density`
    per unit of log) over a wide range. Against a plain normal the ratio grows
    with d^2 and one 10x spike would look like overwhelming evidence; under
    the mixture a value far above every hypothesis is explained as a spike and
    contributes almost nothing, and no single value can contribute more than
    log(normal peak / spike floor) — so it takes several samples that agree on
    one level to move the statistic, which is what a level shift is. Spikes
    are one-sided (a slow response, not a fast one), so values below the
    baseline keep their full weight as evidence that nothing shifted up.
    """
    log_norm = math.log((1.0 - spike_weight) / (scale * SQRT_2PI))
    log_floor = math.log(spike_weight * spike_density)
    inv = 1.0 / (2.0 * scale * scale)

    def log_density(z: float) -> float:  # z = d - hypothesised level
        gauss = log_norm - z * z * inv
        if z <= 0:
            return gauss
        top = max(gauss, log_floor)  # log(e^a + e^b) without underflow however far the value is
        return top + math.log(math.exp(gauss - top) + math.exp(log_floor - top))

    null = log_density(d)
    return [log_density(d - mu) - null for mu in mus]


def spike_mixture_logpdf(z: float, scale: float, spike_weight: float, spike_density: float) -> float:
    """Log density of a deviation `z` under `mixture_llr`'s noise model: a normal of sd `scale`, plus
    one-sided spikes above it spread thinly (`spike_density` per unit of log) with weight `spike_weight`."""
    gauss = math.log((1.0 - spike_weight) / (scale * SQRT_2PI)) - z * z / (2.0 * scale * scale)
    if z <= 0:
        return gauss
    floor = math.log(spike_weight * spike_density)
    top = max(gauss, floor)
    return top + math.log(math.exp(gauss - top) + math.exp(floor - top))


class SortedWindow:
    """Values in arrival order and in sorted order, for O(1) median and quartiles.

    `max_len` bounds memory whatever the sampling rate.
    """

    __slots__ = ("items", "max_len", "sorted")

    def __init__(self, max_len: int, items: Iterable[tuple[float, float]] = ()) -> None:
        self.max_len = max_len
        self.items: deque[tuple[float, float]] = deque()
        self.sorted: list[float] = []
        for ts, x in items:
            self.add(ts, x)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, ts: float, x: float) -> None:
        self.items.append((ts, x))
        bisect.insort(self.sorted, x)
        if len(self.items) > self.max_len:
            self.pop_oldest()

    def pop_oldest(self) -> tuple[float, float]:
        ts, x = self.items.popleft()
        del self.sorted[bisect.bisect_left(self.sorted, x)]
        return ts, x

    def prune(self, before_ts: float, keep: int) -> None:
        """Drop values older than `before_ts`, but keep at least `keep` of them."""
        while len(self.items) > keep and self.items[0][0] < before_ts:
            self.pop_oldest()

    def clear(self) -> None:
        self.items.clear()
        self.sorted.clear()

    def median(self) -> float:
        return median_sorted(self.sorted)

    def iqr_sigma(self) -> float:
        s, n = self.sorted, len(self.sorted)
        return (s[(3 * n) // 4] - s[n // 4]) / IQR_PER_SIGMA

    def drift(self) -> float:
        """|median of the newer half - median of the older half|: how much the level moved across the window."""
        xs = [x for _, x in self.items]
        half = len(xs) // 2
        if half < 2:
            return 0.0
        return abs(median(xs[half:]) - median(xs[:half]))

    def to_state(self) -> list[list[float]]:
        return [[ts, x] for ts, x in self.items]

    @classmethod
    def from_state(cls, max_len: int, state: Iterable[Sequence[float]]) -> SortedWindow:
        return cls(max_len, ((float(ts), float(x)) for ts, x in state))
