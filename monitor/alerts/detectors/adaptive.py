"""The regression detector's adaptive chart: a shift size and its noise estimated from the data.

The fixed bank of charts (regression.py) tests shift sizes 1.3x apart. On a
quiet series (noise 2%) a new level between two of them sits several noise
widths from both, and the spike-tolerant noise model gives a sample that far
from every hypothesis almost no evidence; the discount for correlated noise
then divides what is left by up to 3. A clean 2.15x step on such a series
took 15 samples to page, where a plain CUSUM paged after 3.

This chart carries its own models instead, each one-step-ahead so that the
sum is a true sequential likelihood ratio (Lorden and Pollak's adaptive
CUSUM: under no shift exp(sum) is a martingale, so a threshold of h nats
still bounds false alarms near e^-h a sample, however the estimates move):

- no shift: the residual follows the baseline's AR(1) noise: predicted
  as phi x the previous residual (clipped at 3 sds, so a spike or the shift
  itself does not drag the prediction), innovation sd scale x sqrt(1 - phi^2),
  with the same one-sided spikes as the bank. Correlated noise is in the
  model, not in a discount of the evidence;
- shifted: a level at the median of the samples of this run so far (at
  least min_change), with a noise sd from their spread (never below the
  baseline's nor a tenth of the shift, at most a third of it): a slower
  provider often jitters more, and a level that wobbles +-7% around 2.15x
  is still one level.

A run starts on a sample at least min_change above the baseline; that
sample only sets the hypothesis. The chart adds each later sample's log
likelihood ratio and the run ends when it falls back to zero.
"""

from __future__ import annotations

import math
from typing import Any

from monitor.alerts.detectors.stats import median, spike_mixture_logpdf

RUN_SAMPLES = 24  # newest samples of a run the level and spread are taken from
PREDICT_CLIP = 3.0  # the no-shift prediction uses the previous residual clipped at this many sds
MAX_NOISE_SHARE = 1.0 / 3.0  # the shifted level's sd is at most this share of the shift
# ... and at least this share: two or three samples say little about a spread, and a slower provider's
# level wobbles (+-7% around a 2.15x step on a quiet real series, where the noise before was 2%).
MIN_NOISE_SHARE = 0.1


class AdaptiveChart:
    __slots__ = ("prev", "run", "start_ts", "value")

    def __init__(self) -> None:
        self.value = 0.0
        self.run: list[float] = []  # residuals of the current run, oldest first
        self.start_ts: float | None = None
        self.prev: float | None = None  # the previous evaluated residual

    def active(self) -> bool:
        return bool(self.run)

    def hypothesis(self, floor: float, scale: float) -> tuple[float, float]:
        """(shift, its noise sd) from the run so far."""
        level = max(floor, median(self.run))
        if len(self.run) >= 3:
            spread = 1.4826 * median([abs(r - level) for r in self.run])
        elif len(self.run) == 2:
            spread = abs(self.run[1] - self.run[0]) / math.sqrt(2.0)
        else:
            spread = scale
        return level, min(max(scale, spread, MIN_NOISE_SHARE * level), max(scale, MAX_NOISE_SHARE * level))

    def update(self, d: float, ts: float, floor: float, scale: float, phi: float, spike_weight: float,
               spike_density: float) -> float:  # fmt: skip
        """Add the residual `d` (log value minus the baseline level); returns the chart's value."""
        prev, self.prev = self.prev, d
        if self.run:
            mu, sd = self.hypothesis(floor, scale)
            predicted = 0.0 if prev is None else phi * max(-PREDICT_CLIP * scale, min(PREDICT_CLIP * scale, prev))
            innovation_sd = scale * math.sqrt(1.0 - phi * phi)
            null = spike_mixture_logpdf(d - predicted, innovation_sd, spike_weight, spike_density)
            shifted = spike_mixture_logpdf(d - mu, sd, spike_weight, spike_density)
            self.value = max(0.0, self.value + shifted - null)
            if self.value > 0.0:
                self.run = [*self.run, d][-RUN_SAMPLES:]
                return self.value
            self.run, self.start_ts = [], None
        if d >= floor:
            self.run, self.start_ts = [d], ts
        return self.value

    def reset(self) -> None:
        self.value, self.run, self.start_ts = 0.0, [], None

    def to_state(self) -> list[Any]:
        return [self.value, list(self.run), self.start_ts, self.prev]

    def load(self, state: Any) -> None:
        """From `to_state`; anything else (a checkpoint written before the chart existed) starts it afresh."""
        try:
            value, run, start_ts, prev = state
            self.value, self.run = float(value), [float(r) for r in run][-RUN_SAMPLES:]
            self.start_ts = None if start_ts is None else float(start_ts)
            self.prev = None if prev is None else float(prev)
        except (TypeError, ValueError):
            self.reset()
            self.prev = None
