"""The regression detector's short-term noise: a noisy spell read from neighbouring samples' differences.

The detector's noise scale (baseline.py) is a running mean over hours: it
follows a provider that grows noisier for good, not a spell where the
noise doubles for an hour or two and calms again. In such a spell the
upper half of the samples lands two or three old noise widths above the
level, and the charts read it as a shift. On the generators whose noise
volatility clusters (`synthetic_d`, `synthetic_f`) most false alarms
began that way.

A difference between neighbouring residuals barely sees a shift: a step
moves one difference, and the median of the newest `SAMPLES` ignores it;
a noisy spell widens every difference at once. For AR(1) noise with
lag-1 autocorrelation phi and sd s, a difference has sd s * sqrt(2(1 - phi)),
so the noise now is median |difference| / (0.6745 * sqrt(2(1 - phi))), with
phi the residuals' own estimate up to `MAX_PHI` (the evidence discount's
cap of 0.5 would read noise of phi 0.85 1.8x too narrow). The
detector weighs each sample against max(long scale, that / `SLACK`):
a spell raises the scale within a few samples; ordinary noise, whose
estimate from 24 differences wobbles by about a fifth, seldom passes the
slack, so a shift on quiet noise is judged as before. The detector stops
feeding it while a shift may be building or is being judged, as it does
for the long scale: a ramp or a wider shifted level is not noise.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from monitor.alerts.detectors.stats import median

SAMPLES = 24  # differences the spell is read from: two hours at 5-minute sampling
# On `synthetic_d`, `_e` and `_f` (1.0, 1.25): 1.0 also took `synthetic_e` to 0.58-0.83 false alarms a
# target-month but cost recall (F1 0.815 -> 0.778) and missed a clean 2x step on the tune generators.
SLACK = 1.25
WARM = 8  # differences before the spell says anything
MAD_NORMAL = 0.6745  # median |z| for z a standard normal
MAX_PHI = 0.9  # keeps 1 - phi away from 0


class NoisySpell:
    __slots__ = ("diffs", "prev")

    def __init__(self) -> None:
        self.diffs: deque[float] = deque(maxlen=SAMPLES)
        self.prev: float | None = None  # the previous residual

    def push(self, residual: float) -> None:
        """A residual (log value minus the expected level) that counts as noise."""
        if self.prev is not None:
            self.diffs.append(abs(residual - self.prev))
        self.prev = residual

    def skip(self, residual: float) -> None:
        """A residual that may belong to a shift: the next difference starts from it, none is taken."""
        self.prev = residual

    def scale(self, long_scale: float, phi: float) -> float:
        """The scale to weigh the newest sample against: the long one, or the spell's when it is wider."""
        if len(self.diffs) < WARM:
            return long_scale
        now = median(self.diffs) / (MAD_NORMAL * math.sqrt(2.0 * (1.0 - min(max(phi, 0.0), MAX_PHI))))
        return max(long_scale, now / SLACK)

    def to_state(self) -> list[Any]:
        return [list(self.diffs), self.prev]

    def load(self, state: Any) -> None:
        """From `to_state`; anything else (a checkpoint from before the spell existed) starts it empty."""
        self.diffs.clear()
        self.prev = None
        try:
            diffs, prev = state
            self.diffs.extend(float(d) for d in diffs)
            self.prev = None if prev is None else float(prev)
        except (TypeError, ValueError):
            self.diffs.clear()
            self.prev = None
