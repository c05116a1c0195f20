"""The noise's daily shape: how much wider a series' residuals are at each hour of the day than over the day.

A provider's latency is noisier at its peak traffic hours: queues form and
drain, requests land on busier replicas. The regression detector's noise
scale (baseline.py) is a running mean over about a day and a half, so at
the peak it is the day's average, too narrow by the peak's excess; its
noisy-spell scale (spell.py) only acts past a slack of 1.25. In between,
every sample at the peak is weighed against too narrow a noise, and
1.25x too narrow a noise makes a sample look 1.56x as strong as evidence.

Here: a running mean of the clipped |residual| per hour of the day (the
same residuals and clip as the long scale), and the ratio of an hour's
mean, smoothed with its neighbours, to the mean over the hours. The
detector widens its scale by that ratio where it is above 1, never
narrows it (a quiet hour judged against a narrower noise pages on
noise), and only by what is beyond an hour's own wobble (`MARGIN_SE`). An
hour says nothing until it has `WARM` residuals.
"""

from __future__ import annotations

import math
from typing import Any

HOURS = 24
HOUR_S = 3600.0
MEMORY = 120  # residuals an hour's running mean remembers: ten days at 5-minute sampling, two at 1-minute
WARM = 24  # residuals before an hour says anything: two days at 5-minute sampling
# How many of an hour's standard errors of wobble are discounted (see ratio). On `synthetic_e`, `_f`, `_g`,
# `_h`: 0 took the most false alarms away (`synthetic_h` 114 -> 79 in 36 target-months) but, widening
# random hours, made the 2x delay of 5-minute tps on the tune generator 3 -> 4 samples; 2 gave back most
# of `synthetic_h`'s gain (95); 1 kept the delay and took `synthetic_h` to 93.
MARGIN_SE = 1.0
WOBBLE = 0.46  # sd of an hour's smoothed mean of n residuals, times sqrt(n), over the day's mean
NEIGHBOUR = 0.25  # weight of each neighbouring hour in the smoothed mean (0.5 for the hour itself)


class HourlyNoise:
    __slots__ = ("counts", "means", "warm")

    def __init__(self) -> None:
        self.means = [0.0] * HOURS
        self.counts = [0] * HOURS
        self.warm = False  # every hour has WARM residuals (counts only grow, so once true it stays)

    def add(self, ts: float, abs_residual: float) -> None:
        """A clipped |residual| that taught the long noise scale."""
        hour = _hour(ts)
        self.counts[hour] += 1
        self.means[hour] += (abs_residual - self.means[hour]) / min(self.counts[hour], MEMORY)

    def ratio(self, ts: float) -> float:
        """How much wider the noise is at this hour than over the day (>= 1; 1 until the day is learned)."""
        if not self.warm:
            self.warm = min(self.counts) >= WARM
            if not self.warm:
                return 1.0
        day = sum(self.means) / HOURS
        if day <= 0.0:
            return 1.0
        hour = _hour(ts)
        smoothed = (1.0 - 2 * NEIGHBOUR) * self.means[hour] + NEIGHBOUR * (
            self.means[hour - 1] + self.means[(hour + 1) % HOURS]
        )
        # An hour's mean of n residuals wobbles by about WOBBLE / sqrt(n) of the day's (|z| varies by 0.75 of
        # its mean; the smoothing keeps 0.375 of the variance): only the excess beyond MARGIN_SE of those
        # widens the scale, so a series whose noise has no daily shape is not widened at random hours.
        n = min(self.counts[hour - 1], self.counts[hour], self.counts[(hour + 1) % HOURS], MEMORY)
        return max(1.0, smoothed / day - MARGIN_SE * WOBBLE / math.sqrt(n))

    def to_state(self) -> list[Any]:
        return [list(self.means), list(self.counts)]

    def load(self, state: Any) -> None:
        """From `to_state`; anything else (a checkpoint from before it existed) starts it empty."""
        try:
            means, counts = state
            if len(means) != HOURS or len(counts) != HOURS:
                raise ValueError("not 24 hours")
            self.means = [float(m) for m in means]
            self.counts = [int(c) for c in counts]
        except (TypeError, ValueError):
            self.means, self.counts = [0.0] * HOURS, [0] * HOURS
        self.warm = False


def _hour(ts: float) -> int:
    return int(ts // HOUR_S) % HOURS
